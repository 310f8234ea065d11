// PyTorch profiler traces of older generations (tests/data/kineto/README.md): PyTorch 1.x wrote
// capitalised categories (Kernel, Runtime, Operator, Memcpy, Memset) and other flow names. Only
// the kernels used to survive; the host side, the ProfilerStep iterations and the copies were
// dropped without a word. Each count is checked against the trace's own events, counted here
// independently of the importer.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <string>

#include "base/file_io.h"
#include "facts/iterations.h"
#include "importers/importer.h"
#include "testing/context.h"

namespace sightline {
namespace {

// Complete ('X') events per `cat`, counted with simdjson straight from the file.
std::map<std::string, int64_t> CountCategories(const std::string& path) {
  std::map<std::string, int64_t> counts;
  StatusOr<std::string> gz = ReadFileToString(path);
  EXPECT_TRUE(gz.ok());
  StatusOr<std::string> text = GunzipToString(*gz, path);
  EXPECT_TRUE(text.ok());
  simdjson::dom::parser parser;
  simdjson::dom::array events;
  EXPECT_EQ(parser.parse(*text)["traceEvents"].get_array().get(events), simdjson::SUCCESS);
  for (simdjson::dom::element e : events) {
    std::string_view ph, cat;
    if (e["ph"].get_string().get(ph) != simdjson::SUCCESS || ph != "X") continue;
    if (e["cat"].get_string().get(cat) == simdjson::SUCCESS) ++counts[std::string(cat)];
  }
  return counts;
}

struct Generation {
  const char* file;
  int64_t iterations;  // ProfilerStep#N ranges
};

class KinetoGenerations : public ::testing::TestWithParam<Generation> {};

TEST_P(KinetoGenerations, EveryCategoryIsRead) {
  const std::string path =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/" + GetParam().file;
  const std::map<std::string, int64_t> cats = CountCategories(path);
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto count = [&](const char* cat) {
    auto it = cats.find(cat);
    return it == cats.end() ? int64_t{0} : it->second;
  };
  EXPECT_GT(count("Kernel"), 0);
  EXPECT_GT(count("Runtime"), 0);
  EXPECT_EQ(static_cast<int64_t>(t->kernels.size()), count("Kernel"));
  EXPECT_EQ(static_cast<int64_t>(t->api_calls.size()), count("Runtime"));
  EXPECT_EQ(static_cast<int64_t>(t->memops.size()), count("Memcpy") + count("Memset"));
  int64_t cpu_ops = 0;
  for (size_t i = 0; i < t->ranges.size(); ++i) cpu_ops += t->ranges.kind[i] == RangeKind::kCpuOp;
  EXPECT_EQ(cpu_ops, count("Operator"));
  // Every kernel and copy links to the Runtime call that launched it (args.correlation).
  for (size_t i = 0; i < t->kernels.size(); ++i) {
    EXPECT_NE(t->kernels.launch_call[i], kNoRow) << t->str(t->kernels.name[i]);
  }
  for (size_t i = 0; i < t->memops.size(); ++i) EXPECT_NE(t->memops.launch_call[i], kNoRow);
  // Nothing of a category Sightline does not know; the old flow names count as flows.
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kKinetoUnmappedCategory), 0);
  EXPECT_GT(t->diagnostics.Count(DiagCode::kKinetoUnmappedAsyncCpuToGpu), 0);
  StatusOr<IterationsResult> it = ComputeIterations(testing::Ctx(*t)->facts(), {});
  ASSERT_TRUE(it.ok()) << it.status().ToString();
  int64_t steps = 0;
  for (const IterationSet& set : it->sets) steps += static_cast<int64_t>(set.iterations.size());
  EXPECT_EQ(steps, GetParam().iterations);
}

INSTANTIATE_TEST_SUITE_P(Field, KinetoGenerations,
                         ::testing::Values(Generation{"pytorch1.9_kineto_resnet50_trim.json.gz", 1},
                                           Generation{"pytorch1.10_hta_inference_rank1.json.gz",
                                                      0}),
                         [](const ::testing::TestParamInfo<Generation>& info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.find('_'));
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Chrome's JSON Array Format (the events alone, no metadata object), as early Kineto and other
// Chrome-trace writers wrote it: read like the object form, by content.
TEST(KinetoGenerations, ABareEventArrayIsRead) {
  const std::string path = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/bare_array.json";
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1u);
  ASSERT_EQ(t->api_calls.size(), 1u);
  EXPECT_EQ(t->kernels.launch_call[0], 0);  // linked through the correlation id
  EXPECT_EQ(t->kernels.dur_ns(0), 30'000);
  EXPECT_EQ(t->ranges.size(), 1u);  // aten::mm
}

}  // namespace
}  // namespace sightline
