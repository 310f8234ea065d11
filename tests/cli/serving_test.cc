// Tests for the serving metrics (serving/): the vLLM results reader, the statistics as numpy and
// vLLM compute them, SLOs and goodput, bad input, and `sightline analyze --requests`.
// tests/data/serving/vllm_detailed_small.json was written by make_vllm_detailed.py beside it, whose
// aggregate fields come from numpy with vLLM's formulas: the independent computation we match.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "analyses/findings/findings.h"
#include "analyses/serving/serving_diff.h"
#include "analyses/serving/serving_metrics.h"
#include "base/file_io.h"
#include "importers/inputs.h"
#include "importers/serving_results/request_log.h"
#include "reporters/reporter.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

const std::string kSample =
    std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/serving/vllm_detailed_small.json";

TEST(ServingMetrics, VllmResultsGiveVllmsOwnFigures) {
  StatusOr<RequestResults> r = ReadRequestResults(kSample);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests.size(), 40u);
  ServingMetricsOptions o;
  o.slo.ttft_ms = 300;  // the goodput the file holds was computed with these SLOs
  o.slo.tpot_ms = 40;
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->completed, 38);
  EXPECT_EQ(m->failed, 2);
  EXPECT_EQ(m->tpot.n, 36);  // two answers of one token have no TPOT
  EXPECT_EQ(m->good_requests, 34);
  EXPECT_DOUBLE_EQ(m->slo_attainment_pct, 85.0);
  // Every mean, median, std, percentile (50, 90, 95, 99, 99.9) of TTFT, TPOT, ITL, E2EL and the
  // four throughputs: 4 x 8 + 4 = 36 figures, all equal to numpy's.
  EXPECT_EQ(m->checks.size(), 36u);
  EXPECT_EQ(m->mismatches, 0);
  for (const ReportedCheck& c : m->checks) {
    EXPECT_NEAR(c.computed, c.reported, 1e-9 * std::max(1.0, std::fabs(c.reported))) << c.key;
  }
  EXPECT_NEAR(m->ttft.p99_ns / 1e6, r->reported.at("p99_ttft_ms"), 1e-9);
  EXPECT_NEAR(m->itl.p999_ns / 1e6, r->reported.at("p99.9_itl_ms"), 1e-9);
}

TEST(ServingMetrics, WithoutTheSameSlosGoodputIsNotCompared) {
  StatusOr<RequestResults> r = ReadRequestResults(kSample);
  ASSERT_TRUE(r.ok());
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->slo_set);
  EXPECT_EQ(m->checks.size(), 35u);
  EXPECT_EQ(m->mismatches, 0);
}

TEST(ServingMetrics, AnEditedAggregateIsAMismatch) {
  StatusOr<RequestResults> r = ReadRequestResults(kSample);
  ASSERT_TRUE(r.ok());
  r->reported["p99_ttft_ms"] += 1.0;
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->mismatches, 1);
}

TEST(ServingMetrics, StatisticsAreNumpys) {
  const LatencyStats s = ComputeLatencyStats({4, 1, 3, 2});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.mean_ns, 2.5);
  EXPECT_DOUBLE_EQ(s.std_ns, std::sqrt(1.25));  // population (np.std), not n - 1
  EXPECT_DOUBLE_EQ(s.p50_ns, 2.5);
  EXPECT_DOUBLE_EQ(s.p90_ns, 3.7);  // np.percentile([1,2,3,4], 90)
  EXPECT_DOUBLE_EQ(s.min_ns, 1);
  EXPECT_DOUBLE_EQ(s.max_ns, 4);
  EXPECT_EQ(ComputeLatencyStats({}).n, 0);
}

TEST(ServingMetrics, SloParsing) {
  StatusOr<SloOptions> a = ParseSlo("ttft=300,tpot=40");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a->ttft_ms, 300);
  EXPECT_EQ(*a->tpot_ms, 40);
  EXPECT_FALSE(a->e2el_ms.has_value());
  StatusOr<SloOptions> b = ParseSlo("ttft:300 e2el:2000");  // vLLM's --goodput spelling
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b->e2el_ms, 2000);
  EXPECT_FALSE(ParseSlo("itl=30").ok());
  EXPECT_FALSE(ParseSlo("ttft=-1").ok());
  EXPECT_FALSE(ParseSlo("ttft=abc").ok());
  EXPECT_FALSE(ParseSlo("ttft").ok());
  EXPECT_FALSE(ParseSlo("").ok());
}

