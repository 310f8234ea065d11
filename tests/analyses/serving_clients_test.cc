// Tests for the readers of other benchmark clients' results (serving/): SGLang bench_serving
// --output-details, AIPerf profile_export.jsonl and trtllm-bench --report_json, recognised from
// content. tests/data/serving/make_client_results.py wrote the inputs in each client's shape, with
// the clients' aggregates computed there in plain Python (numpy's linear percentiles): the
// independent computation the recomputed figures must match.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analyses/findings/findings.h"
#include "analyses/serving/queueing.h"
#include "analyses/serving/serving_metrics.h"
#include "analyses/serving/serving_trace_join.h"
#include "base/file_io.h"
#include "importers/serving_results/request_log.h"
#include "importers/serving_results/request_results.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

const std::string kDir = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/serving/";
const std::string kSglang = kDir + "sglang_bench_serving_small.jsonl";
const std::string kAiperf = kDir + "aiperf_profile_export_small.jsonl";
const std::string kTrtllm = kDir + "trtllm_bench_report_small.json";

std::string Write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ClientResults, EachFormatIsRecognisedFromContent) {
  for (const auto& [path, format] :
       {std::pair<std::string, ResultsFormat>{kSglang, ResultsFormat::kSglang},
        {kAiperf, ResultsFormat::kAiperf},
        {kTrtllm, ResultsFormat::kTrtllmBench},
        {kDir + "vllm_detailed_small.json", ResultsFormat::kVllm},
        {kDir + "request_log_small.jsonl", ResultsFormat::kRequestLog}}) {
    StatusOr<std::string> text = ReadFileToString(path);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(DetectResultsFormat(*text), format) << path;
  }
  EXPECT_EQ(DetectResultsFormat("{\"traceEvents\": []}"), ResultsFormat::kUnknown);
  EXPECT_EQ(DetectResultsFormat("SQLite format 3"), ResultsFormat::kUnknown);
}

TEST(ClientResults, SglangGivesItsOwnTtftItlAndThroughput) {
  StatusOr<RequestResults> r = ReadRequestResults(kSglang);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, "sglang-bench-serving");
  EXPECT_EQ(r->requests.size(), 30u);
  EXPECT_FALSE(r->has_start_times);
  EXPECT_TRUE(r->latency_from_chunks);
  // The earlier run on line 1 (no per-request lists) is counted, the run on line 2 read.
  EXPECT_EQ(r->diagnostics.Count(DiagCode::kServingRunsSkipped), 1);
  EXPECT_NE(r->producer.find("request rate inf"), std::string::npos);  // Infinity read
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->completed, 29);
  EXPECT_EQ(m->failed, 1);
  EXPECT_FALSE(m->steady.found);  // no send times
  // mean/median/std/p99 TTFT, mean/median/std/p95/p99 ITL, request and output throughput; the E2E
  // and TPOT aggregates need SGLang's per-request latency, which the file has not: not checked.
  EXPECT_EQ(m->checks.size(), 11u);
  EXPECT_EQ(m->mismatches, 0);
  for (const ReportedCheck& c : m->checks) {
    EXPECT_TRUE(c.match) << c.key << " " << c.reported << " vs " << c.computed;
    EXPECT_EQ(c.key.find("tpot"), std::string::npos);
    EXPECT_EQ(c.key.find("e2e"), std::string::npos);
  }
  EXPECT_FALSE(r->not_derived.empty());
}

TEST(ClientResults, AiperfRecordsGiveTpotAsAiperfComputesIt) {
  StatusOr<RequestResults> r = ReadRequestResults(kAiperf);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, "aiperf-profile-export");
  EXPECT_EQ(r->requests.size(), 24u);  // 26 records, 2 of the warm-up phase
  EXPECT_EQ(r->diagnostics.Count(DiagCode::kServingRecordSkipped), 2);
  EXPECT_EQ(r->requests.front().id, "req-0002");
  EXPECT_DOUBLE_EQ(r->requests.front().start_s, 0.0);  // from the first profiling request
  EXPECT_TRUE(r->has_start_times);
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->failed, 1);  // the cancelled one
  EXPECT_EQ(m->completed, 23);
  // AIPerf's per-request inter_token_latency is (latency - TTFT) / (OSL - 1): our TPOT, whose mean
  // must equal the mean of AIPerf's values.
  ASSERT_EQ(m->checks.size(), 1u);
  EXPECT_EQ(m->checks[0].key, "mean_tpot_ms");
  EXPECT_TRUE(m->checks[0].match) << m->checks[0].reported << " vs " << m->checks[0].computed;
  // The planted slow chunk (9 x a ~5 ms gap) is the ITL maximum; ms were converted to ns.
  EXPECT_GT(m->itl.max_ns, 40e6);
  EXPECT_LT(m->itl.p50_ns, 6.1e6);
  EXPECT_GT(m->itl.p50_ns, 4.4e6);
}

