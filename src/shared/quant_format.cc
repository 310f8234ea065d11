// The conversions work on the bits (the kernels use CUDA's conversion for E4M3 and comparisons
// against the rounding midpoints for E2M1), so that the GPU check compares two independent
// implementations. The scale arithmetic is the kernels' own: one IEEE operation per step, no
// fused multiply-add (there is no add), so every compiler gives the same bits.
#include "shared/quant_format.h"

#include <cmath>
#include <cstring>

namespace sightline::quant {
namespace {

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}

constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kInfBits = 0x7f800000u;

// Rounds q >= 0 (a float holding an exactly scaled magnitude) to the nearest integer, ties to
// even, without depending on the floating-point environment's rounding mode.
uint32_t RoundHalfEven(float q) {
  const auto i = static_cast<uint32_t>(q);       // truncation
  const float frac = q - static_cast<float>(i);  // exact: q < 2^24
  if (frac > 0.5f || (frac == 0.5f && (i & 1u) != 0)) return i + 1;
  return i;
}

// A float of magnitude bits `abs` (normal, exponent e >= min_exp of the target) rounded to a
// target with `mant_bits` mantissa bits and exponent bias `bias`: the code (exponent field and
// mantissa), ties to even. A carry out of the mantissa moves to the next exponent, as it should.
uint32_t RoundNormal(uint32_t abs, int mant_bits, int bias) {
  const int e = static_cast<int>(abs >> 23) - 127;
  const uint32_t mant = abs & 0x7fffffu;
  const int drop = 23 - mant_bits;
  uint32_t code = (static_cast<uint32_t>(e + bias) << mant_bits) | (mant >> drop);
  const uint32_t rest = mant & ((1u << drop) - 1);
  const uint32_t half = 1u << (drop - 1);
  if (rest > half || (rest == half && (code & 1u) != 0)) ++code;
  return code;
}

}  // namespace

uint8_t FloatToE4M3(float x) {
  const uint32_t b = Bits(x);
  const uint32_t abs = b & kAbsMask;
  if (abs > kInfBits) return 0x7f;  // NaN, whatever its sign
  const auto sign = static_cast<uint8_t>((b >> 24) & 0x80u);
  // 448 and above (448 < |x| < 464 rounds down to 448, 464 is a tie that goes to the even 448,
  // larger values and infinity saturate) all give the largest finite value.
  if (abs >= Bits(kE4M3Max)) return sign | 0x7e;
  const float a = FromBits(abs);
  if (a < 0.015625f) {  // below 2^-6, the smallest normal: subnormal steps of 2^-9
    // a * 512 is exact (a power-of-two scaling that stays below 8); 8 rounds up into the first
    // normal, whose code 0x08 is the same integer.
    return sign | static_cast<uint8_t>(RoundHalfEven(a * 512.0f));
  }
  return sign | static_cast<uint8_t>(RoundNormal(abs, 3, 7));
}

float E4M3ToFloat(uint8_t bits) {
  const float sign = (bits & 0x80u) != 0 ? -1.0f : 1.0f;
  const int e = (bits >> 3) & 0xf;
  const int m = bits & 0x7;
  if (e == 0xf && m == 0x7) return std::nanf("");
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(static_cast<float>(8 + m), e - 10);
}

uint8_t FloatToE2M1(float x) {
  const uint32_t b = Bits(x);
  const uint32_t abs = b & kAbsMask;
  if (abs > kInfBits) return 0x7;  // NaN: +6, as the CUDA conversion does
  const auto sign = static_cast<uint8_t>((b >> 28) & 0x8u);
  // 6 and above saturate (values in (5, 6) round up to 6; 5 is a tie that goes to the even 4).
  if (abs >= Bits(kE2M1Max)) return sign | 0x7;
  const float a = FromBits(abs);
  if (a < 1.0f) return sign | static_cast<uint8_t>(RoundHalfEven(a * 2.0f));  // steps of 0.5
  return sign | static_cast<uint8_t>(RoundNormal(abs, 1, 1));
}

float E2M1ToFloat(uint8_t code) {
  static constexpr float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = kValues[code & 0x7u];
  return (code & 0x8u) != 0 ? -v : v;
}

float Bf16ToFloat(uint16_t bits) { return FromBits(static_cast<uint32_t>(bits) << 16); }

float Fp16ToFloat(uint16_t bits) {
  const float sign = (bits & 0x8000u) != 0 ? -1.0f : 1.0f;
  const int e = (bits >> 10) & 0x1f;
  const int m = bits & 0x3ff;
  if (e == 0x1f) return m == 0 ? sign * INFINITY : std::nanf("");
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -24);
  return sign * std::ldexp(static_cast<float>(1024 + m), e - 25);
}

void QuantizeFp8(const float* x, size_t n, float scale, uint8_t* out) {
  const float inv = 1.0f / scale;
  for (size_t i = 0; i < n; ++i) out[i] = FloatToE4M3(x[i] * inv);
}

float QuantizeFp8PerToken(const float* row, size_t n, uint8_t* out) {
  float amax = kPerTokenMinAmax;
  for (size_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(row[i]));
  const float inv = kE4M3Max / amax;
  for (size_t i = 0; i < n; ++i) out[i] = FloatToE4M3(row[i] * inv);
  return amax / kE4M3Max;
}

Nvfp4BlockScale ComputeNvfp4BlockScale(float block_amax, float global_scale) {
  Nvfp4BlockScale s;
  const float sf = global_scale * (block_amax * kRcp6);
  s.bits = FloatToE4M3(sf);
  const float stored = E4M3ToFloat(s.bits);
  s.output_scale = stored != 0.0f ? 1.0f / (stored * (1.0f / global_scale)) : 0.0f;
  return s;
}

void QuantizeNvfp4Row(const float* row, size_t n, float global_scale, uint8_t* values,
                      uint8_t* scales) {
  for (size_t b = 0; b < n / kNvfp4BlockSize; ++b) {
    const float* x = row + b * kNvfp4BlockSize;
    float amax = 0.0f;
    for (int i = 0; i < kNvfp4BlockSize; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const Nvfp4BlockScale s = ComputeNvfp4BlockScale(amax, global_scale);
    scales[b] = s.bits;
    for (int i = 0; i < kNvfp4BlockSize; i += 2) {
      const uint8_t lo = FloatToE2M1(x[i] * s.output_scale);
      const uint8_t hi = FloatToE2M1(x[i + 1] * s.output_scale);
      values[(b * kNvfp4BlockSize + static_cast<size_t>(i)) / 2] =
          static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

int64_t Nvfp4ScaleOffset(int64_t row, int64_t block, int64_t hidden) {
  const int64_t col_tiles = (hidden / kNvfp4BlockSize + 3) / 4;
  return (row / 128) * (col_tiles * 512) + (block / 4) * 512 + (row % 32) * 16 +
         (row % 128 / 32) * 4 + block % 4;
}

int64_t Nvfp4ScaleBytes(int64_t tokens, int64_t hidden) {
  const int64_t col_tiles = (hidden / kNvfp4BlockSize + 3) / 4;
  return (tokens + 127) / 128 * 128 * col_tiles * 4;
}

}  // namespace sightline::quant
