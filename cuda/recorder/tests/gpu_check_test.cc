// include/sightline/gpu_check.h: a failed call reaches the chosen handler with its text, the
// library's error string and file:line; success calls nothing. Needs no GPU: cudaGetErrorString and
// cuptiGetResultString answer without a driver.
#include "sightline/gpu_check.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sightline::gpu {
namespace {

cudaError_t FailingCudaCall(int) { return cudaErrorInvalidValue; }
CUptiResult FailingCuptiCall() { return CUPTI_ERROR_INVALID_PARAMETER; }

TEST(GpuCheck, SuccessCallsNoHandler) {
  int calls = 0;
  EXPECT_TRUE(SIGHTLINE_GPU_CHECK_OR([&](const GpuError&) { ++calls; }, cudaError_t(cudaSuccess)));
  EXPECT_TRUE(SIGHTLINE_GPU_CHECK(CUptiResult(CUPTI_SUCCESS)));
  EXPECT_EQ(calls, 0);
}

TEST(GpuCheck, FailureKeepsCallTextErrorStringAndLine) {
  std::vector<GpuError> seen;
  auto keep = [&](const GpuError& e) { seen.push_back(e); };
  const int line = __LINE__ + 1;
  EXPECT_FALSE(SIGHTLINE_GPU_CHECK_OR(keep, FailingCudaCall(1)));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_STREQ(seen[0].api, "CUDA runtime");
  EXPECT_EQ(seen[0].code, static_cast<int>(cudaErrorInvalidValue));
  EXPECT_STREQ(seen[0].call, "FailingCudaCall(1)");
  EXPECT_STREQ(seen[0].message, cudaGetErrorString(cudaErrorInvalidValue));
  EXPECT_EQ(seen[0].line, line);
  const std::string text = seen[0].Describe();
  EXPECT_NE(text.find("FailingCudaCall(1) failed: "), std::string::npos) << text;
  EXPECT_NE(text.find("gpu_check_test.cc:" + std::to_string(line) + ")"), std::string::npos)
      << text;
}

TEST(GpuCheck, CuptiResultsUseCuptisErrorString) {
  std::string message;
  EXPECT_FALSE(
      SIGHTLINE_GPU_CHECK_OR([&](const GpuError& e) { message = e.message; }, FailingCuptiCall()));
  const char* expected = nullptr;
  cuptiGetResultString(CUPTI_ERROR_INVALID_PARAMETER, &expected);
  ASSERT_NE(expected, nullptr);
  EXPECT_EQ(message, expected);
}

TEST(GpuCheck, DefaultHandlerPrintsOneLine) {
  testing::internal::CaptureStderr();
  EXPECT_FALSE(SIGHTLINE_GPU_CHECK(FailingCudaCall(2)));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("FailingCudaCall(2) failed: "), std::string::npos) << err;
  EXPECT_EQ(err.back(), '\n');
}

TEST(GpuCheckDeathTest, ExitOnErrorExitsWithOne) {
  EXPECT_EXIT(SIGHTLINE_GPU_CHECK_OR(ExitOnError, FailingCudaCall(3)), testing::ExitedWithCode(1),
              "FailingCudaCall\\(3\\) failed");
}

}  // namespace
}  // namespace sightline::gpu