// AIPerf's benchmark_duration runs from the first successful request's start to the last
// successful response (start + request_latency): failed and timed-out requests lie outside it.
// The window used to run to the end of the timed-out requests, and throughput came out ~10% low.
// The summary AIPerf writes beside the records (profile_export_aiperf.json), when there, is
// checked figure by figure.
TEST(ClientResults, AiperfDurationLeavesOutFailedRequestsAndItsSummaryIsChecked) {
  const std::string dir = testing::MakeTempDir();
  auto record = [](int i, int64_t start_ns, double latency_ms, bool ok) {
    std::string r = fmt::format(
        "{{\"metadata\":{{\"x_request_id\":\"r{}\",\"request_start_ns\":{},"
        "\"request_end_ns\":{},\"benchmark_phase\":\"profiling\"}},",
        i, start_ns, start_ns + static_cast<int64_t>(latency_ms * 1e6) + 20'000'000);
    if (ok) {
      r += fmt::format(
          "\"metrics\":{{\"input_sequence_length\":{{\"value\":10,\"unit\":\"tokens\"}},"
          "\"time_to_first_token\":{{\"value\":100.0,\"unit\":\"ms\"}},"
          "\"request_latency\":{{\"value\":{},\"unit\":\"ms\"}},"
          "\"output_sequence_length\":{{\"value\":11,\"unit\":\"tokens\"}}}},\"error\":null}}",
          latency_ms);
    } else {
      r += "\"metrics\":{\"error_isl\":{\"value\":10,\"unit\":\"tokens\"}},"
           "\"error\":{\"type\":\"TimeoutError\",\"message\":\"timed out\"}}";
    }
    return r + "\n";
  };
  const int64_t t0 = 1'700'000'000'000'000'000;
  // Two successes: [t0, t0 + 1.1 s] and [t0 + 2 s, t0 + 3.1 s]; a timeout runs to t0 + 30 s.
  const std::string records = record(0, t0, 1100.0, true) +
                              record(1, t0 + 2'000'000'000, 1100.0, true) +
                              record(2, t0 + 1'000'000'000, 29'000.0, false);
  const std::string path = dir + "/profile_export.jsonl";
  ASSERT_TRUE(WriteFileAtomically(path, records).ok());
  StatusOr<RequestResults> r = ReadRequestResults(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->duration_s, 3.1, 1e-9);
  // AIPerf's summary of the same run: every figure agrees.
  ASSERT_TRUE(
      WriteFileAtomically(
          dir + "/profile_export_aiperf.json",
          "{\"aiperf_version\": \"0.8.0\", "
          "\"request_throughput\": {\"unit\": \"requests/sec\", \"avg\": 0.6451612903225806},"
          "\"benchmark_duration\": {\"unit\": \"sec\", \"avg\": 3.1},"
          "\"output_token_throughput\": {\"unit\": \"tokens/sec\", \"avg\": 7.096774193548387},"
          "\"time_to_first_token\": {\"unit\": \"ms\", \"avg\": 100.0, \"p50\": 100.0, "
          "\"p99\": 100.0, \"std\": 0.0}}")
          .ok());
  r = ReadRequestResults(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->failed, 1);
  EXPECT_EQ(m->checks.size(), 7u);
  EXPECT_EQ(m->mismatches, 0);
  for (const ReportedCheck& c : m->checks) EXPECT_TRUE(c.match) << c.key;
  // A summary that is not JSON is an error that names it.
  // (Written with a plain stream: this process has read the summary, and Sightline's own writer
  // refuses to replace a file it read.)
  std::ofstream(dir + "/profile_export_aiperf.json", std::ios::trunc) << "not json";
  StatusOr<RequestResults> bad = ReadRequestResults(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("profile_export_aiperf.json"), std::string::npos);
}

// ../shared/traces/realworld: AIPerf 0.8.0, 20 requests of which 10 timed out; AIPerf's summary of
// that run states benchmark_duration 191.236231223 s and request_throughput 0.0522913463/s.
TEST(ClientResults, RealAiperfRunWithTimeouts) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string path = dir + "/realworld/aiperf/databloom_llama32_3b_c1_profile_export.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  StatusOr<RequestResults> r = ReadRequestResults(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->completed, 10);
  EXPECT_EQ(m->failed, 10);
  EXPECT_NEAR(r->duration_s, 191.236231223, 1e-6);  // request_latency is rounded to ns
  EXPECT_NEAR(m->request_throughput, 0.0522913463, 1e-9);
}

