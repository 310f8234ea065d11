// The recorder's filter of nested driver launch records (nested_driver_filter.h):
// a driver launch followed by the runtime call with its correlation id on the same thread is left
// out; driver launches made directly (cuBLAS's cuLaunchKernelEx) and everything else pass, in
// order.
#include "nested_driver_filter.h"

#include <gtest/gtest.h>

#include <vector>

namespace sightline::recorder {
namespace {

using recfmt::ApiBody;
using recfmt::ApiDomain;

ApiBody Call(ApiDomain domain, uint32_t correlation, uint32_t tid = 7) {
  ApiBody a{};
  a.domain = static_cast<uint32_t>(domain);
  a.correlation = correlation;
  a.tid = tid;
  return a;
}

std::vector<uint32_t> Filtered(const std::vector<ApiBody>& in) {
  NestedDriverLaunchFilter filter;
  std::vector<uint32_t> out;  // correlation * 10 + domain of what passes
  auto emit = [&](const ApiBody& a) { out.push_back(a.correlation * 10 + a.domain); };
  for (const ApiBody& a : in) filter.Add(a, emit);
  filter.Flush(emit);
  return out;
}

constexpr ApiDomain kRt = ApiDomain::kRuntime, kDrv = ApiDomain::kDriver;

TEST(NestedDriverLaunchFilter, DropsTheDriverCallInsideARuntimeCall) {
  // cudaLaunchKernel (5) -> cuLaunchKernel (5): only the runtime record stays.
  EXPECT_EQ(Filtered({Call(kDrv, 5), Call(kRt, 5)}), (std::vector<uint32_t>{51}));
}

TEST(NestedDriverLaunchFilter, KeepsDirectDriverLaunchesInOrder) {
  // cuBLAS: cuLaunchKernelEx 6 and 7 made directly, then a runtime launch 8 with its nested call.
  EXPECT_EQ(Filtered({Call(kDrv, 6), Call(kDrv, 7), Call(kDrv, 8), Call(kRt, 8)}),
            (std::vector<uint32_t>{62, 72, 81}));
  // A direct driver launch followed by an unrelated runtime call: both stay.
  EXPECT_EQ(Filtered({Call(kDrv, 9), Call(kRt, 10)}), (std::vector<uint32_t>{92, 101}));
}

TEST(NestedDriverLaunchFilter, SameCorrelationOnAnotherThreadIsNotNested) {
  EXPECT_EQ(Filtered({Call(kDrv, 11, 1), Call(kRt, 11, 2)}), (std::vector<uint32_t>{112, 111}));
}

TEST(NestedDriverLaunchFilter, AHeldRecordAtTheEndOfABufferIsKept) {
  EXPECT_EQ(Filtered({Call(kRt, 1), Call(kDrv, 2)}), (std::vector<uint32_t>{11, 22}));
}

}  // namespace
}  // namespace sightline::recorder