TEST(ServingMetrics, BadFilesSayWhatIsWrong) {
  auto message = [](std::string_view json) {
    StatusOr<RequestResults> r = ParseRequestResults(json, "r.json");
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(message("{\"duration\": 1").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(message("{\"ttfts\": []}").find("duration"), std::string::npos);
  // Neither per-request lists nor aggregates: the message says what a vLLM file holds.
  EXPECT_NE(message("{\"duration\": 1, \"model_id\": \"m\"}").find("--save-detailed"),
            std::string::npos);
  const std::string lists =
      "\"itls\": [[0.1]], \"latencies\": [1.0], \"input_lens\": [3], \"output_lens\": [2]";
  EXPECT_NE(message("{\"duration\": 1, \"ttfts\": [0.1, 0.2], " + lists + "}").find("entries"),
            std::string::npos);
  EXPECT_NE(message("{\"duration\": 1, \"ttfts\": [\"x\"], " + lists + "}").find("\"ttfts\"[0]"),
            std::string::npos);
  EXPECT_NE(message("{\"duration\": 1, \"ttfts\": [-0.5], " + lists + "}").find("non-negative"),
            std::string::npos);
  StatusOr<RequestResults> ok =
      ParseRequestResults("{\"duration\": 1, \"ttfts\": [0.1], " + lists + "}", "r.json");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->requests[0].success);  // no "errors" list: every request counts as completed
  // An optional list that is there has an entry per request: an "errors" list one short would
  // count a failed request as completed; "start_times" and "latencies" likewise.
  for (const char* key : {"errors", "start_times", "latencies"}) {
    std::string two =
        "{\"duration\": 1, \"ttfts\": [0.1, 0.2], \"itls\": [[0.1], [0.1]], "
        "\"input_lens\": [3, 3], \"output_lens\": [2, 2], \"" +
        std::string(key) + "\": [" + (std::string(key) == "errors" ? "\"\"" : "1.0") + "]}";
    const std::string m = message(two);
    EXPECT_NE(m.find(std::string("\"") + key + "\" has 1 entries, other per-request arrays 2"),
              std::string::npos)
        << m;
  }
}

// A request whose last token comes before its first (E2E latency below TTFT) is impossible: it is
// counted and left out (its TPOT was negative); token counts that overflow int64 are an error, not
// "-38 output tokens".
TEST(ServingMetrics, ImpossibleRequestsAndOverflowingCounts) {
  RequestResults r;
  r.path = "r.json";
  r.duration_s = 10;
  RequestRecord good;
  good.ttft_s = 0.1;
  good.latency_s = 1.1;
  good.input_tokens = 10;
  good.output_tokens = 11;
  RequestRecord bad = good;
  bad.latency_s = 0.05;  // before its first token
  r.requests = {good, bad, good};
  StatusOr<ServingMetrics> m = ComputeServingMetrics(r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->completed, 2);
  EXPECT_EQ(m->impossible, 1);
  EXPECT_EQ(m->tpot.n, 2);
  EXPECT_NEAR(m->tpot.min_ns, 0.1e9, 1);  // (1.1 - 0.1) / 10 s; no negative TPOT
  Report report;
  AddServingSection(r, *m, report);
  bool noted = false;
  for (const Section& sec : report.sections) {
    for (const std::string& n : sec.notes) noted |= n.find("impossible") != std::string::npos;
  }
  EXPECT_TRUE(noted);

  RequestRecord huge = good;
  huge.output_tokens = std::numeric_limits<int64_t>::max();
  r.requests = {good, huge};
  StatusOr<ServingMetrics> over = ComputeServingMetrics(r, {});
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("more than 2^63"), std::string::npos);
}