TEST(ClientResults, TrtllmBenchAggregatesAreShownNotRecomputed) {
  StatusOr<RequestResults> r = ReadRequestResults(kTrtllm);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->aggregates_only);
  EXPECT_TRUE(r->requests.empty());
  EXPECT_NEAR(r->duration_s, 24.5132, 1e-9);
  bool ttft_p99 = false;
  for (const RequestResults::Aggregate& a : r->aggregates) {
    if (a.group == "streaming_metrics.ttft_percentiles" && a.name == "p99") {
      ttft_p99 = true;
      EXPECT_EQ(a.unit, Unit::kDurationNs);
      EXPECT_NEAR(a.value, 1470.0 * 1e6, 1);  // 700 ms x 2.1, in ns
    }
  }
  EXPECT_TRUE(ttft_p99);
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  EXPECT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("aggregates only"), std::string::npos);
}

TEST(ClientResults, BadInputNamesTheFileAndLine) {
  const std::string dir = testing::MakeTempDir();
  StatusOr<std::string> aiperf = ReadFileToString(kAiperf);
  ASSERT_TRUE(aiperf.ok());
  // A unit AIPerf does not write, on line 4.
  std::string bad_unit = *aiperf;
  size_t at = 0;
  for (int line = 1; line < 4; ++line) at = bad_unit.find('\n', at) + 1;
  const size_t unit = bad_unit.find("\"unit\":\"ms\"", at);
  bad_unit.replace(unit, 11, "\"unit\":\"hours\"");
  StatusOr<RequestResults> r = ReadRequestResults(Write(dir, "u.jsonl", bad_unit));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("u.jsonl:4:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("hours"), std::string::npos);

  StatusOr<std::string> sglang = ReadFileToString(kSglang);
  ASSERT_TRUE(sglang.ok());
  std::string cut = sglang->substr(0, sglang->size() - 200);  // the last run cut short
  r = ReadRequestResults(Write(dir, "cut.jsonl", cut));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cut.jsonl:2:"), std::string::npos) << r.status().message();
  // A run without --output-details alone: its aggregates, shown as written, and a note that
  // says what --output-details would add.
  r = ReadRequestResults(Write(dir, "nodetails.jsonl", sglang->substr(0, sglang->find('\n') + 1)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->aggregates_only);
  ASSERT_FALSE(r->not_derived.empty());
  EXPECT_NE(r->not_derived[0].find("--output-details"), std::string::npos);

  r = ReadRequestResults(Write(dir, "t.json", "{\"engine\": {}, \"world_info\": {}}"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\"performance\""), std::string::npos);
}

TEST(ClientResults, CliReportsEachAndCountsSkippedRecords) {
  const std::string dir = testing::MakeTempDir();
  testing::CliResult a = testing::RunSightline("analyze --requests '" + kAiperf +
                                               "' --format json -o '" + dir + "/a.json'");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  StatusOr<std::string> json = ReadFileToString(dir + "/a.json");
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"serving_record_skipped\""), std::string::npos);
  EXPECT_NE(json->find("\"client_check\""), std::string::npos);

  testing::CliResult t = testing::RunSightline("analyze --requests '" + kTrtllm + "'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("aggregates only"), std::string::npos);
  EXPECT_NE(t.out.find("ttft_percentiles"), std::string::npos);

  testing::CliResult s = testing::RunSightline("analyze --requests '" + kSglang + "'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("TTFT + the sum of the ITL gaps"), std::string::npos);

  // A diff of aggregates-only results is refused with the reason.
  testing::CliResult d = testing::RunSightline("diff '" + kTrtllm + "' '" + kTrtllm + "'");
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.err.find("aggregates only"), std::string::npos);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

TEST(ServingCharts, CdfsOfTtftTpotItlAndGapsOverTime) {
  StatusOr<RequestResults> r = ReadRequestResults(kAiperf);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  Report report;
  AddServingSection(*r, *m, report);
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  const Series* itl = nullptr;
  const Series* over_time = nullptr;
  int cdfs = 0;
  for (const Series& se : s.series) {
    if (se.style == SeriesStyle::kCdf) ++cdfs;
    if (se.key == "itl_cdf") itl = &se;
    if (se.key == "itl_max_over_time") over_time = &se;
  }
  EXPECT_EQ(cdfs, 3);
  ASSERT_NE(itl, nullptr);
  // Ascending in both x and y, from the minimum gap at 0% to the maximum at 100%, and the median
  // where the statistics put it.
  ASSERT_GT(itl->x.size(), 70u);
  EXPECT_TRUE(std::is_sorted(itl->x.begin(), itl->x.end()));
  EXPECT_TRUE(std::is_sorted(itl->y.begin(), itl->y.end()));
  EXPECT_DOUBLE_EQ(itl->x.front(), m->itl.min_ns);
  EXPECT_DOUBLE_EQ(itl->x.back(), m->itl.max_ns);
  EXPECT_DOUBLE_EQ(itl->y.back(), 100.0);
  for (size_t i = 0; i < itl->y.size(); ++i) {
    if (itl->y[i] == 50.0) {
      EXPECT_DOUBLE_EQ(itl->x[i], m->itl.p50_ns);
    }
  }
  // AIPerf has send times: the longest gap over time peaks at the planted slow chunk.
  ASSERT_NE(over_time, nullptr);
  EXPECT_DOUBLE_EQ(*std::max_element(over_time->y.begin(), over_time->y.end()), m->itl.max_ns);

  // SGLang has no send times: CDFs, no time series.
  StatusOr<RequestResults> sg = ReadRequestResults(kSglang);
  ASSERT_TRUE(sg.ok());
  StatusOr<ServingMetrics> sm = ComputeServingMetrics(*sg, {});
  ASSERT_TRUE(sm.ok());
  Report sreport;
  AddServingSection(*sg, *sm, sreport);
  for (const Series& se : sreport.sections[0].series) EXPECT_NE(se.key, "itl_max_over_time");
}

TEST(ServingCharts, HtmlDrawsTheCdfs) {
  const std::string dir = testing::MakeTempDir();
  testing::CliResult h = testing::RunSightline("analyze --requests '" + kAiperf +
                                               "' --format html -o '" + dir + "/r.html'");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  StatusOr<std::string> html = ReadFileToString(dir + "/r.html");
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("ITL: share of token gaps at or below (CDF)"), std::string::npos);
  EXPECT_NE(html->find("Cumulative: y% of the values"), std::string::npos);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// The shipped serving loop (examples/samples/README.md) plants a GC pause every 50 iterations at
// the end of an iteration, after its tokens were emitted: the request log's token gaps, placed on
// the recording's clock through the iteration counter, find them as the ITL tail.
TEST(ServingTraceJoin, GcPausesOfTheShippedLoopMakeTheItlTail) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  const std::string out = testing::MakeTempDir() + "/j.json";
  testing::CliResult r =
      testing::RunSightline("analyze '" + dir + "serving_loop_h100.slrec' --requests '" + dir +
                            "serving_loop_h100.requests.jsonl' --format json -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<std::string> json = ReadFileToString(out);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"itl_by_gc\""), std::string::npos);
  EXPECT_NE(json->find("joined by time"), std::string::npos);
  const size_t f = json->find("\"id\": \"gc_in_token_gaps\"");
  ASSERT_NE(f, std::string::npos);
  // Measured: 19 of the 26 gaps at or above the ITL p99 held a collection.
  EXPECT_NE(json->find("\"19 of 26\"", f), std::string::npos);
  // The 7 other tail gaps are one 19 ms stall that 7 streams saw, with the GPU idle through it.
  EXPECT_NE(json->find("\"tail_gaps_host_stall\""), std::string::npos);
  EXPECT_NE(json->find("\"7 of 7\""), std::string::npos);
  // The TTFT tail (the 7 requests at or above its p90) is prefill work: no collection ran in it.
  EXPECT_NE(json->find("\"ttft_tail_with_gc\""), std::string::npos);
  EXPECT_NE(json->find("0 of 7 (0 ns of GC)"), std::string::npos);

  // Without the trace, no join and no such finding.
  testing::CliResult alone =
      testing::RunSightline("analyze --requests '" + dir +
                            "serving_loop_h100.requests.jsonl' --format json -o '" + out + "'");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  json = ReadFileToString(out);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->find("gc_in_token_gaps"), std::string::npos);
}

