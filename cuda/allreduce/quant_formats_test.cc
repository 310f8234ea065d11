// The formats of the quantizing fusions without a GPU: the CPU reference (src/allreduce/
// quant_format.h) and the E2M1 rounding the NVFP4 kernels use on Hopper (e2m1_code.h) against
// CUDA's own conversions as its headers compile them for the host (__nv_cvt_float_to_fp8 with
// __NV_SATFINITE and __nv_cvt_float_to_fp4, NVIDIA's emulation of cvt.rn.satfinite.e4m3x2.f32 and
// cvt.rn.satfinite.e2m1x2.f32), and the decoders against __nv_cvt_fp8_to_halfraw /
// __nv_cvt_fp4_to_halfraw. Floats: every (sign, exponent, top 7 mantissa bits) with the low 16
// bits 0, 1, 0x7fff, 0x8000, 0x8001 and 0xffff (ties and their neighbours at every rounding
// position), plus 2^24 random bit patterns; `--all` takes every one of the 2^32 floats (minutes).
// Plain main(): the GPU machine builds this with the CUDA toolkit alone.
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

#include "allreduce/quant_format.h"
#include "e2m1_code.h"

namespace {

using sightline::allreduce::E2M1Code;
namespace quant = sightline::quant;

float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}

float HalfRawToFloat(__half_raw h) { return __half2float(__half(h)); }

bool SameFloat(float a, float b) {
  return (a != a && b != b) || std::memcmp(&a, &b, sizeof(a)) == 0;
}

struct Counter {
  uint64_t checked = 0, bad = 0;
  void Expect(bool ok, const char* what, uint32_t bits, unsigned got, unsigned want) {
    ++checked;
    if (ok) return;
    if (++bad <= 10) {
      std::printf("MISMATCH %s: float bits 0x%08x (%.9g): got 0x%02x, CUDA 0x%02x\n", what, bits,
                  FromBits(bits), got, want);
    }
  }
};

void CheckFloat(uint32_t bits, Counter& c) {
  const float x = FromBits(bits);
  const unsigned e4m3 = quant::FloatToE4M3(x);
  const unsigned cuda_e4m3 = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  c.Expect(e4m3 == cuda_e4m3, "FloatToE4M3", bits, e4m3, cuda_e4m3);
  const unsigned cuda_e2m1 = __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) & 0xfu;
  const unsigned e2m1 = quant::FloatToE2M1(x);
  c.Expect(e2m1 == cuda_e2m1, "FloatToE2M1", bits, e2m1, cuda_e2m1);
  const unsigned kernel = E2M1Code(x);
  c.Expect(kernel == cuda_e2m1, "E2M1Code (kernel)", bits, kernel, cuda_e2m1);
}

}  // namespace

int main(int argc, char** argv) {
  const bool all = argc > 1 && std::strcmp(argv[1], "--all") == 0;
  Counter c;
  for (unsigned b = 0; b < 256; ++b) {
    const float want = HalfRawToFloat(__nv_cvt_fp8_to_halfraw(static_cast<uint8_t>(b), __NV_E4M3));
    const float got = quant::E4M3ToFloat(static_cast<uint8_t>(b));
    c.Expect(SameFloat(got, want), "E4M3ToFloat", b, static_cast<unsigned>(got), b);
  }
  for (unsigned b = 0; b < 16; ++b) {
    const float want = HalfRawToFloat(__nv_cvt_fp4_to_halfraw(static_cast<uint8_t>(b), __NV_E2M1));
    const float got = quant::E2M1ToFloat(static_cast<uint8_t>(b));
    c.Expect(SameFloat(got, want), "E2M1ToFloat", b, static_cast<unsigned>(got), b);
  }
  if (all) {
    for (uint64_t b = 0; b <= 0xffffffffull; ++b) CheckFloat(static_cast<uint32_t>(b), c);
  } else {
    static const uint32_t kLow[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
    for (uint32_t high = 0; high <= 0xffff; ++high) {
      for (uint32_t low : kLow) CheckFloat(high << 16 | low, c);
    }
    std::mt19937 rng(20260301);
    for (int i = 0; i < (1 << 24); ++i) CheckFloat(static_cast<uint32_t>(rng()), c);
  }
  if (c.bad != 0) {
    std::printf("%llu of %llu conversions disagree with CUDA's\n",
                static_cast<unsigned long long>(c.bad), static_cast<unsigned long long>(c.checked));
    return 1;
  }
  std::printf("all %llu conversions agree with CUDA's (%s)\n",
              static_cast<unsigned long long>(c.checked), all ? "every float" : "sampled floats");
  return 0;
}
