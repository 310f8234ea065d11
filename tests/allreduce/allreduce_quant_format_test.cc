// The CPU reference of the quantizing all-reduce epilogues' formats (src/shared/quant_format.h):
// exact bits on hand-picked values (boundaries, ties, subnormals, saturation, zeros and negative
// zero, NaN), the NVFP4 block scale, the packing, and the swizzled scale layout.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "shared/quant_format.h"

namespace sightline::quant {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

float Pow2(int e) { return std::ldexp(1.0f, e); }
float Next(float x) { return std::nextafter(x, kInf); }
float Prev(float x) { return std::nextafter(x, -kInf); }

struct Case {
  float x;
  int bits;
};

TEST(QuantFormat, E4M3ExactBits) {
  const std::vector<Case> cases = {
      {0.0f, 0x00},
      {-0.0f, 0x80},
      {1.0f, 0x38},
      {-1.0f, 0xb8},
      {1.125f, 0x39},
      {1.0625f, 0x38},  // tie between 1 (mantissa 0) and 1.125 (1): even
      {Next(1.0625f), 0x39},
      {1.1875f, 0x3a},  // tie between 1.125 (1) and 1.25 (2): even
      {-2.5f, 0xc2},
      {240.0f, 0x77},
      {416.0f, 0x7d},
      {432.0f, 0x7e},  // tie between 416 (5) and 448 (6): even
      {Prev(432.0f), 0x7d},
      {448.0f, 0x7e},  // the largest finite value
      {449.0f, 0x7e},  // saturates (0x7f is NaN, not 480)
      {464.0f, 0x7e},  // 448 + half a step: tie, even
      {465.0f, 0x7e},
      {1e30f, 0x7e},
      {-1e30f, 0xfe},
      {kInf, 0x7e},  // satfinite: no infinity in E4M3
      {-kInf, 0xfe},
      {kNaN, 0x7f},
      {-kNaN, 0x7f},                 // NaN loses its sign, as in CUDA's conversion
      {Pow2(-6), 0x08},              // the smallest normal
      {Prev(Pow2(-6)), 0x08},        // rounds up out of the subnormals
      {Pow2(-6) - Pow2(-10), 0x08},  // 7.5 subnormal steps: tie between 7 and 8, even
      {Pow2(-6) - Pow2(-9), 0x07},   // the largest subnormal, 7 x 2^-9
      {Pow2(-9), 0x01},              // the smallest subnormal
      {Pow2(-10), 0x00},             // half of it: tie, even (zero)
      {Next(Pow2(-10)), 0x01},
      {-Pow2(-10), 0x80},     // underflow keeps the sign
      {3 * Pow2(-10), 0x02},  // 1.5 steps: tie, even
      {5 * Pow2(-10), 0x02},  // 2.5 steps: tie, even
      {Pow2(-11), 0x00},
      {-1e-30f, 0x80},
      {std::numeric_limits<float>::denorm_min(), 0x00},
      {Pow2(8), 0x78},
      {1.5f * Pow2(-6), 0x0c},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FloatToE4M3(c.x), c.bits) << c.x;
  }
}