// The join travels as a blob from where the first trace is reduced (serving_analysis.cc): every
// figure comes back bit for bit; a cut, padded or foreign blob is refused.
TEST(ServingTraceJoin, BlobRoundTripAndRefusals) {
  ServingTraceJoin j;
  j.joined = true;
  j.note = "half the gaps had no iteration";
  j.gaps = 7;
  j.matched = 5;
  j.clock_joined = true;
  j.offset_uncertainty_ns = 0.1 + 0.2;
  j.typical_ns = 3.5;
  j.with_gc.n = 2;
  j.with_gc.p999_ns = 9.75;
  j.without_gc.mean_ns = 1e-300;
  j.tail_gaps = 3;
  j.tail_gaps_with_gc = 2;
  j.gc_in_tail_ns = 4;
  j.tail_gaps_host_stall = 1;
  j.excess_ns = 6;
  j.ttft_tail_requests = 8;
  j.ttft_tail_with_gc = 1;
  j.ttft_gc_in_tail_ns = 2.5;
  const std::string blob = EncodeServingTraceJoin(j);
  StatusOr<ServingTraceJoin> back = DecodeServingTraceJoin(blob);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(EncodeServingTraceJoin(*back), blob);  // no field dropped on the way
  EXPECT_TRUE(back->clock_joined);
  EXPECT_EQ(back->note, j.note);
  EXPECT_EQ(back->offset_uncertainty_ns, 0.1 + 0.2);
  EXPECT_EQ(back->with_gc.p999_ns, 9.75);
  EXPECT_EQ(back->without_gc.mean_ns, 1e-300);
  EXPECT_EQ(back->ttft_gc_in_tail_ns, 2.5);
  EXPECT_FALSE(DecodeServingTraceJoin(blob.substr(0, blob.size() - 1)).ok());
  EXPECT_FALSE(DecodeServingTraceJoin(blob + "x").ok());
  EXPECT_FALSE(DecodeServingTraceJoin("garbage").ok());
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// A request log in which two requests wait 40 ms for a slot: their TTFT is mostly queueing.
std::string QueueingLog(int64_t slow_wait_ms) {
  std::string log;
  auto line = [&log](const std::string& id, const char* event, int64_t ms, int64_t iteration,
                     int64_t tokens) {
    log += fmt::format(
        "{{\"schema_version\":1,\"request\":\"{}\",\"event\":\"{}\",\"monotonic_ns\":{}{}{},"
        "\"pid\":7}}\n",
        id, event, ms * 1000000, iteration >= 0 ? fmt::format(",\"iteration\":{}", iteration) : "",
        tokens > 0 ? fmt::format(",\"tokens\":{}", tokens) : "");
  };
  for (int i = 0; i < 10; ++i) {
    const std::string id = fmt::format("r{}", i);
    const int64_t t0 = 1000 + 10 * i;
    const int64_t wait = i >= 8 ? slow_wait_ms : 1;
    line(id, "arrived", t0, -1, 100);
    line(id, "scheduled", t0 + wait, i, 0);
    line(id, "tokens", t0 + wait + 4, i, 1);
    line(id, "tokens", t0 + wait + 9, i + 1, 1);
    line(id, "finished", t0 + wait + 9, i + 1, 0);
  }
  return log;
}

TEST(Queueing, WaitingForASlotMakesTheTtftTail) {
  StatusOr<RequestResults> r = ParseRequestLog(QueueingLog(40), "q.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  StatusOr<ServingMetrics> m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  const QueueingTail t = ComputeQueueingTail(*r, *m);
  ASSERT_TRUE(t.known);
  EXPECT_EQ(t.tail_requests, 2);
  EXPECT_NEAR(t.tail_queue_ns, 80e6, 1);
  EXPECT_NEAR(t.tail_ttft_ns, 88e6, 1);
  EXPECT_NEAR(t.median_queue_ns, 1e6, 1);
  EXPECT_NEAR(t.excess_ns, 78e6, 1);
  std::vector<Finding> findings;
  ASSERT_TRUE(RuleTtftQueueing(t, findings).ok());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "ttft_queueing");
  EXPECT_EQ(findings[0].severity, Severity::kHigh);

  // Short waits: the tail is prefill work, not queueing; no finding.
  r = ParseRequestLog(QueueingLog(2), "q.jsonl");
  ASSERT_TRUE(r.ok());
  m = ComputeServingMetrics(*r, {});
  ASSERT_TRUE(m.ok());
  std::vector<Finding> quiet;
  ASSERT_TRUE(RuleTtftQueueing(ComputeQueueingTail(*r, *m), quiet).ok());
  EXPECT_TRUE(quiet.empty());
}

}  // namespace
}  // namespace sightline
