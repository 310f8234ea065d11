// Each saved question (`sightline query --list`) on a shipped sample, checked against what the
// database says another way.
#include "query/named_queries.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "query/query_db.h"
#include "query/query_inputs.h"
#include "testing/status.h"

namespace sightline {
namespace {

using testing::ValueOrDie;

QueryDb Build(const std::string& rel, const std::string& more = "") {
  AnalyzeOptions options;
  options.top_n = 1000;
  std::vector<std::string> paths = {std::string(SIGHTLINE_SOURCE_DIR) + "/" + rel};
  if (!more.empty()) paths.push_back(std::string(SIGHTLINE_SOURCE_DIR) + "/" + more);
  return ValueOrDie(OpenQueryInputs(paths, options, ""));
}

QueryResult Named(const QueryDb& db, const char* name, const QueryParams& params = {}) {
  const NamedQuery* q = FindNamedQuery(name);
  EXPECT_NE(q, nullptr) << name;
  QueryLimits limits;
  limits.max_rows = 1000000;
  return ValueOrDie(db.Run(q->sql, limits, params));
}

int64_t Int(const Value& v) { return std::get<int64_t>(v); }
int Col(const QueryResult& r, const std::string& name) {
  for (size_t i = 0; i < r.columns.size(); ++i) {
    if (r.columns[i] == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

const std::string kLlama = "examples/samples/llama_decode_h100.nsys.sqlite";
const std::string kGraphNodes = "tests/data/nsys/graph_decode_node_h100.sqlite.gz";

TEST(NamedQueries, EveryOneHasATestHere) {
  const std::set<std::string> tested = {"kernel_summary",
                                        "layer_category_share",
                                        "slowest_iterations",
                                        "graph_kernels_by_capture_range",
                                        "kernels_between_iterations",
                                        "slow_ttft_requests"};
  for (const NamedQuery& q : NamedQueries()) EXPECT_TRUE(tested.contains(q.name)) << q.name;
  EXPECT_EQ(NamedQueries().size(), tested.size());
}

TEST(NamedQueries, KernelSummaryMatchesTheReportsKernelTable) {
  const QueryDb db = Build(kLlama);
  const QueryResult r = Named(db, "kernel_summary");
  int64_t total = 0, instances = 0;
  for (const auto& row : r.rows) {
    total += Int(row[Col(r, "total_ns")]);
    instances += Int(row[Col(r, "instances")]);
  }
  const QueryResult report = ValueOrDie(
      db.Run("SELECT sum(total_ns), sum(instances) FROM kernel_summary__kernels", QueryLimits{}));
  EXPECT_EQ(total, Int(report.rows[0][0]));
  EXPECT_EQ(instances, Int(report.rows[0][1]));
}

TEST(NamedQueries, LayerCategorySharesAddUpPerRange) {
  const QueryDb db = Build(kGraphNodes);
  const QueryResult r = Named(db, "layer_category_share", {{"range", "layer_*"}});
  ASSERT_GT(r.rows.size(), 4u);
  std::map<std::string, double> share;
  for (const auto& row : r.rows) {
    const std::string range = std::get<std::string>(row[Col(r, "range")]);
    EXPECT_EQ(range.rfind("layer_", 0), 0u) << range;
    share[range] += std::get<double>(row[Col(r, "share_pct")]);
  }
  for (const auto& [range, pct] : share) EXPECT_NEAR(pct, 100.0, 0.05) << range;
}

TEST(NamedQueries, SlowestIterationsAreTheSlowestAndTheirGapsLieInside) {
  const QueryDb db = Build(kLlama);
  const QueryResult r = Named(db, "slowest_iterations", {{"n", "3"}, {"min_gap_ns", "5000"}});
  ASSERT_GT(r.rows.size(), 0u);
  std::set<int64_t> iterations;
  for (const auto& row : r.rows) {
    iterations.insert(Int(row[Col(r, "iteration")]));
    EXPECT_GE(Int(row[Col(r, "gap_ns")]), 5000);
  }
  EXPECT_LE(iterations.size(), 3u);
  // The slowest three (warm-up left out) by the iterations table itself.
  const QueryResult top = ValueOrDie(db.Run(
      "SELECT id FROM iterations WHERE set_index = 0 AND warmup = 0 ORDER BY dur_ns DESC LIMIT 3",
      QueryLimits{}));
  for (const auto& row : top.rows) iterations.erase(Int(row[0]));
  EXPECT_TRUE(iterations.empty());
  // Each gap lies inside its iteration.
  const QueryResult outside = ValueOrDie(
      db.Run("SELECT count(*) FROM iterations i WHERE i.set_index = 0 AND i.id = :id AND (:s < "
             "i.start_ns OR :e > i.end_ns)",
             QueryLimits{},
             {{"id", std::to_string(Int(r.rows[0][Col(r, "iteration")]))},
              {"s", std::to_string(Int(r.rows[0][Col(r, "gap_start_ns")]))},
              {"e", std::to_string(Int(r.rows[0][Col(r, "gap_start_ns")]) +
                                   Int(r.rows[0][Col(r, "gap_ns")]))}}));
  EXPECT_EQ(Int(outside.rows[0][0]), 0);
}

TEST(NamedQueries, GraphKernelsByCaptureRangeCountEveryGraphKernelOnce) {
  const QueryDb db = Build(kGraphNodes);
  const QueryResult r = Named(db, "graph_kernels_by_capture_range");
  int64_t kernels = 0;
  bool layer7_attention = false;
  for (const auto& row : r.rows) {
    kernels += Int(row[Col(r, "kernels")]);
    layer7_attention = layer7_attention || std::get<std::string>(row[Col(r, "capture_path")]) ==
                                               "capture > layer_7 > attention";
  }
  EXPECT_TRUE(layer7_attention);
  const QueryResult graph = ValueOrDie(
      db.Run("SELECT count(*) FROM kernels WHERE capture_path_source IS NOT NULL", QueryLimits{}));
  EXPECT_EQ(kernels, Int(graph.rows[0][0]));
  EXPECT_GT(kernels, 0);
}

TEST(NamedQueries, KernelsBetweenIterationsStartInsideTheSteps) {
  const QueryDb db = Build(kLlama);
  const QueryResult r = Named(db, "kernels_between_iterations", {{"from", "10"}, {"to", "11"}});
  const QueryResult steps = ValueOrDie(db.Run(
      "SELECT min(start_ns), max(end_ns), sum(kernels) FROM iterations WHERE set_index = 0 AND "
      "id IN (10, 11)",
      QueryLimits{}));
  ASSERT_GT(r.rows.size(), 0u);
  for (const auto& row : r.rows) {
    EXPECT_GE(Int(row[Col(r, "start_ns")]), Int(steps.rows[0][0]));
    EXPECT_LT(Int(row[Col(r, "start_ns")]), Int(steps.rows[0][1]));
  }
  // Launched inside the steps and started on the GPU inside them: close to the launched count
  // (a launch near a step's end may start on the GPU after it).
  EXPECT_NEAR(static_cast<double>(r.rows.size()), static_cast<double>(Int(steps.rows[0][2])),
              0.1 * static_cast<double>(Int(steps.rows[0][2])));
}

// Serving results beside the recording: the requests over the SLO, slowest first, each with the
// steps from its scheduling to its first token, which the iterations table confirms.
TEST(NamedQueries, SlowTtftRequestsAreOverTheSloWithTheirSteps) {
  const QueryDb db = Build("examples/samples/serving_loop_h100.slrec",
                           "examples/samples/serving_loop_h100.requests.jsonl");
  const QueryResult all =
      ValueOrDie(db.Run("SELECT count(*) FROM requests WHERE ttft_ns > 5000000", QueryLimits{}));
  const QueryResult r = Named(db, "slow_ttft_requests", {{"slo_ms", "5"}});
  ASSERT_GT(r.rows.size(), 0u);
  EXPECT_EQ(static_cast<int64_t>(r.rows.size()), Int(all.rows[0][0]));
  int64_t previous = INT64_MAX;
  for (const auto& row : r.rows) {
    const int64_t ttft = Int(row[Col(r, "ttft_ns")]);
    EXPECT_GT(ttft, 5000000);
    EXPECT_LE(ttft, previous);
    previous = ttft;
    const int64_t from = Int(row[Col(r, "scheduled_in")]), to = Int(row[Col(r, "first_token_in")]);
    ASSERT_LE(from, to);
    EXPECT_EQ(Int(row[Col(r, "steps")]), to - from + 1);  // every step of the loop is numbered
    const QueryResult wall = ValueOrDie(db.Run(
        "SELECT sum(dur_ns) FROM iterations WHERE set_index = 0 AND number BETWEEN :a AND :b",
        QueryLimits{}, {{"a", std::to_string(from)}, {"b", std::to_string(to)}}));
    EXPECT_EQ(Int(row[Col(r, "steps_wall_ns")]), Int(wall.rows[0][0]));
  }
}

}  // namespace
}  // namespace sightline