// vLLM without --save-detailed, and SGLang without --output-details, keep only the aggregates:
// shown as written (durations from "_ms" keys in ns), with what per-request records would add.
TEST(ServingMetrics, AggregatesOnlyFilesAreShownAsWritten) {
  StatusOr<RequestResults> v = ParseRequestResults(
      "{\"backend\": \"vllm\", \"model_id\": \"m\", \"completed\": 8, \"mean_ttft_ms\": 215.5, "
      "\"request_throughput\": 5.18, \"request_goodput\": null, \"label\": null}",
      "agg.json");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->aggregates_only);
  EXPECT_EQ(v->duration_s, 0);  // vLLM's nightly files have no "duration": none is made up
  ASSERT_EQ(v->aggregates.size(), 3u);
  std::map<std::string, RequestResults::Aggregate> by_name;
  for (const RequestResults::Aggregate& a : v->aggregates) by_name[a.name] = a;
  EXPECT_EQ(by_name["mean_ttft_ms"].unit, Unit::kDurationNs);
  EXPECT_DOUBLE_EQ(by_name["mean_ttft_ms"].value, 215.5e6);
  EXPECT_DOUBLE_EQ(by_name["completed"].value, 8);
  ASSERT_EQ(v->not_derived.size(), 1u);
  EXPECT_NE(v->not_derived[0].find("--save-detailed"), std::string::npos);

  const std::string dir = testing::MakeTempDir();
  const std::string sglang = dir + "/sglang.jsonl";
  ASSERT_TRUE(
      WriteFileAtomically(
          sglang,
          "{\"backend\": \"sglang\", \"request_rate\": Infinity, \"sharegpt_output_len\": null, "
          "\"duration\": 2.5, "
          "\"server_info\": {\"port\": 30000}, \"mean_e2e_latency_ms\": 900.0, "
          "\"p99_ttft_ms\": 80.0, \"completed\": 50}\n")
          .ok());
  StatusOr<RequestResults> s = ReadRequestResults(sglang);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->aggregates_only);
  EXPECT_EQ(s->format, "sglang-bench-serving");
  EXPECT_DOUBLE_EQ(s->duration_s, 2.5);
  // duration, mean_e2e_latency_ms, p99_ttft_ms, completed; not Infinity, not server_info's port.
  EXPECT_EQ(s->aggregates.size(), 4u);
  testing::CliResult r = testing::RunSightline("analyze --requests '" + sglang + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("p99_ttft_ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--output-details"), std::string::npos) << r.out;
}

// The published aggregates-only files of ../shared/traces/realworld (vLLM 0.25.1, SGLang 0.5.5).
TEST(ServingMetrics, RealAggregatesOnlyFiles) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  for (const char* name : {"/realworld/vllm/er0080_bench_serve_v0.25.1.json",
                           "/realworld/sglang/tonyli15_agg_n50_in128_out64_c8.jsonl"}) {
    const std::string path = dir + name;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
    StatusOr<RequestResults> r = ReadRequestResults(path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->aggregates_only) << name;
    bool ttft = false;
    for (const RequestResults::Aggregate& a : r->aggregates) {
      if (a.name == "mean_ttft_ms") {
        ttft = true;
        // vLLM: 215.536 ms; SGLang: as written in its file.
        EXPECT_GT(a.value, 1e6) << name;
      }
    }
    EXPECT_TRUE(ttft) << name;
    testing::CliResult cli = testing::RunSightline("analyze --requests '" + path + "'");
    EXPECT_EQ(cli.exit_code, 0) << cli.err;
  }
}

// vLLM wrote no "latencies" before 2026-08: E2E latency is TTFT + the sum of the ITLs (vLLM's own
// definition), said in a note.
TEST(ServingMetrics, VllmWithoutLatenciesUsesTtftPlusItls) {
  StatusOr<RequestResults> r = ParseRequestResults(
      "{\"duration\": 2, \"ttfts\": [0.1, 0.2], \"itls\": [[0.01, 0.02], []], "
      "\"input_lens\": [3, 4], \"output_lens\": [3, 1], \"errors\": [\"\", \"\"]}",
      "r.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->requests.size(), 2u);
  EXPECT_DOUBLE_EQ(r->requests[0].latency_s, 0.1 + 0.01 + 0.02);
  EXPECT_DOUBLE_EQ(r->requests[1].latency_s, 0.2);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("TTFT + the sum of the ITLs"), std::string::npos);
}

