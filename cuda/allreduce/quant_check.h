// Host side of the quantizing fusions' check: the bytes a kernel wrote, compared bit for bit with
// the CPU reference of the formats (src/shared/quant_format.h) applied to the normalized rows
// the same call wrote as `out` (the quantizer's exact input). The harness copies the rows here;
// docs/allreduce.md, "Quantizing epilogues", says why this makes bit-exactness meaningful.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels.h"

namespace sightline::allreduce {

// Bytes of the quantized values of one row, and of the whole scale buffer.
int64_t QuantRowBytes(Quant q, int64_t hidden);
int64_t QuantScaleBytes(Quant q, int64_t tokens, int64_t hidden);

// The rows to compare: all of them when max_rows is 0 or tokens <= max_rows, else max_rows rows
// spread evenly from the first to the last.
std::vector<int64_t> QuantCheckRows(int64_t tokens, int64_t max_rows);

struct QuantRowsOnHost {
  std::vector<int64_t> rows;    // which rows, ascending
  std::vector<char> norm;       // rows.size() x hidden elements of the dtype: the kernel's `out`
  std::vector<uint8_t> values;  // rows.size() x QuantRowBytes
  std::vector<uint8_t> scales;  // the whole scale buffer (QuantScaleBytes)
  uint8_t scale_fill = 0;       // what the scale buffer held before the call (padding keeps it)
};

// "" when every byte of the checked rows (and, for NVFP4, every swizzled pad byte) is as the CPU
// reference says; else a message naming the first difference. scale_in: the per-tensor FP8 scale
// or the NVFP4 global scale the call was given.
std::string CompareQuantRows(Dtype d, Quant q, int64_t tokens, int64_t hidden, float scale_in,
                             const QuantRowsOnHost& h);

}  // namespace sightline::allreduce
