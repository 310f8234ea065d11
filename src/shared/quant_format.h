// CPU reference of the low-precision formats that the quantizing all-reduce epilogues write
// (cuda/allreduce/quant_epilogue.cuh): FP8 E4M3 with a per-tensor or per-token scale, and NVFP4
// (E2M1 values in blocks of 16, one E4M3 scale per block, a global FP32 scale, the block scales in
// the 128x4 swizzled layout). The GPU harness compiles this file too and compares its kernels'
// bytes with it bit for bit, so the arithmetic here is the kernels' arithmetic, step for step.
// Pure C++ (no CUDA). docs/allreduce.md, section "Quantizing epilogues", defines the formats.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sightline::quant {

inline constexpr float kE4M3Max = 448.0f;
inline constexpr float kE2M1Max = 6.0f;
inline constexpr int kNvfp4BlockSize = 16;  // E2M1 values per E4M3 block scale
// Per-token FP8: a row's amax is at least this, so an all-zero row gets a finite scale.
inline constexpr float kPerTokenMinAmax = 1e-6f;
// 1/6 as a float constant: the block scale is global * (amax * kRcp6), one rounding per step.
inline constexpr float kRcp6 = 1.0f / 6.0f;

// float -> E4M3 (4 exponent bits, bias 7, 3 mantissa bits; no infinity): round to nearest, ties to
// even; finite overflow and +-infinity saturate to +-448 (0x7E / 0xFE); NaN -> 0x7F; magnitudes at
// or below 2^-10 (half the smallest subnormal, 2^-9) -> zero with the input's sign. As CUDA's
// __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) and cvt.rn.satfinite.e4m3x2.f32.
uint8_t FloatToE4M3(float x);
// E4M3 -> float, exact; 0x7F and 0xFF are NaN.
float E4M3ToFloat(uint8_t bits);

// float -> E2M1 code in the low 4 bits (sign bit 3; 2 exponent bits, bias 1; 1 mantissa bit:
// 0, 0.5, 1, 1.5, 2, 3, 4, 6): round to nearest, ties to even; above 6 and +-infinity saturate to
// +-6; NaN -> +6 (0x7); magnitudes at or below 0.25 -> zero with the input's sign. As CUDA's
// __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) and cvt.rn.satfinite.e2m1x2.f32.
uint8_t FloatToE2M1(float x);
// E2M1 code (low 4 bits) -> float, exact.
float E2M1ToFloat(uint8_t code);

// The 16-bit input dtypes, exactly.
float Bf16ToFloat(uint16_t bits);
float Fp16ToFloat(uint16_t bits);

// FP8 with a per-tensor scale (the dequantization scale, as TensorRT-LLM passes it):
// out[i] = E4M3(x[i] * (1 / scale)).
void QuantizeFp8(const float* x, size_t n, float scale, uint8_t* out);

// FP8 with a per-token dynamic scale: amax = max(kPerTokenMinAmax, max |x|), then
// out[i] = E4M3(x[i] * (448 / amax)). Returns the row's dequantization scale, amax / 448.
float QuantizeFp8PerToken(const float* row, size_t n, uint8_t* out);

// One NVFP4 block's scale: sf = global_scale * (amax * kRcp6), stored as E4M3 (`bits`); the
// values are then multiplied by output_scale = 1 / (E4M3ToFloat(bits) * (1 / global_scale)), or 0
// when the stored scale is 0. global_scale is the encoding scale (448 * 6 / tensor amax in
// TensorRT-LLM), so value = E2M1 x E4M3ToFloat(bits) / global_scale.
struct Nvfp4BlockScale {
  uint8_t bits = 0;
  float output_scale = 0;
};
Nvfp4BlockScale ComputeNvfp4BlockScale(float block_amax, float global_scale);

// Quantizes one row of n values (n a multiple of 16) to NVFP4: values[n / 2] bytes, two E2M1 codes
// per byte, element 2i in the low nibble; scales[n / 16] E4M3 bytes in row order (see
// Nvfp4ScaleOffset for where they go in the swizzled layout).
void QuantizeNvfp4Row(const float* row, size_t n, float global_scale, uint8_t* values,
                      uint8_t* scales);

// The swizzled block-scale layout (TensorRT-LLM's SWIZZLED, the layout block-scaled GEMMs read):
// the [rows, hidden / 16] scale matrix padded to multiples of 128 rows and 4 columns, stored as
// 128x4 tiles (row-tile major, then column tile), each tile 512 bytes: byte (row % 32) * 16 + (row
// % 128 / 32) * 4 + block % 4. Pad entries are not written by the kernels.
int64_t Nvfp4ScaleOffset(int64_t row, int64_t block, int64_t hidden);
// Bytes of the swizzled scale buffer for `tokens` rows of `hidden` values, padding included.
int64_t Nvfp4ScaleBytes(int64_t tokens, int64_t hidden);

}  // namespace sightline::quant
