// The Perfetto export: parse what is written (simdjson) and check it against the trace: one slice
// per kernel, memory operation, API call and range; one flow start and end per linked launch;
// GPU tracks named; kernel names kept exactly (escaping round-trips).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "analyses/findings/findings.h"
#include "exporters/perfetto_json.h"
#include "facts/iterations.h"
#include "importers/importer.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

struct Parsed {
  std::map<std::string, int64_t> slices_by_cat;  // ph X and b, by cat
  int64_t flow_starts = 0, flow_ends = 0, async_ends = 0, metadata = 0;
  std::map<std::string, int64_t> kernel_names;
  bool ok = false;
};

Parsed Parse(const std::string& json) {
  Parsed p;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) return p;
  simdjson::dom::array events;
  if (doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) return p;
  for (simdjson::dom::element e : events) {
    std::string_view ph, cat, name;
    if (e["ph"].get_string().get(ph) != simdjson::SUCCESS) return p;
    // Every event carries pid, tid and a timestamp.
    if (!e["pid"].is_int64() || !e["tid"].is_int64() || !e["ts"].is_number()) return p;
    if (e["cat"].get_string().get(cat) != simdjson::SUCCESS) cat = "";
    if (e["name"].get_string().get(name) != simdjson::SUCCESS) name = "";
    if (ph == "X" || ph == "b") {
      ++p.slices_by_cat[std::string(cat)];
      if (ph == "X" && !e["dur"].is_number()) return p;
      if (cat == "kernel") {
        std::string_view full;
        if (e["args"]["name"].get_string().get(full) != simdjson::SUCCESS) return p;
        ++p.kernel_names[std::string(full)];
      }
    } else if (ph == "e") {
      ++p.async_ends;
    } else if (ph == "s") {
      ++p.flow_starts;
    } else if (ph == "f") {
      ++p.flow_ends;
    } else if (ph == "M") {
      ++p.metadata;
    }
  }
  p.ok = true;
  return p;
}

class PerfettoSample : public ::testing::TestWithParam<const char*> {};

TEST_P(PerfettoSample, CountsMatchTheTrace) {
  const std::string path = std::string(SIGHTLINE_SOURCE_DIR) + "/" + GetParam();
  StatusOr<Trace> trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  PerfettoExportCounts counts;
  const std::string json = ExportPerfettoJson(*trace, &counts);
  Parsed p = Parse(json);
  ASSERT_TRUE(p.ok) << "not valid trace-event JSON";

  const Trace& t = *trace;
  int64_t memsets = 0, linked = 0, start_end = 0;
  for (size_t i = 0; i < t.memops.size(); ++i) {
    memsets += t.memops.kind[i] == MemOpKind::kMemset;
    linked += t.memops.launch_call[i] != kNoRow;
  }
  for (size_t i = 0; i < t.kernels.size(); ++i) linked += t.kernels.launch_call[i] != kNoRow;
  std::map<std::string, int64_t> ranges_by_kind;
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    ++ranges_by_kind[RangeKindName(t.ranges.kind[i])];
    start_end += t.ranges.kind[i] == RangeKind::kNvtxStartEnd;
  }
  int64_t runtime = 0, driver = 0;
  for (size_t i = 0; i < t.api_calls.size(); ++i) {
    (t.api_calls.kind[i] == ApiKind::kDriver ? driver : runtime) += 1;
  }
  ASSERT_GT(t.kernels.size(), 0u);
  EXPECT_EQ(p.slices_by_cat["kernel"], static_cast<int64_t>(t.kernels.size()));
  EXPECT_EQ(p.slices_by_cat["memset"], memsets);
  EXPECT_EQ(p.slices_by_cat["memcpy"], static_cast<int64_t>(t.memops.size()) - memsets);
  EXPECT_EQ(p.slices_by_cat["cuda_runtime"], runtime);
  EXPECT_EQ(p.slices_by_cat["cuda_driver"], driver);
  for (const auto& [kind, n] : ranges_by_kind) EXPECT_EQ(p.slices_by_cat[kind], n) << kind;
  EXPECT_EQ(p.async_ends, start_end);
  EXPECT_GT(linked, 0);
  EXPECT_EQ(p.flow_starts, linked);
  EXPECT_EQ(p.flow_ends, linked);
  EXPECT_EQ(counts.flows, linked);
  EXPECT_EQ(counts.kernels, static_cast<int64_t>(t.kernels.size()));
  EXPECT_GT(p.metadata, 0);  // GPU and stream names
  // Full kernel names survive the JSON round trip.
  std::map<std::string, int64_t> expected;
  for (size_t i = 0; i < t.kernels.size(); ++i) ++expected[std::string(t.str(t.kernels.name[i]))];
  EXPECT_EQ(p.kernel_names, expected);
}