// A file from the field (../shared/traces/realworld/README.md): vLLM benchmark_serving.py of
// 2025-04, gzip'd, with ttfts, itls, input_lens, output_lens and errors but no latencies. Every
// figure it states is reproduced.
TEST(ServingMetrics, RealVllmFileWithoutLatencies) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string path = dir + "/realworld/vllm/surajssd_llama33_70b_tp8_qps_04.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  StatusOr<RequestResults> r = ReadRequestResults(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests.size(), 200u);
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->completed, 200);
  EXPECT_GE(m->checks.size(), 12u);  // mean/median/std/p99 of TTFT, TPOT, ITL; throughputs
  EXPECT_EQ(m->mismatches, 0);
  for (const ReportedCheck& c : m->checks) {
    EXPECT_NEAR(c.computed, c.reported, 1e-6 * std::max(1.0, std::fabs(c.reported))) << c.key;
  }
}

// tests/data/serving/request_log_small.jsonl: a arrives at 1.000 s with 120 prompt tokens, is
// scheduled at 1.002, emits 1, 2, 1 tokens at 1.050, 1.070, 1.090 (events out of order in the
// file), finishes at 1.091; b arrives at 1.001, waits to 1.060, emits at 1.100, is preempted, emits
// again at 1.200, finishes at 1.201; c ends with an error; d never finishes.
TEST(RequestLog, ServerSideLatencyFromTheInstrumentLibrarysLog) {
  const std::string path =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/serving/request_log_small.jsonl";
  StatusOr<RequestResults> r = ReadRequestResults(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, "sightline-request-log");
  ASSERT_EQ(r->requests.size(), 4u);
  const RequestRecord& a = r->requests[0];
  EXPECT_EQ(a.id, "a");
  EXPECT_TRUE(a.success);
  EXPECT_EQ(a.input_tokens, 120);
  EXPECT_EQ(a.output_tokens, 4);
  EXPECT_NEAR(a.ttft_s, 0.050, 1e-12);
  EXPECT_NEAR(a.latency_s, 0.091, 1e-12);
  ASSERT_EQ(a.itl_s.size(), 2u);
  EXPECT_NEAR(a.itl_s[0], 0.020, 1e-12);
  EXPECT_NEAR(a.itl_s[1], 0.020, 1e-12);
  EXPECT_NEAR(a.queue_s, 0.002, 1e-12);
  EXPECT_EQ(a.first_iteration, 10);
  EXPECT_EQ(a.last_iteration, 12);
  const RequestRecord& b = r->requests[1];
  EXPECT_EQ(b.preemptions, 1);
  EXPECT_NEAR(b.queue_s, 0.059, 1e-12);
  EXPECT_NEAR(b.itl_s.at(0), 0.100, 1e-12);
  EXPECT_FALSE(r->requests[2].success);
  EXPECT_EQ(r->requests[2].error, "finished with an error");
  EXPECT_FALSE(r->requests[3].success);
  EXPECT_EQ(r->requests[3].error, "not finished in the log");
  EXPECT_NEAR(r->duration_s, 0.201, 1e-12);

  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->completed, 2);
  EXPECT_EQ(m->failed, 2);
  EXPECT_EQ(m->preemptions, 1);
  EXPECT_EQ(m->queue.n, 2);
  EXPECT_DOUBLE_EQ(m->tpot.p50_ns, (41e6 / 3 + 101e6) / 2);  // a: 41 ms / 3, b: 101 ms / 1
  EXPECT_TRUE(m->checks.empty());  // the log holds no aggregates to compare against
}

