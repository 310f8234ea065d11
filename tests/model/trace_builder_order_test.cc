// TraceBuilder::Finish on rows in every order the sort and the launch links take a different path
// for (in order, a few rows out of place, a few sorted runs, random): the tables come out in
// (start asc, end desc, arrival) order with their columns moved together, and each kernel links to
// the call a brute-force search over the finished tables finds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "model/trace_builder.h"

namespace sightline {
namespace {

enum class Shape { kSorted, kFewMisplaced, kFewRuns, kRandom };

// n keys in the given shape; duplicates on purpose (few distinct values).
std::vector<int64_t> Keys(Shape shape, size_t n, std::mt19937_64& rng) {
  std::vector<int64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = static_cast<int64_t>(i / 2) * 10;
  switch (shape) {
    case Shape::kSorted:
      break;
    case Shape::kFewMisplaced:
      // A few rows moved later (each then sorts before its neighbours), in random order.
      for (size_t k = 0; k < n / 100; ++k) {
        const size_t i = rng() % n, j = rng() % n;
        if (i < j) std::rotate(keys.begin() + i, keys.begin() + i + 1, keys.begin() + j + 1);
      }
      break;
    case Shape::kFewRuns: {
      std::vector<int64_t> interleaved;  // 7 sorted runs, one after the other
      for (size_t r = 0; r < 7; ++r) {
        for (size_t i = r; i < n; i += 7) interleaved.push_back(keys[i]);
      }
      keys = interleaved;
      break;
    }
    case Shape::kRandom:
      std::shuffle(keys.begin(), keys.end(), rng);
      break;
  }
  return keys;
}

class TraceBuilderOrder : public ::testing::TestWithParam<Shape> {};

TEST_P(TraceBuilderOrder, SortsRowsByStartThenLongestFirst) {
  std::mt19937_64 rng(7);
  const size_t n = 4000;
  const std::vector<int64_t> starts = Keys(GetParam(), n, rng);
  TraceBuilder b;
  const StringId name = b.Intern("k");
  std::vector<std::tuple<int64_t, int64_t, int64_t>> expected;  // start, -end, tag
  for (size_t i = 0; i < n; ++i) {
    KernelRow row;
    row.start_ns = 1'000'000 + starts[i];
    row.end_ns = row.start_ns + 1 + static_cast<int64_t>(rng() % 3);  // ties in start and end
    row.device = 0;
    row.name = name;
    row.correlation = -1;
    row.registers_per_thread = static_cast<int32_t>(i);  // the row's tag
    b.AddKernel(row);
    expected.emplace_back(row.start_ns, -row.end_ns, static_cast<int64_t>(i));
  }
  std::sort(expected.begin(), expected.end());
  const Trace t = b.Finish();
  const KernelTable& k = t.kernels;
  ASSERT_EQ(k.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(k.start_ns[i], std::get<0>(expected[i])) << i;
    ASSERT_EQ(k.end_ns[i], -std::get<1>(expected[i])) << i;
    ASSERT_EQ(k.registers_per_thread[i], std::get<2>(expected[i])) << i;
  }
}

TEST_P(TraceBuilderOrder, LinksKernelsToTheirCalls) {
  std::mt19937_64 rng(11);
  const size_t n = 3000;
  // Correlation ids in the given shape over the calls' start order; some shared by two processes.
  const std::vector<int64_t> ids = Keys(GetParam(), n, rng);
  TraceBuilder b;
  for (size_t i = 0; i < n; ++i) {
    ApiCallRow call;
    call.start_ns = 1'000'000 + static_cast<int64_t>(i) * 100;
    call.end_ns = call.start_ns + 50;
    call.pid = 100 + static_cast<int32_t>(rng() % 2);
    call.tid = call.pid;
    call.name = "cudaLaunchKernel";
    call.correlation = ids[i] / 10 + (rng() % 10 == 0 ? -1'000'000 : 0);  // some negative: no id
    b.AddApiCall(call);
  }
  const StringId name = b.Intern("k");
  std::map<int32_t, int32_t> original_pid;  // by tag
  for (size_t i = 0; i < n; ++i) {
    KernelRow row;
    row.start_ns = 2'000'000 + static_cast<int64_t>(i) * 100;
    row.end_ns = row.start_ns + 20;
    row.device = 0;
    row.name = name;
    row.correlation = static_cast<int64_t>(rng() % (n / 2 + 10));  // some match no call
    row.pid = rng() % 3 == 0 ? -1 : 100 + static_cast<int32_t>(rng() % 3);
    row.registers_per_thread = static_cast<int32_t>(i);
    original_pid[row.registers_per_thread] = row.pid;
    b.AddKernel(row);
  }
  const Trace t = b.Finish();
  const ApiCallTable& a = t.api_calls;
  const KernelTable& k = t.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t pid = original_pid.at(k.registers_per_thread[i]);
    // Brute force: the calls with this correlation id, by (pid, row).
    std::vector<std::pair<int32_t, int32_t>> calls;
    for (size_t r = 0; r < a.size(); ++r) {
      if (a.correlation[r] == k.correlation[i])
        calls.push_back({a.pid[r], static_cast<int32_t>(r)});
    }
    std::sort(calls.begin(), calls.end());
    int32_t want = kNoRow;
    if (!calls.empty()) {
      if (pid >= 0) {
        for (const auto& [p, r] : calls) {
          if (p == pid) {
            want = r;
            break;
          }
        }
      } else {
        std::set<int32_t> pids;
        for (const auto& c : calls) pids.insert(c.first);
        if (pids.size() == 1) want = calls.front().second;
      }
    }
    ASSERT_EQ(k.launch_call[i], want) << "kernel " << i << " correlation " << k.correlation[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, TraceBuilderOrder,
                         ::testing::Values(Shape::kSorted, Shape::kFewMisplaced, Shape::kFewRuns,
                                           Shape::kRandom),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           switch (info.param) {
                             case Shape::kSorted:
                               return std::string("Sorted");
                             case Shape::kFewMisplaced:
                               return std::string("FewMisplaced");
                             case Shape::kFewRuns:
                               return std::string("FewRuns");
                             case Shape::kRandom:
                               return std::string("Random");
                           }
                           return std::string("Unknown");
                         });

}  // namespace
}  // namespace sightline
