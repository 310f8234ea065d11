// float -> E2M1 the way the NVFP4 epilogue does it on Hopper (which has no FP4 conversion
// instruction), for device code and for the host-side test that compares it with CUDA's own
// conversion and the CPU reference on every float (quant_formats_test.cc).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define SIGHTLINE_HOST_DEVICE __host__ __device__
#else
#define SIGHTLINE_HOST_DEVICE
#endif

namespace sightline::allreduce {

// float -> E2M1 code (sign in bit 3): the number of rounding midpoints below |x| picks the value
// 0, 0.5, 1, 1.5, 2, 3, 4, 6; a midpoint itself goes to the even code (0.25 -> 0, 0.75 -> 1,
// 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4), hence > or >=. Above 5 (infinity included)
// saturates to 6; NaN gives +6, as cvt.rn.satfinite.e2m1x2.f32 does.
SIGHTLINE_HOST_DEVICE inline uint32_t E2M1Code(float x) {
  const float a = std::fabs(x);
  if (a != a) return 0x7u;
  const uint32_t c = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) +
                     (a >= 3.5f) + (a > 5.0f);
  return c | (std::signbit(x) ? 0x8u : 0u);
}

}  // namespace sightline::allreduce
