// The rank threads take what threads they get and turn a file's exception into its error
// (docs/reliability.md, "Resources"; issue 53).
#include "pipeline/rank_workers.h"

#include <gtest/gtest.h>

#include <new>
#include <string>
#include <vector>

#include "base/threads.h"

namespace sightline {
namespace {

TEST(ThreadWorkers, RefusedThreadsLeaveTheWorkToTheCallingThread) {
  for (int refused : {1, 2, 1000}) {
    std::unique_ptr<RankWorkers> w = MakeThreadWorkers(4);
    FailThreadStartsForTesting(refused);
    std::vector<size_t> merged;
    const Status s = w->Run(
        9, [](size_t i) -> StatusOr<std::string> { return std::to_string(i); },
        [&](size_t i, const std::string& blob) {
          EXPECT_EQ(blob, std::to_string(i));
          merged.push_back(i);
          return Status::Ok();
        },
        nullptr);
    FailThreadStartsForTesting(0);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(merged.size(), 9u) << refused;
    for (size_t i = 0; i < merged.size(); ++i) EXPECT_EQ(merged[i], i);
  }
}

TEST(ThreadWorkers, OutOfMemoryInAFileIsItsErrorNotAnAbort) {
  for (int threads : {1, 3}) {
    std::unique_ptr<RankWorkers> w = MakeThreadWorkers(threads);
    const Status s = w->Run(
        5,
        [](size_t i) -> StatusOr<std::string> {
          if (i == 2) throw std::bad_alloc();
          return std::string();
        },
        [](size_t, const std::string&) { return Status::Ok(); }, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << threads;
    EXPECT_EQ(s.message().rfind("out of memory", 0), 0u) << s.message();
    const Status m = w->Run(
        3, [](size_t) -> StatusOr<std::string> { return std::string(); },
        [](size_t i, const std::string&) -> Status {
          if (i == 1) throw std::bad_alloc();
          return Status::Ok();
        },
        nullptr);
    EXPECT_EQ(m.message().rfind("out of memory", 0), 0u) << m.message();
  }
}

}  // namespace
}  // namespace sightline
