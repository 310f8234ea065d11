// The Perfetto export: parse what is written (simdjson) and check it against the trace: one slice
// per kernel, memory operation, API call and range; one flow start and end per linked launch;
// GPU tracks named; kernel names kept exactly (escaping round-trips).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <string>

#include "exporters/perfetto_json.h"
#include "importers/importer.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

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
  const std::string path = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/" + GetParam();
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

INSTANTIATE_TEST_SUITE_P(Samples, PerfettoSample,
                         ::testing::Values("llama_decode_h100.nsys.sqlite",
                                           "llama_decode_h100.pytorch.json.gz"));

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
  EXPECT_EQ(testing::RunSightline("export x.json").exit_code, 2);  // no format chosen
}

}  // namespace
}  // namespace sightline
