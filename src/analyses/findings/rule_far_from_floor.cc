// Rule far_from_floor: a family of steady steps (decode at one batch, prefill) takes at least
// kFarFromFloorRatio times the least time the GPU allows for its work (the floor analysis: bytes
// over memory bandwidth, FLOPs over tensor throughput), and names the part of the time above the
// floor that holds it there: GPU idle, non-GEMM kernels, or GEMM/attention kernels below peak,
// and, where the trace names layers, the layer with the most time above its own floor. Only with
// --model-config. docs/analyses/findings.md, "far_from_floor".
#include <fmt/format.h>

#include "analyses/findings/findings.h"
#include "analyses/floor/floor.h"

namespace sightline {
namespace {

constexpr int64_t kMinSteps = 3;
constexpr double kHighRatio = 5.0;

std::string Advice(const std::string& holder, bool compute_bound) {
  if (holder == "GPU idle") {
    return "The GPU waits between kernels inside the step: the host launches too slowly for the "
           "work. Capture the step in a CUDA graph (torch.compile mode=\"reduce-overhead\", "
           "vLLM/SGLang CUDA graphs, TensorRT-LLM's cuda_graph_config), move host work "
           "(sampling, scheduling, Python bookkeeping) off the critical path, and remove "
           "synchronizations inside the step.";
  }
  if (holder == "non-GEMM kernels") {
    return "Kernels outside the GEMMs and attention (norms, RoPE, activations, casts, copies) "
           "take the time: each re-reads its activations and pays a launch. Fuse them (torch."
           "compile, fused RMSNorm+residual, fused RoPE in the attention kernel, fused "
           "SiLU-and-multiply), and check the kernel_chain finding for the recurring chains.";
  }
  if (holder == "CUDA graphs traced whole") {
    return "The graphs were traced whole, so their kernels are unknown: record with graph nodes "
           "traced (sightline record's default, nsys --cuda-graph-trace=node) to see which part "
           "holds the step above its floor.";
  }
  return compute_bound
             ? "The GEMM and attention kernels run well below the tensor cores' peak: check "
               "their tile shapes and wave quantization (kernel_summary, ncu), use FP8 GEMMs "
               "where accuracy allows, and attention kernels tuned for the sequence lengths."
             : "The GEMM and attention kernels run well below the memory bandwidth the floor "
               "assumes: at small batch prefer kernels tuned for decode (GEMV/split-K, "
               "weight-only quantized GEMMs, which also lower the floor itself), and "
               "paged/flash-decoding attention that splits long contexts across SMs.";
}

}  // namespace

Status RuleFarFromFloor(AnalysisContext& c, std::vector<Finding>& out) {
  if (!c.inputs().model) return Status::Ok();
  ASSIGN_OR_RETURN(const FloorResult* r, CachedFloor(c));
  if (!r->computed) return Status::Ok();
  for (const FloorFamily& fam : r->families) {
    if (fam.steps < kMinSteps || fam.ratio < kFarFromFloorRatio) continue;
    Finding f;
    f.id = "far_from_floor";
    f.severity = fam.ratio >= kHighRatio ? Severity::kHigh : Severity::kMedium;
    f.title =
        fmt::format("{} steps take {:.1f}x their floor of {} ({}-bound): {} holds them there",
                    fam.name, fam.ratio, FormatDuration(static_cast<int64_t>(fam.median_floor_ns)),
                    fam.compute_bound ? "compute" : "memory", fam.holder);
    f.evidence.push_back({"steps", "Steps", fam.steps, Unit::kCount});
    f.evidence.push_back({"wall_ns", "Median wall time", static_cast<int64_t>(fam.median_wall_ns),
                          Unit::kDurationNs});
    f.evidence.push_back(
        {"floor_ns", "Floor", static_cast<int64_t>(fam.median_floor_ns), Unit::kDurationNs});
    f.evidence.push_back({"ratio", "Wall / floor", fam.ratio, Unit::kRatio});
    f.evidence.push_back({"idle_ns", "GPU idle (median step)", static_cast<int64_t>(fam.idle_ns),
                          Unit::kDurationNs});
    f.evidence.push_back({"other_ns", "Non-GEMM kernels (median step)",
                          static_cast<int64_t>(fam.other_ns), Unit::kDurationNs});
    f.evidence.push_back({"gemm_above_ns", "GEMM/attention above the floor (median step)",
                          static_cast<int64_t>(fam.gemm_above_ns), Unit::kDurationNs});
    // Where the trace names layers: the layer that holds the most time above its own floor.
    const FloorLayer* layer = r->TopLayerOf(fam.name);
    if (layer != nullptr) {
      f.title += fmt::format("; of its layers, {} is the furthest above its floor ({:.1f}x, {})",
                             layer->name, layer->ratio, layer->holder);
      f.evidence.push_back({"layer", "Layer with the most time above its floor", layer->name});
      f.evidence.push_back({"layer_ratio", "Its GPU span / its floor", layer->ratio, Unit::kRatio});
      f.evidence.push_back({"layer_above_ns", "Its time above its floor (all steps)",
                            static_cast<int64_t>(layer->above_ns), Unit::kDurationNs});
    }
    f.where = fmt::format("{} steps of the main loop; peaks: {}", fam.name, r->peaks.memory_source);
    f.recommendation = Advice(fam.holder, fam.compute_bound);
    // What removing the part that holds the steps would give back, over the steps seen.
    f.estimated_savings_ns = static_cast<int64_t>(fam.holder_ns);
    for (const FloorStep& s : r->steps) {
      if (s.group == fam.name) f.AddSpan(s.start_ns, s.end_ns, r->device);
    }
    f.SortSpans();
    out.push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace sightline
