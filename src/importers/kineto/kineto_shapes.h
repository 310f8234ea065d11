// The shapes PyTorch's profiler records for an operator (record_shapes=True: args "Input Dims"
// and "Input type"), turned into the trace model's compact form (model/trace.h,
// RangeTable::shapes), so that a trace of millions of operators keeps each distinct shape once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sightline::kineto {

// Operators with more operands than this (an autograd node of a split into hundreds of tensors, a
// module's forward with all its inputs) are not kept: no GEMM or attention operator has as many,
// and their shapes would only take memory.
inline constexpr int kMaxShapeOperands = 64;

enum class ShapesRead : uint8_t {
  kKept,             // *out holds the compact form
  kTooManyOperands,  // more than kMaxShapeOperands: not kept, and not a fault
  kUnreadable,       // not such an array: counted (kineto_shapes_unreadable)
};

// "[[16, 2048], [2048, 2048], []]" and "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]" ->
// "16x2048,2048x2048,|c10::BFloat16;c10::BFloat16;Scalar". An operand that is not a list of
// integers (a tensor list's nested lists, null) is written '?'. Either text may be empty (not
// recorded). *out is cleared unless kKept.
ShapesRead CompactShapes(std::string_view dims_json, std::string_view types_json, std::string* out);

}  // namespace sightline::kineto