TEST(RequestLog, BadLinesNameTheLine) {
  EXPECT_TRUE(
      LooksLikeRequestLog("\n{\"schema_version\":1,\"request\":\"a\",\"event\":\"arrived\"}\n"));
  EXPECT_FALSE(LooksLikeRequestLog("{\"duration\": 1}"));
  const std::string head =
      "{\"schema_version\":1,\"request\":\"a\",\"event\":\"arrived\",\"monotonic_ns\":1}\n";
  StatusOr<RequestResults> r =
      ParseRequestLog(head +
                          "{\"schema_version\":1,\"request\":\"a\",\"event\":\"exploded\","
                          "\"monotonic_ns\":2}\n",
                      "r.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("r.jsonl:2: unknown event \"exploded\""), std::string::npos)
      << r.status().message();
  r = ParseRequestLog(head + "{\"schema_version\":1,\"request\":\"a\",\"event\":\"tokens\"}\n",
                      "r.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("monotonic_ns"), std::string::npos);
  r = ParseRequestLog(head + "not json\n", "r.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("r.jsonl:2"), std::string::npos);
}

// A decode loop of 100 iterations: 4 requests stream one token per iteration; every 10th iteration
// also runs a new request's prefill and takes 80 ms instead of 20 ms.
std::string PrefillStallLog() {
  std::string log;
  auto line = [&log](const std::string& id, const char* event, int64_t ns, int64_t it,
                     int64_t tokens) {
    log += "{\"schema_version\":1,\"request\":\"" + id + "\",\"event\":\"" + event +
           "\",\"monotonic_ns\":" + std::to_string(ns) +
           (it >= 0 ? ",\"iteration\":" + std::to_string(it) : std::string()) +
           (tokens > 0 ? ",\"tokens\":" + std::to_string(tokens) : std::string()) + "}\n";
  };
  int64_t t = 0;
  for (int r = 0; r < 4; ++r) {
    line("r" + std::to_string(r), "arrived", 0, -1, 0);
    line("r" + std::to_string(r), "scheduled", 0, 0, 0);
  }
  for (int it = 1; it <= 100; ++it) {
    const bool prefill = it % 10 == 0;
    if (prefill) {
      line("p" + std::to_string(it), "arrived", t, -1, 0);
      line("p" + std::to_string(it), "scheduled", t, it, 0);
    }
    t += prefill ? 80'000'000 : 20'000'000;
    for (int r = 0; r < 4; ++r) line("r" + std::to_string(r), "tokens", t, it, 1);
    if (prefill) {
      line("p" + std::to_string(it), "tokens", t, it, 1);
      line("p" + std::to_string(it), "finished", t, it, 0);
    }
  }
  for (int r = 0; r < 4; ++r) line("r" + std::to_string(r), "finished", t, 100, 0);
  return log;
}

TEST(PrefillInterference, GapsAcrossAPrefillMakeTheItlTail) {
  StatusOr<RequestResults> r = ParseRequestLog(PrefillStallLog(), "stall.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->prefill_iterations.size(), 11u);  // iteration 0 and every 10th
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  const PrefillInterference& pi = m->prefill;
  ASSERT_TRUE(pi.known);
  EXPECT_EQ(pi.with_prefill.n, 40);  // 4 streams x 10 prefill iterations
  EXPECT_EQ(pi.without.n, 4 * 99 - 40);
  EXPECT_DOUBLE_EQ(pi.with_prefill.p99_ns, 80e6);
  EXPECT_DOUBLE_EQ(pi.without.p99_ns, 20e6);
  EXPECT_EQ(pi.tail_gaps, pi.tail_gaps_with_prefill);
  EXPECT_DOUBLE_EQ(pi.excess_ns, 40 * 60e6);
  std::vector<Finding> findings;
  ASSERT_TRUE(RulePrefillInterference(*m, findings).ok());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "prefill_interference");
  EXPECT_EQ(findings[0].estimated_savings_ns, 2'400'000'000);
}

TEST(PrefillInterference, QuietWhenPrefillsDoNotStall) {
  // The same loop, but the prefill iterations take 20 ms too.
  StatusOr<RequestResults> r = ParseRequestLog(PrefillStallLog(), "x");
  ASSERT_TRUE(r.ok());
  for (RequestRecord& q : r->requests) {
    for (double& g : q.itl_s) g = 0.020;
  }
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  std::vector<Finding> findings;
  ASSERT_TRUE(RulePrefillInterference(*m, findings).ok());
  EXPECT_TRUE(findings.empty());
}

// The shipped serving-loop sample (examples/samples/README.md): recorded on an H100 with prefills
// beside decodes and planted garbage collections.
TEST(ServingSample, PrefillsAndStallsOfTheShippedLoop) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  StatusOr<RequestResults> r = ReadRequestResults(dir + "serving_loop_h100.requests.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->completed, 64);
  EXPECT_EQ(m->failed, 0);
  EXPECT_EQ(m->output_tokens, 2581);
  EXPECT_EQ(m->itl.n, 2517);
  ASSERT_TRUE(m->prefill.known);
  EXPECT_EQ(m->prefill.with_prefill.n, 184);
  // Measured: a prefill adds ~0.70 ms to a ~0.71 ms decode gap; the planted collections make ~30
  // gaps of ~250 ms that no prefill explains.
  EXPECT_GT(m->prefill.prefill_cost_ns, 0.5 * m->prefill.typical_ns);
  EXPECT_GE(m->prefill.stalls, 20);
  EXPECT_GT(m->prefill.stall_ns, 1e9);
  std::vector<Finding> findings;
  ASSERT_TRUE(RulePrefillInterference(*m, findings).ok());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "prefill_interference");
  // Credited at most the median prefill cost per gap: well below the stalls' total.
  EXPECT_LT(findings[0].estimated_savings_ns, 0.2e9);
}

TEST(ServingCli, RequestsAloneAndErrors) {
  const std::string dir = testing::MakeTempDir();
  testing::CliResult r =
      testing::RunSightline("analyze --requests '" + kSample +
                            "' --slo ttft=300,tpot=40 --format json -o '" + dir + "/s.json'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<std::string> json = ReadFileToString(dir + "/s.json");
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"key\": \"serving\""), std::string::npos);
  EXPECT_NE(json->find("\"goodput_per_s\""), std::string::npos);

  EXPECT_EQ(testing::RunSightline("analyze --slo ttft=1 x.json").exit_code, 2);  // no --requests
  testing::CliResult bad = testing::RunSightline("analyze --requests '" + kSample +
                                                 "' --slo ttft=fast -o '" + dir + "/b.json'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("ttft=fast"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir + "/b.json"));
  testing::CliResult missing =
      testing::RunSightline("analyze --requests /nonexistent/r.json -o '" + dir + "/m.json'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/m.json"));
}

