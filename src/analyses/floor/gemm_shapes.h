// A step's work from the GEMM shapes the trace records (PyTorch's profiler with record_shapes=True:
// each operator's input dimensions and types, model/trace.h RangeTable::shapes), for a floor
// without a model config: the FLOPs of the step's aten GEMM and attention operators and the bytes
// of their weight operands and of attention's keys and values. docs/analyses/floor.md, "Without a
// config".
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analyses/floor/step_cost.h"
#include "model/trace.h"

namespace sightline {

// One operator's operands, parsed from the compact form: dims[i] empty for a scalar; known[i]
// false for an operand that is not a tensor of integers ('?': a tensor list).
struct OpShapes {
  std::vector<std::vector<int64_t>> dims;
  std::vector<bool> known;
  std::vector<std::string_view> types;  // views into the trace's string pool
};
// False when the text is not the compact form.
bool ParseOpShapes(std::string_view compact, OpShapes& out);

// Bytes of one element of a PyTorch type as the profiler names it ("c10::BFloat16" 2, "float" 4,
// "c10::Float8_e4m3fn" 1); 0 when unknown (not a tensor type, or one this table lacks).
int64_t ElementBytes(std::string_view type);

// The operators whose cost the shapes give: linear, mm, addmm, matmul, bmm, baddbmm, and
// scaled-dot-product attention with its backends (flash, memory-efficient, cuDNN).
enum class GemmOp : uint8_t { kNone, kLinear, kMm, kAddmm, kMatmul, kBmm, kBaddbmm, kAttention };
GemmOp GemmOpOf(std::string_view op_name);

// Adds one operator's cost to `cost` (gemm_flops, weight_bytes; attention_flops and
// kv_read_bytes for attention); sets *weight_element_bytes to its weight operand's element size
// (0 without a weight). False, adding nothing, when its shapes do not fit the operator.
// The weight: the 2-D right-hand operand of linear, mm, addmm and matmul (a parameter has no
// batch or token dimension; the left operand carries the tokens), with linear's and addmm's 1-D
// bias; batched operands (bmm, baddbmm, matmul of two batched tensors) are activations.
bool AddGemmOpCost(GemmOp op, const OpShapes& shapes, StepCost& cost,
                   int64_t* weight_element_bytes);

// What the shapes say about a stretch of the trace.
struct ShapesWork {
  StepCost cost;
  int64_t ops = 0;         // GEMM and attention operators counted
  int64_t unreadable = 0;  // such operators whose shapes are missing or do not fit
  // The first attention operator's sequences (q's batch), queries per sequence (L) and keys per
  // sequence (S); -1 without one. L = 1: a decode step over S - 1 cached tokens; L > 1: prefill.
  int64_t sequences = -1, queries = -1, keys = -1;
};

// The trace's outermost GEMM and attention operators (one nested in another, as linear's mm, is
// the outer one's work), by start time, with what each costs.
class GemmShapeIndex {
 public:
  explicit GemmShapeIndex(const Trace& trace);
  // Whether any such operator carries shapes.
  bool any() const { return with_shapes_ > 0; }
  // The operators that start in [start, end), on any thread.
  ShapesWork Within(TimeNs start_ns, TimeNs end_ns) const;
  // The element size of the weight operands holding the most bytes (the dtype whose tensor
  // throughput applies); 0 when no operator has a weight.
  int64_t weight_element_bytes() const { return weight_element_bytes_; }

 private:
  struct Op {
    TimeNs start_ns;
    bool readable;
    StepCost cost;
    int64_t sequences = -1, queries = -1, keys = -1;  // attention: ShapesWork's
  };
  std::vector<Op> ops_;
  int64_t with_shapes_ = 0;
  int64_t weight_element_bytes_ = 0;
};

}  // namespace sightline
