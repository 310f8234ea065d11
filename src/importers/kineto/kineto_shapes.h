// The shapes PyTorch's profiler records for an operator (record_shapes=True: args "Input Dims"
// and "Input type"), turned into the trace model's compact form (model/trace.h,
// RangeTable::shapes), so that a trace of millions of operators keeps each distinct shape once.
#pragma once

#include <string>
#include <string_view>

namespace sightline::kineto {

// Operands above this many are not kept (a concatenation of a long tensor list): unreadable.
inline constexpr int kMaxShapeOperands = 64;

// "[[16, 2048], [2048, 2048], []]" and "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]" ->
// "16x2048,2048x2048,|c10::BFloat16;c10::BFloat16;Scalar". An operand that is not a list of
// integers (a tensor list's nested lists, null) is written '?'. Either text may be empty (not
// recorded). False, with *out cleared, when a text is not such an array (malformed, escaped
// strings, over kMaxShapeOperands operands).
bool CompactShapes(std::string_view dims_json, std::string_view types_json, std::string* out);

}  // namespace sightline::kineto