// Every input format: nsys, PyTorch, and a recording of `sightline record` made on an H100.
INSTANTIATE_TEST_SUITE_P(Samples, PerfettoSample,
                         ::testing::Values("examples/samples/llama_decode_h100.nsys.sqlite",
                                           "examples/samples/llama_decode_h100.pytorch.json.gz",
                                           "tests/data/recorder/recorder_test_app_h100.slrec"));

// Iteration markers and findings: every iteration appears on its process's track and on each GPU
// it used; every finding gets a track with a slice per span (one over the trace without spans).
TEST(PerfettoExport, IterationsAndFindingsAnnotate) {
  StatusOr<Trace> trace = ImportTrace(std::string(SIGHTLINE_SOURCE_DIR) +
                                      "/examples/samples/llama_decode_h100.nsys.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  StatusOr<IterationsResult> iterations =
      ComputeIterations(Ctx(*trace)->facts(), IterationsOptions{});
  ASSERT_TRUE(iterations.ok());
  StatusOr<std::vector<Finding>> findings = ComputeFindings(*Ctx(*trace, AnalyzeOptions{}));
  ASSERT_TRUE(findings.ok());
  ASSERT_FALSE(iterations->sets.empty());
  ASSERT_FALSE(findings->empty());

  PerfettoExportOptions options;
  options.iterations = &*iterations;
  options.findings = &*findings;
  PerfettoExportCounts counts;
  Parsed p = Parse(ExportPerfettoJson(*trace, &counts, options));
  ASSERT_TRUE(p.ok);

  int64_t iteration_slices = 0, iterations_total = 0;
  for (const IterationSet& set : iterations->sets) {
    std::set<int32_t> gpus(trace->kernels.device.begin(), trace->kernels.device.end());
    int64_t tracks = set.pid >= 0 ? 1 : 0;
    for (int32_t d : gpus) {
      tracks += set.devices.empty() ||
                std::find(set.devices.begin(), set.devices.end(), d) != set.devices.end();
    }
    iteration_slices += tracks * static_cast<int64_t>(set.iterations.size());
    iterations_total += static_cast<int64_t>(set.iterations.size());
  }
  EXPECT_EQ(p.slices_by_cat["iteration"], iteration_slices);
  EXPECT_EQ(counts.iterations, iterations_total);
  int64_t spans = 0;
  for (const Finding& f : *findings) {
    EXPECT_LE(f.spans.size(), Finding::kMaxSpans);
    EXPECT_TRUE(std::is_sorted(f.spans.begin(), f.spans.end(), [](const auto& a, const auto& b) {
      return a.start_ns < b.start_ns;
    }));
    spans += f.spans.empty() ? 1 : static_cast<int64_t>(f.spans.size());
  }
  EXPECT_EQ(counts.findings, static_cast<int64_t>(findings->size()));
  EXPECT_EQ(p.slices_by_cat["finding"], spans);
  EXPECT_EQ(counts.finding_spans, spans);
  // The launch-bound finding points at the iterations it found launch-bound.
  auto launch = std::find_if(findings->begin(), findings->end(),
                             [](const Finding& f) { return f.id == "launch_bound"; });
  ASSERT_NE(launch, findings->end());
  EXPECT_GT(launch->spans.size(), 1u);
}

// With the analysis context, the GIL of each thread and the collections of each process get tracks
// of their own: the unions, not the raw rows (touching GIL ranges merge).
TEST(PerfettoExport, GilAndGcTracks) {
  testing::TraceFixture f;
  f.Device(0).Thread(100, 100, "python3").Thread(100, 101, "responder");
  f.Launch("gemm", 0, 10, 10, 100);
  f.Gil(GilState::kHeld, 0, 50, {100, 100});
  f.Gil(GilState::kHeld, 50, 80, {100, 100});  // touches the first: one slice
  f.Gil(GilState::kWaited, 80, 120, {100, 100});
  f.Gil(GilState::kHeld, 80, 120, {100, 101});
  f.Gc(200, 300, {100, 100});
  f.Gc(250, 400, {100, 101});  // overlaps the first: one collection
  const Trace trace = f.Build();
  auto context = Ctx(trace);
  PerfettoExportOptions options;
  options.context = context.get();
  PerfettoExportCounts counts;
  const std::string json = ExportPerfettoJson(trace, &counts, options);
  Parsed p = Parse(json);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(counts.gil_slices, 3);
  EXPECT_EQ(p.slices_by_cat["gil"], 3);
  EXPECT_EQ(counts.gc_slices, 1);
  EXPECT_EQ(p.slices_by_cat["gc"], 1);
  EXPECT_NE(json.find("GIL: thread 101 (responder)"), std::string::npos);
  // Without the context: no host tracks.
  PerfettoExportCounts plain;
  ExportPerfettoJson(trace, &plain, {});
  EXPECT_EQ(plain.gil_slices, 0);
  EXPECT_EQ(plain.gc_slices, 0);
}

// The export is handed out in chunks; a failing sink stops it and its error comes back.
TEST(PerfettoExport, StreamsInChunksAndStopsOnSinkError) {
  StatusOr<Trace> trace = ImportTrace(std::string(SIGHTLINE_SOURCE_DIR) +
                                      "/examples/samples/llama_decode_h100.nsys.sqlite");
  ASSERT_TRUE(trace.ok());
  std::string joined;
  int chunks = 0;
  Status s = WritePerfettoJson(*trace, {}, [&](std::string_view c) {
    ++chunks;
    joined.append(c);
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok());
  EXPECT_GT(chunks, 1);
  EXPECT_EQ(joined, ExportPerfettoJson(*trace));
  int calls = 0;
  s = WritePerfettoJson(*trace, {}, [&](std::string_view) {
    ++calls;
    return IoError("disk full");
  });
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("disk full"), std::string::npos);
  EXPECT_EQ(calls, 1);
}

TEST(PerfettoExport, EmptyTraceIsValid) {
  Trace t;
  Parsed p = Parse(ExportPerfettoJson(t));
  EXPECT_TRUE(p.ok);
  EXPECT_TRUE(p.slices_by_cat.empty());
}

TEST(PerfettoExport, Cli) {
  const std::string dir = testing::MakeTempDir();
  const std::string out = dir + "/out.json";
  testing::CliResult r =
      testing::RunSightline("export --perfetto -o '" + out + "' '" + SIGHTLINE_SOURCE_DIR +
                            "/examples/samples/llama_decode_h100.nsys.sqlite'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kernels"), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.load(out).get(doc), simdjson::SUCCESS);
  EXPECT_NE(r.err.find("findings"), std::string::npos);
  EXPECT_EQ(testing::RunSightline("export x.json").exit_code, 2);  // no format chosen
  // An unwritable output: exit 3 (an output error), nothing left behind.
  testing::CliResult bad = testing::RunSightline(
      "export --perfetto -o '" + dir + "/no/such/dir/out.json' '" + SIGHTLINE_SOURCE_DIR +
      "/examples/samples/llama_decode_h100.nsys.sqlite'");
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("cannot write"), std::string::npos) << bad.err;
  // A bad iteration regex is a usage error.
  EXPECT_EQ(testing::RunSightline("export --perfetto --iterations '(' -o '" + dir + "/x.json' '" +
                                  SIGHTLINE_SOURCE_DIR +
                                  "/examples/samples/llama_decode_h100.nsys.sqlite'")
                .exit_code,
            2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.json"));
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
}

}  // namespace
}  // namespace sightline