TEST(ServingMetrics, SteadyStateIsTheLongestStretchNearPeakConcurrency) {
  // Five requests sent 0.1 s apart, each 2 s long: 5 are active from 0.4 s to 2.0 s.
  RequestResults r;
  r.path = "synthetic";
  r.duration_s = 2.4;
  for (int i = 0; i < 5; ++i) {
    RequestRecord& q = r.requests.emplace_back();
    q.start_s = 0.1 * i;
    q.ttft_s = 0.1;
    q.latency_s = 2.0;
    q.output_tokens = 20;
    q.itl_s.assign(19, 0.1);  // the last token at start + 2.0
  }
  StatusOr<ServingMetrics> m = ComputeServingMetrics(r, {});
  ASSERT_TRUE(m.ok());
  const SteadyState& st = m->steady;
  ASSERT_TRUE(st.found);
  EXPECT_EQ(st.peak_active, 5);
  EXPECT_EQ(st.threshold, 5);
  EXPECT_NEAR(st.start_s, 0.4, 1e-9);
  EXPECT_NEAR(st.end_s, 2.0, 1e-9);
  EXPECT_EQ(st.requests, 1);  // only the last one started inside
  EXPECT_EQ(st.ttft.n, 1);
  EXPECT_GT(st.itl.n, 50);
}

TEST(ServingDiff, TheGateReadsTheP99LatenciesAndOutputThroughput) {
  ServingMetrics b, a;
  b.ttft.p99_ns = 100e6;
  b.tpot.p99_ns = a.tpot.p99_ns = 20e6;
  b.itl.p99_ns = a.itl.p99_ns = 25e6;
  b.output_throughput = a.output_throughput = 1000;
  a.ttft.p99_ns = 120e6;  // +20%
  Report report;
  report.inputs.resize(2);
  AddServingDiff(b, a, 10.0, report);
  EXPECT_TRUE(report.gate.failed);
  EXPECT_NE(report.gate.message.find("TTFT p99 +20.0%"), std::string::npos) << report.gate.message;
  Report lenient;
  lenient.inputs.resize(2);
  AddServingDiff(b, a, 25.0, lenient);
  EXPECT_FALSE(lenient.gate.failed);
  // Output throughput falling counts as worse; rising does not.
  a.ttft.p99_ns = 100e6;
  a.output_throughput = 800;
  Report slower;
  slower.inputs.resize(2);
  AddServingDiff(b, a, 10.0, slower);
  EXPECT_TRUE(slower.gate.failed);
  EXPECT_NE(slower.gate.message.find("output tokens/s -20.0%"), std::string::npos);
}

