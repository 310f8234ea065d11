// The formats of the quantizing fusions without a GPU: the CPU reference (src/allreduce/
// quant_format.h) and the E2M1 rounding the NVFP4 kernels use on Hopper (e2m1_code.h) against
// CUDA's own conversions as its headers compile them for the host (__nv_cvt_float_to_fp8 with
// __NV_SATFINITE and __nv_cvt_float_to_fp4, NVIDIA's emulation of cvt.rn.satfinite.e4m3x2.f32 and
// cvt.rn.satfinite.e2m1x2.f32), and the decoders against __nv_cvt_fp8_to_halfraw /
// __nv_cvt_fp4_to_halfraw. Floats: every (sign, exponent, top 7 mantissa bits) with the low 16
// bits 0, 1, 0x7fff, 0x8000, 0x8001 and 0xffff (ties and their neighbours at every rounding
// position), plus 2^24 random bit patterns; `--all` takes every one of the 2^32 floats (minutes).
// Also the harness's host-side checker (quant_check.h) on outputs made here: it accepts the
// reference's bytes in the swizzled layout and names a changed byte, scale or pad byte.
// Plain main(): the GPU machine builds this with the CUDA toolkit alone.
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "e2m1_code.h"
#include "quant_check.h"
#include "shared/quant_format.h"

namespace {

using sightline::allreduce::CompareQuantRows;
using sightline::allreduce::Dtype;
using sightline::allreduce::E2M1Code;
using sightline::allreduce::Quant;
using sightline::allreduce::QuantCheckRows;
using sightline::allreduce::QuantRowsOnHost;
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

// What the kernels would write for `tokens` bf16 rows of `hidden` values, laid out as the harness
// copies it (rows `rows` of the normalized input and the values; the whole scale buffer).
QuantRowsOnHost MakeOutputs(Quant q, int64_t tokens, int64_t hidden, float scale_in,
                            const std::vector<int64_t>& rows) {
  QuantRowsOnHost h;
  h.rows = rows;
  h.scale_fill = 0xff;
  const int64_t row_bytes = sightline::allreduce::QuantRowBytes(q, hidden);
  h.scales.assign(sightline::allreduce::QuantScaleBytes(q, tokens, hidden), 0xff);
  std::mt19937 rng(7);
  for (int64_t row = 0; row < tokens; ++row) {
    std::vector<float> x(hidden);
    std::vector<uint16_t> bits(hidden);
    for (int64_t i = 0; i < hidden; ++i) {
      // bf16 values over a wide range: sign, 8 exponents around 1, 7 mantissa bits.
      bits[i] = static_cast<uint16_t>((rng() & 0x807f) | ((124 + rng() % 8) << 7));
      x[i] = quant::Bf16ToFloat(bits[i]);
    }
    std::vector<uint8_t> values(row_bytes), block_scales(hidden / 16);
    if (q == Quant::kFp8) {
      quant::QuantizeFp8(x.data(), x.size(), scale_in, values.data());
    } else if (q == Quant::kFp8PerToken) {
      const float s = quant::QuantizeFp8PerToken(x.data(), x.size(), values.data());
      std::memcpy(h.scales.data() + 4 * row, &s, 4);
    } else {
      quant::QuantizeNvfp4Row(x.data(), x.size(), scale_in, values.data(), block_scales.data());
      for (int64_t b = 0; b < hidden / 16; ++b) {
        h.scales[quant::Nvfp4ScaleOffset(row, b, hidden)] = block_scales[b];
      }
    }
    for (int64_t r : rows) {
      if (r != row) continue;
      const char* p = reinterpret_cast<const char*>(bits.data());
      h.norm.insert(h.norm.end(), p, p + 2 * hidden);
      h.values.insert(h.values.end(), values.begin(), values.end());
    }
  }
  return h;
}

bool Contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

int CheckerSelfTest() {
  int bad = 0;
  auto expect = [&](bool ok, const char* what, const std::string& got) {
    if (ok) return;
    ++bad;
    std::printf("MISMATCH checker: %s; got \"%s\"\n", what, got.c_str());
  };
  const std::vector<int64_t> sampled = QuantCheckRows(300, 4);
  expect(sampled == std::vector<int64_t>{0, 99, 199, 299}, "QuantCheckRows(300, 4)", "");
  expect(QuantCheckRows(3, 0).size() == 3 && QuantCheckRows(3, 256).size() == 3,
         "QuantCheckRows keeps every row", "");
  for (Quant q : {Quant::kFp8, Quant::kFp8PerToken, Quant::kNvfp4}) {
    const int64_t tokens = 300, hidden = 80;  // a partial row tile and a partial column tile
    const float scale_in = q == Quant::kNvfp4 ? 16.0f : 0.25f;
    QuantRowsOnHost h = MakeOutputs(q, tokens, hidden, scale_in, sampled);
    std::string msg = CompareQuantRows(Dtype::kBf16, q, tokens, hidden, scale_in, h);
    expect(msg.empty(), "the reference's own outputs pass", msg);
    QuantRowsOnHost v = h;
    v.values[2 * (q == Quant::kNvfp4 ? hidden / 2 : hidden) + 5] ^= 0x01;  // row 199
    msg = CompareQuantRows(Dtype::kBf16, q, tokens, hidden, scale_in, v);
    expect(Contains(msg, "row 199 of 300") && Contains(msg, q == Quant::kNvfp4 ? "E2M1" : "E4M3"),
           "a changed value byte is named", msg);
    if (q == Quant::kFp8PerToken) {
      QuantRowsOnHost s = h;
      s.scales[4 * 99] ^= 0x01;
      msg = CompareQuantRows(Dtype::kBf16, q, tokens, hidden, scale_in, s);
      expect(Contains(msg, "row 99 of 300: per-token scale"), "a changed token scale", msg);
    }
    if (q == Quant::kNvfp4) {
      QuantRowsOnHost s = h;
      s.scales[quant::Nvfp4ScaleOffset(299, 4, hidden)] ^= 0x01;
      msg = CompareQuantRows(Dtype::kBf16, q, tokens, hidden, scale_in, s);
      expect(Contains(msg, "row 299 of 300, block 4: E4M3 block scale"), "a changed block scale",
             msg);
      QuantRowsOnHost pad = h;
      pad.scales[quant::Nvfp4ScaleOffset(0, 5, hidden)] = 0;  // column 5 of 5 blocks: padding
      msg = CompareQuantRows(Dtype::kBf16, q, tokens, hidden, scale_in, pad);
      expect(Contains(msg, "pad byte"), "a written pad byte", msg);
      QuantRowsOnHost row_pad = h;
      row_pad.scales[quant::Nvfp4ScaleOffset(300, 0, hidden)] = 0;  // row 300: padding
      msg = CompareQuantRows(Dtype::kBf16, q, tokens, hidden, scale_in, row_pad);
      expect(Contains(msg, "pad byte"), "a written pad row", msg);
    }
  }
  return bad;
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
  const int checker_bad = CheckerSelfTest();
  if (checker_bad != 0) {
    std::printf("%d checker self-test failures\n", checker_bad);
    return 1;
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
