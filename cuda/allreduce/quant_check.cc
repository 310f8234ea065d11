// See quant_check.h.
#include "quant_check.h"

#include <cstdio>
#include <cstring>

#include "shared/quant_format.h"

namespace sightline::allreduce {
namespace {

std::string Hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%02x", v);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// The row as floats (exact: bf16, fp16 and fp32 all widen to float without rounding).
std::vector<float> RowAsFloat(Dtype d, const char* p, int64_t hidden) {
  std::vector<float> f(static_cast<size_t>(hidden));
  for (int64_t i = 0; i < hidden; ++i) {
    if (d == Dtype::kFp32) {
      std::memcpy(&f[i], p + 4 * i, 4);
    } else {
      uint16_t b;
      std::memcpy(&b, p + 2 * i, 2);
      f[i] = d == Dtype::kBf16 ? quant::Bf16ToFloat(b) : quant::Fp16ToFloat(b);
    }
  }
  return f;
}

}  // namespace

int64_t QuantRowBytes(Quant q, int64_t hidden) {
  return q == Quant::kNvfp4 ? hidden / 2 : q == Quant::kNone ? 0 : hidden;
}

int64_t QuantScaleBytes(Quant q, int64_t tokens, int64_t hidden) {
  if (q == Quant::kFp8PerToken) return 4 * tokens;
  if (q == Quant::kNvfp4) return quant::Nvfp4ScaleBytes(tokens, hidden);
  return 0;
}

std::vector<int64_t> QuantCheckRows(int64_t tokens, int64_t max_rows) {
  std::vector<int64_t> rows;
  if (max_rows <= 0 || tokens <= max_rows) {
    for (int64_t t = 0; t < tokens; ++t) rows.push_back(t);
    return rows;
  }
  for (int64_t i = 0; i < max_rows; ++i) rows.push_back(i * (tokens - 1) / (max_rows - 1));
  return rows;
}

std::string CompareQuantRows(Dtype d, Quant q, int64_t tokens, int64_t hidden, float scale_in,
                             const QuantRowsOnHost& h) {
  const int64_t eb = DtypeBytes(d);
  const int64_t row_bytes = QuantRowBytes(q, hidden);
  const int64_t blocks = hidden / quant::kNvfp4BlockSize;
  std::vector<uint8_t> want(static_cast<size_t>(row_bytes));
  std::vector<uint8_t> want_scales(static_cast<size_t>(blocks));
  for (size_t k = 0; k < h.rows.size(); ++k) {
    const int64_t row = h.rows[k];
    const std::vector<float> x = RowAsFloat(d, h.norm.data() + k * hidden * eb, hidden);
    const uint8_t* got = h.values.data() + k * row_bytes;
    const std::string where = "row " + std::to_string(row) + " of " + std::to_string(tokens);
    if (q == Quant::kFp8) {
      quant::QuantizeFp8(x.data(), x.size(), scale_in, want.data());
    } else if (q == Quant::kFp8PerToken) {
      const float scale = quant::QuantizeFp8PerToken(x.data(), x.size(), want.data());
      float got_scale;
      std::memcpy(&got_scale, h.scales.data() + 4 * row, 4);
      if (std::memcmp(&got_scale, &scale, 4) != 0) {
        return where + ": per-token scale " + Num(got_scale) + ", CPU reference " + Num(scale);
      }
    } else {
      quant::QuantizeNvfp4Row(x.data(), x.size(), scale_in, want.data(), want_scales.data());
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t s = h.scales[quant::Nvfp4ScaleOffset(row, b, hidden)];
        if (s != want_scales[b]) {
          return where + ", block " + std::to_string(b) + ": E4M3 block scale " + Hex(s) +
                 ", CPU reference " + Hex(want_scales[b]) + " (global scale " + Num(scale_in) + ")";
        }
      }
    }
    for (int64_t i = 0; i < row_bytes; ++i) {
      if (got[i] == want[i]) continue;
      if (q == Quant::kNvfp4) {
        return where + ", elements " + std::to_string(2 * i) + ".." + std::to_string(2 * i + 1) +
               ": E2M1 byte " + Hex(got[i]) + ", CPU reference " + Hex(want[i]) + " (inputs " +
               Num(x[2 * i]) + ", " + Num(x[2 * i + 1]) + "; block scale " +
               Hex(want_scales[2 * i / quant::kNvfp4BlockSize]) + ")";
      }
      return where + ", element " + std::to_string(i) + ": E4M3 byte " + Hex(got[i]) +
             ", CPU reference " + Hex(want[i]) + " (input " + Num(x[i]) + ")";
    }
  }
  if (q == Quant::kNvfp4) {
    // Pad entries of the swizzled layout keep what the buffer held: the kernel writes only the
    // [tokens, hidden / 16] entries.
    std::vector<char> valid(h.scales.size(), 0);
    for (int64_t row = 0; row < tokens; ++row) {
      for (int64_t b = 0; b < blocks; ++b) valid[quant::Nvfp4ScaleOffset(row, b, hidden)] = 1;
    }
    for (size_t o = 0; o < h.scales.size(); ++o) {
      if (!valid[o] && h.scales[o] != h.scale_fill) {
        return "swizzled scale pad byte " + std::to_string(o) + " was written (" +
               Hex(h.scales[o]) + ", was " + Hex(h.scale_fill) + ")";
      }
    }
  }
  return "";
}

}  // namespace sightline::allreduce