TEST(ServingDiff, CliComparesTwoRunsAndRefusesAMix) {
  const std::string log =
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/serving_loop_h100.requests.jsonl";
  // A run against itself: every change is 0, but with 64 requests the intervals of the p99s are
  // wide, so a gate at 0% cannot tell (exit 4) and one beyond the intervals passes.
  testing::CliResult same =
      testing::RunSightline("diff '" + kSample + "' '" + kSample + "' --fail-if-slower 0");
  EXPECT_EQ(same.exit_code, 4) << same.err;
  EXPECT_NE(same.out.find("Serving: candidate against baseline"), std::string::npos);
  EXPECT_NE(same.err.find("cannot tell: the 95% intervals of TTFT p99 +0.0% ["), std::string::npos)
      << same.err;
  testing::CliResult loose =
      testing::RunSightline("diff '" + kSample + "' '" + kSample + "' --fail-if-slower 500");
  EXPECT_EQ(loose.exit_code, 0) << loose.err;
  // Several runs per side (here the same two files on each side): the serving diff over runs.
  testing::CliResult runs = testing::RunSightline("diff --format json '" + kSample + "' '" + log +
                                                  "' -- '" + kSample + "' '" + log + "'");
  EXPECT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("\"runs_before\": 2"), std::string::npos);
  EXPECT_NE(runs.out.find("\"label\": \"candidate run 2\""), std::string::npos);
  auto kind = [](const std::string& path) {
    StatusOr<RecognisedInput> in = RecogniseInput(path);
    return in.ok() ? in->reader->kind : InputKind::kAllreduceSweep;
  };
  EXPECT_EQ(kind(log), InputKind::kServingResults);
  EXPECT_EQ(kind(kSample), InputKind::kServingResults);
  const std::string trace =
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.pytorch.json.gz";
  EXPECT_EQ(kind(trace), InputKind::kTrace);
  testing::CliResult mixed = testing::RunSightline("diff '" + log + "' '" + trace + "'");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("diff compares two of a kind"), std::string::npos) << mixed.err;
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Every request failed: no latency and no rate exists, and none may read as 0 (a perfect run).
TEST(ServingMetrics, NoCompletedRequestGivesAbsentFiguresNotZero) {
  RequestResults r;
  r.path = "all_failed.json";
  r.format = "vllm";
  r.duration_s = 10;  // the benchmark ran: 0 requests per second is a measurement
  for (int i = 0; i < 3; ++i) {
    RequestRecord& q = r.requests.emplace_back();
    q.success = false;
    q.start_s = i;
    q.error = "timeout";
  }
  StatusOr<ServingMetrics> m = ComputeServingMetrics(r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->completed, 0);
  EXPECT_EQ(m->failed, 3);
  Report report;
  AddServingSection(r, *m, report);
  ASSERT_FALSE(report.sections.empty());
  const Section& s = report.sections[0];
  ASSERT_FALSE(s.tables.empty());
  for (const std::vector<Value>& row : s.tables[0].rows) {
    EXPECT_EQ(row[1], Value(int64_t{0}));
    for (size_t c = 2; c < row.size(); ++c) {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(row[c])) << std::get<std::string>(row[0]);
    }
  }
  const std::string json = RenderJsonReport(report);
  EXPECT_EQ(json.find("\"p99_ns\": 0"), std::string::npos);
  EXPECT_NE(json.find("\"p99_ns\": null"), std::string::npos) << json.substr(0, 3000);
  const std::string text = RenderTextReport(report, {});
  EXPECT_EQ(text.find(" 0 ns"), std::string::npos) << text;
}

}  // namespace
}  // namespace sightline
