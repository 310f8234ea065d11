// WorkShare: every posted task runs once, on the poster or on helping threads, and Run returns only
// when all have ended.
#include "base/work_share.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace sightline {
namespace {

std::vector<std::function<void()>> CountingTasks(std::vector<std::atomic<int>>& runs) {
  std::vector<std::function<void()>> tasks;
  for (size_t i = 0; i < runs.size(); ++i) tasks.push_back([&runs, i] { ++runs[i]; });
  return tasks;
}

TEST(WorkShare, WithoutHelpersThePosterRunsEveryTaskOnce) {
  int posted = 0;
  WorkShare share([&] { ++posted; });
  std::vector<std::atomic<int>> runs(7);
  share.Run(CountingTasks(runs));
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_EQ(posted, 1);
  EXPECT_FALSE(share.HasTasks());
  EXPECT_FALSE(share.Help());
}

TEST(WorkShare, HelpersTakeTasksAndRunWaitsForThem) {
  WorkShare share;
  std::atomic<bool> stop{false};
  std::atomic<int> helped{0};
  std::vector<std::thread> helpers;
  for (int t = 0; t < 3; ++t) {
    helpers.emplace_back([&] {
      while (!stop.load()) {
        if (share.Help()) ++helped;
        std::this_thread::yield();
      }
    });
  }
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> runs(16);
    std::atomic<int> ended{0};
    std::vector<std::function<void()>> tasks;
    for (size_t i = 0; i < runs.size(); ++i) {
      tasks.push_back([&, i] {
        std::this_thread::yield();
        ++runs[i];
        ++ended;
      });
    }
    share.Run(tasks);
    // Every task ended before Run returned, each exactly once.
    EXPECT_EQ(ended.load(), 16);
    for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  }
  stop = true;
  for (std::thread& t : helpers) t.join();
  EXPECT_FALSE(share.HasTasks());
}

TEST(WorkShare, TwoPostersAtOnce) {
  WorkShare share;
  std::vector<std::atomic<int>> a(9), b(9);
  std::thread other([&] { share.Run(CountingTasks(b)); });
  share.Run(CountingTasks(a));
  other.join();
  for (const std::atomic<int>& r : a) EXPECT_EQ(r.load(), 1);
  for (const std::atomic<int>& r : b) EXPECT_EQ(r.load(), 1);
}

}  // namespace
}  // namespace sightline
