// Tests for the rule registry (analyses/findings/findings.h) and the results cache it runs on
// (facts/results_cache.h): every rule listed once, documented and shown by `sightline
// findings`; rules run only on the data they read.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analyses/findings/findings.h"
#include "analyses/serving/queueing.h"
#include "base/file_io.h"
#include "facts/results_cache.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

TEST(FindingRules, EachIdOnceWithASummary) {
  std::set<std::string> ids;
  for (const FindingRule& rule : FindingRules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id;
    EXPECT_GT(std::string(rule.summary).size(), 10u) << rule.id;
  }
  // The rules that lived outside the registry are in it.
  for (const char* id : {"straggler", "prefill_interference", "ttft_queueing", "gc_in_token_gaps",
                         "trt_host_bound", "trt_data_transfers", "trt_reformats"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
}

// docs/analyses/findings.md lists every rule in its table of rules, one row each.
TEST(FindingRules, EveryRuleIsInTheDocsTable) {
  StatusOr<std::string> doc =
      ReadFileToString(std::string(SIGHTLINE_SOURCE_DIR) + "/docs/analyses/findings.md");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  for (const FindingRule& rule : FindingRules()) {
    const std::string row =
        "\n| `" + std::string(rule.id) + "` | " + std::string(FindingRuleInput(rule)) + " |";
    EXPECT_NE(doc->find(row), std::string::npos) << "no row " << row;
  }
}

TEST(FindingRules, TheCommandListsThemAll) {
  testing::CliResult r = testing::RunSightline("findings --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const FindingRule& rule : FindingRules()) {
    EXPECT_NE(r.out.find(std::string(rule.id) + " "), std::string::npos) << rule.id;
    EXPECT_NE(r.out.find(rule.summary), std::string::npos) << rule.id;
  }
  EXPECT_EQ(testing::RunSightline("findings").out, r.out);
}

// Rules on whole results run when their data is there, and only then.
TEST(FindingRules, RunOnTheResultsThereAre) {
  ResultsCache empty;
  StatusOr<std::vector<Finding>> none = ComputeFindings(empty);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  QueueingTail tail;  // the tail requests waited 90% of their TTFT
  tail.known = true;
  tail.tail_requests = 4;
  tail.tail_ttft_ns = 100e6;
  tail.tail_queue_ns = 90e6;
  tail.median_queue_ns = 1e6;
  tail.excess_ns = 86e6;
  ResultsCache results;
  results.Put(tail);
  StatusOr<std::vector<Finding>> found = ComputeFindings(results);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].id, "ttft_queueing");
  EXPECT_EQ((*found)[0].estimated_savings_ns, 86'000'000);
}

TEST(ResultsCache, ComputesOnceKeepsErrorsAndFindNeverComputes) {
  ResultsCache cache;
  EXPECT_EQ(cache.Find<int>(), nullptr);
  int calls = 0;
  auto compute = [&] {
    ++calls;
    return StatusOr<int>(42);
  };
  StatusOr<const int*> a = cache.Get<int>(compute);
  StatusOr<const int*> b = cache.Get<int>(compute);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(**a, 42);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(calls, 1);
  ASSERT_NE(cache.Find<int>(), nullptr);
  EXPECT_EQ(*cache.Find<int>(), 42);
  cache.Put(7);  // one is there already: kept
  EXPECT_EQ(*cache.Find<int>(), 42);

  StatusOr<const double*> bad =
      cache.Get<double>([] { return StatusOr<double>(InvalidArgumentError("no")); });
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(cache.Get<double>([] { return StatusOr<double>(1.0); }).ok());  // the same error
  EXPECT_EQ(cache.Find<double>(), nullptr);
}

}  // namespace
}  // namespace sightline