TEST(QuantFormat, E4M3DecodesEveryCodeAndRoundTrips) {
  EXPECT_EQ(E4M3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(E4M3ToFloat(0xfe), -448.0f);
  EXPECT_EQ(E4M3ToFloat(0x01), Pow2(-9));
  EXPECT_EQ(E4M3ToFloat(0x08), Pow2(-6));
  EXPECT_EQ(E4M3ToFloat(0x38), 1.0f);
  EXPECT_TRUE(std::signbit(E4M3ToFloat(0x80)));
  EXPECT_EQ(E4M3ToFloat(0x80), 0.0f);
  EXPECT_TRUE(std::isnan(E4M3ToFloat(0x7f)));
  EXPECT_TRUE(std::isnan(E4M3ToFloat(0xff)));
  // Every finite code decodes to a value that encodes back to the same code, and values grow
  // with the code.
  float previous = -1.0f;
  for (int b = 0; b < 0x7f; ++b) {
    const float v = E4M3ToFloat(static_cast<uint8_t>(b));
    EXPECT_EQ(FloatToE4M3(v), b) << b;
    EXPECT_EQ(FloatToE4M3(-v), b | 0x80) << b;
    EXPECT_GT(v, previous) << b;
    previous = v;
  }
}

TEST(QuantFormat, E4M3RoundsToTheNearestCode) {
  // Between two neighbouring finite codes, the midpoint goes to the even code, just below it to
  // the lower one and just above it to the upper one.
  for (int b = 0; b + 1 < 0x7f; ++b) {
    const float lo = E4M3ToFloat(static_cast<uint8_t>(b));
    const float hi = E4M3ToFloat(static_cast<uint8_t>(b + 1));
    const float mid = (lo + hi) / 2;  // exact: both have few mantissa bits
    EXPECT_EQ(FloatToE4M3(mid), (b % 2 == 0) ? b : b + 1) << b;
    EXPECT_EQ(FloatToE4M3(Prev(mid)), b) << b;
    EXPECT_EQ(FloatToE4M3(Next(mid)), b + 1) << b;
  }
}

TEST(QuantFormat, E2M1ExactBits) {
  const std::vector<Case> cases = {
      {0.0f, 0x0},
      {-0.0f, 0x8},
      {0.25f, 0x0},  // tie between 0 and 0.5: even
      {Next(0.25f), 0x1},
      {-0.25f, 0x8},
      {0.5f, 0x1},
      {0.75f, 0x2},  // tie: even (1.0)
      {Prev(0.75f), 0x1},
      {1.0f, 0x2},
      {1.25f, 0x2},  // tie: even (1.0)
      {Next(1.25f), 0x3},
      {1.5f, 0x3},
      {1.75f, 0x4},  // tie: even (2.0)
      {2.0f, 0x4},
      {2.5f, 0x4},
      {Next(2.5f), 0x5},  // 2.5: tie, even
      {3.0f, 0x5},
      {3.5f, 0x6},
      {Prev(3.5f), 0x5},  // 3.5: tie, even
      {4.0f, 0x6},
      {5.0f, 0x6},
      {Next(5.0f), 0x7},  // 5: tie, even
      {6.0f, 0x7},
      {7.0f, 0x7},
      {1e30f, 0x7},  // saturate
      {kInf, 0x7},
      {-kInf, 0xf},
      {kNaN, 0x7},
      {-kNaN, 0x7},  // NaN: +6
      {-0.5f, 0x9},
      {-3.0f, 0xd},
      {-6.0f, 0xf},
      {-1e-30f, 0x8},
      {std::numeric_limits<float>::denorm_min(), 0x0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FloatToE2M1(c.x), c.bits) << c.x;
  }
  for (int code = 0; code < 16; ++code) {
    EXPECT_EQ(FloatToE2M1(E2M1ToFloat(static_cast<uint8_t>(code))), code) << code;
  }
  EXPECT_EQ(E2M1ToFloat(0x7), 6.0f);
  EXPECT_EQ(E2M1ToFloat(0xd), -3.0f);
  EXPECT_TRUE(std::signbit(E2M1ToFloat(0x8)));
}

TEST(QuantFormat, SixteenBitInputsDecodeExactly) {
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(Bf16ToFloat(0x0001), std::ldexp(1.0f, -133));  // smallest bf16 subnormal
  EXPECT_TRUE(std::isnan(Bf16ToFloat(0x7fc0)));
  EXPECT_EQ(Fp16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(Fp16ToFloat(0xc200), -3.0f);
  EXPECT_EQ(Fp16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(Fp16ToFloat(0x0001), Pow2(-24));
  EXPECT_EQ(Fp16ToFloat(0x0400), Pow2(-14));
  EXPECT_EQ(Fp16ToFloat(0x7c00), kInf);
  EXPECT_EQ(Fp16ToFloat(0xfc00), -kInf);
  EXPECT_TRUE(std::isnan(Fp16ToFloat(0x7e00)));
  EXPECT_TRUE(std::signbit(Fp16ToFloat(0x8000)));
}

TEST(QuantFormat, Fp8PerTensorMultipliesByTheReciprocal) {
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, -2.0f, 100.0f, 300.0f, 1e-6f};
  std::vector<uint8_t> q(x.size());
  QuantizeFp8(x.data(), x.size(), 0.5f, q.data());  // x * 2; 600 saturates, 2e-6 underflows
  EXPECT_EQ(q, (std::vector<uint8_t>{0x00, 0x80, 0x40, 0xc8, 0x74, 0x7e, 0x00}));
  // The reciprocal is rounded first: with scale 3, x = 3 gives 3 * float(1/3), not 3 / 3.
  const float three = 3.0f;
  QuantizeFp8(&three, 1, 3.0f, q.data());
  EXPECT_EQ(q[0], FloatToE4M3(3.0f * (1.0f / 3.0f)));
}

TEST(QuantFormat, Fp8PerTokenScalesByTheRowMaximum) {
  const std::vector<float> row = {1.0f, -4.0f, 0.5f, 0.0f};
  std::vector<uint8_t> q(row.size());
  EXPECT_EQ(QuantizeFp8PerToken(row.data(), row.size(), q.data()), 4.0f / 448.0f);
  // x * (448 / 4) = x * 112: 112, -448, 56, 0.
  EXPECT_EQ(q, (std::vector<uint8_t>{0x6e, 0xfe, 0x66, 0x00}));
  // An all-zero row keeps a finite scale (the floor) and quantizes to zeros, -0 included.
  const std::vector<float> zeros = {0.0f, -0.0f};
  EXPECT_EQ(QuantizeFp8PerToken(zeros.data(), 2, q.data()), kPerTokenMinAmax / 448.0f);
  EXPECT_EQ(q[0], 0x00);
  EXPECT_EQ(q[1], 0x80);
}

TEST(QuantFormat, Nvfp4BlockScale) {
  // amax 6 with global scale 1: the block scale is 1.0 (E4M3 0x38) and values keep their size.
  Nvfp4BlockScale s = ComputeNvfp4BlockScale(6.0f, 1.0f);
  EXPECT_EQ(s.bits, 0x38);
  EXPECT_EQ(s.output_scale, 1.0f);
  // A zero block: scale 0, values multiplied by 0.
  s = ComputeNvfp4BlockScale(0.0f, 1.0f);
  EXPECT_EQ(s.bits, 0x00);
  EXPECT_EQ(s.output_scale, 0.0f);
  // A block scale below half the smallest subnormal rounds to zero: the block is zeros (not
  // 1 / 0).
  s = ComputeNvfp4BlockScale(6.0f * Pow2(-11), 1.0f);
  EXPECT_EQ(s.bits, 0x00);
  EXPECT_EQ(s.output_scale, 0.0f);
  // A subnormal block scale: 2^-9 (code 0x01).
  s = ComputeNvfp4BlockScale(6.0f * Pow2(-9), 1.0f);
  EXPECT_EQ(s.bits, 0x01);
  EXPECT_EQ(s.output_scale, Pow2(9));
  // A block scale above 448 saturates; the largest values then saturate in E2M1 too.
  s = ComputeNvfp4BlockScale(6000.0f, 1.0f);
  EXPECT_EQ(s.bits, 0x7e);
  EXPECT_EQ(s.output_scale, 1.0f / 448.0f);
  // The global scale multiplies the block scale and divides the output scale.
  s = ComputeNvfp4BlockScale(6.0f, 16.0f);
  EXPECT_EQ(s.bits, FloatToE4M3(16.0f));
  EXPECT_EQ(s.output_scale, 1.0f);
  // A rounded block scale: amax 1 gives float(1/6), stored as the E4M3 value 0.171875.
  s = ComputeNvfp4BlockScale(1.0f, 1.0f);
  EXPECT_EQ(s.bits, FloatToE4M3(kRcp6));
  EXPECT_EQ(E4M3ToFloat(s.bits), 0.171875f);
  EXPECT_EQ(s.output_scale, 1.0f / (0.171875f * 1.0f));
}

TEST(QuantFormat, Nvfp4RowPacksLowNibbleFirst) {
  // Block 0: 0, 0.5, 1, ..., 6 and negatives (amax 6, global 1: output scale 1). Block 1: all
  // zero.
  std::vector<float> row = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                            -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  row.resize(32, 0.0f);
  std::vector<uint8_t> values(16), scales(2);
  QuantizeNvfp4Row(row.data(), row.size(), 1.0f, values.data(), scales.data());
  EXPECT_EQ(scales[0], 0x38);
  EXPECT_EQ(scales[1], 0x00);
  const std::vector<uint8_t> want = {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
                                     0,    0,    0,    0,    0,    0,    0,    0};
  EXPECT_EQ(values, want);
  // Halving the block's amax (3): block scale 0.5, output scale 2.
  for (int i = 0; i < 16; ++i) row[i] /= 2;
  QuantizeNvfp4Row(row.data(), row.size(), 1.0f, values.data(), scales.data());
  EXPECT_EQ(scales[0], 0x30);
  EXPECT_EQ(values[0], 0x10);
  EXPECT_EQ(values[3], 0x76);
}

TEST(QuantFormat, SwizzledScaleOffsets) {
  // hidden 4096: 256 blocks per row, 64 column tiles of 4, 32768 bytes per 128 rows.
  EXPECT_EQ(Nvfp4ScaleOffset(0, 0, 4096), 0);
  EXPECT_EQ(Nvfp4ScaleOffset(0, 1, 4096), 1);
  EXPECT_EQ(Nvfp4ScaleOffset(0, 3, 4096), 3);
  EXPECT_EQ(Nvfp4ScaleOffset(0, 4, 4096), 512);  // the next column tile
  EXPECT_EQ(Nvfp4ScaleOffset(1, 0, 4096), 16);
  EXPECT_EQ(Nvfp4ScaleOffset(31, 3, 4096), 31 * 16 + 3);
  EXPECT_EQ(Nvfp4ScaleOffset(32, 0, 4096), 4);
  EXPECT_EQ(Nvfp4ScaleOffset(64, 0, 4096), 8);
  EXPECT_EQ(Nvfp4ScaleOffset(96, 2, 4096), 14);
  EXPECT_EQ(Nvfp4ScaleOffset(127, 255, 4096), 63 * 512 + 31 * 16 + 3 * 4 + 3);
  EXPECT_EQ(Nvfp4ScaleOffset(128, 0, 4096), 32768);
  EXPECT_EQ(Nvfp4ScaleBytes(1, 4096), 32768);
  EXPECT_EQ(Nvfp4ScaleBytes(128, 4096), 32768);
  EXPECT_EQ(Nvfp4ScaleBytes(129, 4096), 65536);
  // hidden 16: one block, padded to 4 columns.
  EXPECT_EQ(Nvfp4ScaleBytes(200, 16), 256 * 4);
  EXPECT_EQ(Nvfp4ScaleOffset(130, 0, 16), 512 + 2 * 16);
  // Every (row, block) has its own byte inside the buffer, for a few shapes.
  for (int64_t hidden : {16, 48, 64, 128, 1040}) {
    for (int64_t tokens : {1, 33, 128, 300}) {
      std::set<int64_t> seen;
      for (int64_t r = 0; r < tokens; ++r) {
        for (int64_t b = 0; b < hidden / 16; ++b) {
          const int64_t o = Nvfp4ScaleOffset(r, b, hidden);
          EXPECT_GE(o, 0);
          EXPECT_LT(o, Nvfp4ScaleBytes(tokens, hidden));
          EXPECT_TRUE(seen.insert(o).second) << hidden << " " << r << " " << b;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sightline::quant
