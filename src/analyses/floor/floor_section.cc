// The "floor" section: the model and the peaks used, a table per family of steps (measured time
// against the floor, and the split of the time above it) and the first steady steps.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>

#include "analyses/common/analysis_context.h"
#include "analyses/floor/floor.h"
#include "importers/model_config/model_config.h"

namespace sightline {
namespace {

int64_t Ns(double ns) { return static_cast<int64_t>(std::llround(ns)); }
int64_t Bytes(double b) { return static_cast<int64_t>(std::llround(b)); }

// Sampled percentages, empty where not sampled (-1).
void AddPercents(std::vector<Value>& row, double dram_pct, double tensor_pct) {
  for (double pct : {dram_pct, tensor_pct}) {
    if (pct >= 0) {
      row.emplace_back(pct);
    } else {
      row.emplace_back(std::monostate{});
    }
  }
}

// One family's parts against their floors: table `key`.
void AddLayersTable(const FloorFamilyLayers& r, const std::string& key, const std::string& title,
                    Section& s) {
  if (r.layers.empty()) return;
  Table& t = s.AddTable(key, title,
                        {{"part", "Part", Unit::kText},
                         {"steps", "Steps", Unit::kCount},
                         {"kernels", "Kernels per step", Unit::kNumber},
                         {"span_ns", "GPU span (median)", Unit::kDurationNs},
                         {"busy_ns", "GPU busy (median)", Unit::kDurationNs},
                         {"floor_ns", "Floor", Unit::kDurationNs},
                         {"ratio", "Span / floor", Unit::kRatio},
                         {"busy_ratio", "Busy / floor", Unit::kRatio},
                         {"bound", "Bound", Unit::kText},
                         {"idle_ns", "GPU idle", Unit::kDurationNs},
                         {"other_ns", "Non-GEMM kernels", Unit::kDurationNs},
                         {"gemm_above_ns", "GEMM/attn above floor", Unit::kDurationNs},
                         {"above_ns", "Above floor (all steps)", Unit::kDurationNs},
                         {"weight_bytes", "Weights read", Unit::kBytes},
                         {"kv_bytes", "KV read+written", Unit::kBytes},
                         {"flops", "FLOPs", Unit::kNumber},
                         {"holder", "Most above floor", Unit::kText}});
  bool sampled = false;
  for (const FloorLayer& l : r.layers) sampled |= l.dram_pct >= 0 || l.tensor_pct >= 0;
  if (sampled) {
    t.columns.push_back({"dram_pct", "DRAM r+w (sampled)", Unit::kPercent});
    t.columns.push_back({"tensor_pct", "Tensor active (sampled)", Unit::kPercent});
  }
  for (const FloorLayer& l : r.layers) {
    std::vector<Value> row = {l.name,
                              l.steps,
                              l.steps > 0 ? static_cast<double>(l.kernels) / l.steps : 0.0,
                              Ns(l.span_ns),
                              Ns(l.busy_ns),
                              Ns(l.floor_ns),
                              l.ratio,
                              l.busy_ratio,
                              std::string(l.compute_bound ? "compute" : "memory"),
                              Ns(l.idle_ns),
                              Ns(l.other_ns),
                              Ns(l.gemm_above_ns),
                              Ns(l.above_ns),
                              Bytes(l.weight_bytes),
                              Bytes(l.kv_bytes),
                              l.flops,
                              l.holder};
    if (sampled) AddPercents(row, l.dram_pct, l.tensor_pct);
    t.rows.push_back(std::move(row));
  }
  const int64_t placed = r.placed_by_range + r.placed_by_graph_path;
  t.note = fmt::format(
      "The steps of family \"{}\". Each kernel counts in the part that the ranges around its "
      "launch name, or, for a kernel replayed from a CUDA graph, those open at its node's capture "
      "(or around its eager counterpart): {} of the family's {} kernels ({:.1f}%) are placed, {} "
      "by their launch's ranges and {} by their graph node's. A part's floor is its own weights, "
      "its share of the KV cache and its FLOPs at the step's work; span = its first kernel's start "
      "to its last kernel's end in the step; idle = span - busy; above floor = span - floor "
      "(docs/analyses/floor.md, \"Per layer\").",
      r.family, placed, r.family_kernels,
      r.family_kernels > 0 ? 100.0 * static_cast<double>(placed) / r.family_kernels : 0.0,
      r.placed_by_range, r.placed_by_graph_path);
  for (const std::string& n : r.notes) t.note += " " + n;
}

// Table "layers" for the family with the most steady time (its notes are the section's); one
// table per other family, "layers_<kind>" ("layers_prefill"; "layers_decode_2" for a kind's
// second family), titled with the family.
void AddLayersTables(const FloorResult& r, Section& s) {
  FloorFamilyLayers main;
  main.family = r.layers_family;
  main.layers = r.layers;
  main.family_kernels = r.family_kernels;
  main.placed_by_range = r.placed_by_range;
  main.placed_by_graph_path = r.placed_by_graph_path;
  AddLayersTable(main, "layers", "Layers against their floor", s);
  std::map<std::string, int> seen;
  for (const FloorFamilyLayers& f : r.other_layers) {
    std::string kind = "mixed";
    for (const FloorFamily& fam : r.families) {
      if (fam.name == f.family) kind = fam.family;
    }
    const int n = ++seen[kind];
    const std::string key = n == 1 ? "layers_" + kind : fmt::format("layers_{}_{}", kind, n);
    AddLayersTable(f, key, "Layers against their floor: " + f.family, s);
  }
}

// The model's facts: its parameters from the config, where the weight bytes came from, a
// snapshot's weights beside the config's count.
void AddModelFacts(const FloorResult* r, const ModelConfig* model, Section& s) {
  s.AddFact("model", "Model", r->model);
  if (model->has_shapes()) {
    s.AddFact("parameters", "Parameters", r->sizes.total, Unit::kNumber);
    s.AddFact("kv_bytes_per_token", "KV cache per token (all layers)",
              Bytes(r->sizes.kv_elements_per_token_layer *
                    static_cast<double>(r->dtype_bytes * model->num_layers)),
              Unit::kBytes);
  }
  s.AddFact("weights_from", "Weight bytes from", r->weights_from);
  if (model->snapshot_weight_bytes > 0) {
    // With a config too: the weights the program held, beside the config's count.
    s.AddFact("snapshot_weight_bytes", "Weights in the memory snapshot",
              model->snapshot_weight_bytes, Unit::kBytes);
    if (model->has_shapes() && model->linear_weight_bytes == model->dtype_bytes) {
      s.AddFact("config_weight_bytes", "Weights by the config (parameters x dtype)",
                Bytes(r->sizes.total * static_cast<double>(r->dtype_bytes)), Unit::kBytes);
    }
  }
}

}  // namespace

Status RunFloorSection(AnalysisContext& context, int input, Report& report) {
  const std::shared_ptr<const ModelConfig>& model = context.inputs().model;
  if (!model && !context.options().floor.asks_for_shapes()) return Status::Ok();
  ASSIGN_OR_RETURN(const FloorResult* r, CachedFloor(context));
  Section& s = report.AddSection("floor", "How far from the hardware", input);
  if (!model) {
    // A floor from the trace's GEMM shapes, or why there is none.
    s.AddFact("model", "Model", std::string("unknown (no --model-config)"));
    if (r->from_gemm_shapes) {
      s.AddFact("weights_from", "Weight bytes from", r->weights_from);
      if (r->shape_ops_unreadable > 0) {
        s.AddFact("shape_ops_unreadable", "GEMM operators without usable shapes",
                  r->shape_ops_unreadable, Unit::kCount);
      }
    }
  } else {
    AddModelFacts(r, model.get(), s);
  }
  if (!r->peaks.device.empty()) s.AddFact("device", "Device", r->peaks.device);
  if (r->peaks.memory_gbps > 0) {
    s.AddFact("memory_bandwidth_gbps", "Memory bandwidth used", r->peaks.memory_gbps, Unit::kGBps);
    s.AddFact("memory_bandwidth_source", "Memory bandwidth from", r->peaks.memory_source);
  }
  if (r->peaks.tensor_tflops > 0) {
    s.AddFact("tensor_tflops", "Tensor throughput used (TFLOP/s)", r->peaks.tensor_tflops,
              Unit::kNumber);
    s.AddFact("tensor_tflops_source", "Tensor throughput from", r->peaks.tensor_source);
  }
  if (!r->computed) {
    s.notes.push_back("No floor: " + r->not_computed + ".");
    return Status::Ok();
  }
  Table& f = s.AddTable("families", "Steps against their floor, by family",
                        {{"family", "Family", Unit::kText},
                         {"steps", "Steps", Unit::kCount},
                         {"wall_ns", "Wall (median)", Unit::kDurationNs},
                         {"busy_ns", "GPU busy (median)", Unit::kDurationNs},
                         {"floor_ns", "Floor", Unit::kDurationNs},
                         {"ratio", "Wall / floor", Unit::kRatio},
                         {"busy_ratio", "Busy / floor", Unit::kRatio},
                         {"bound", "Bound", Unit::kText},
                         {"idle_ns", "GPU idle", Unit::kDurationNs},
                         {"other_ns", "Non-GEMM kernels", Unit::kDurationNs},
                         {"gemm_above_ns", "GEMM/attn above floor", Unit::kDurationNs},
                         {"whole_graph_ns", "Whole graphs", Unit::kDurationNs, true},
                         {"weight_bytes", "Weights read", Unit::kBytes},
                         {"kv_bytes", "KV read+written", Unit::kBytes},
                         {"flops", "FLOPs", Unit::kNumber},
                         {"holder", "Most above floor", Unit::kText}});
  bool sampled = false;
  for (const FloorFamily& fam : r->families) sampled |= fam.dram_pct >= 0 || fam.tensor_pct >= 0;
  if (sampled) {
    f.columns.push_back({"dram_pct", "DRAM r+w (sampled)", Unit::kPercent});
    f.columns.push_back({"tensor_pct", "Tensor active (sampled)", Unit::kPercent});
  }
  for (const FloorFamily& fam : r->families) {
    std::vector<Value> row = {fam.name,
                              fam.steps,
                              Ns(fam.median_wall_ns),
                              Ns(fam.median_busy_ns),
                              Ns(fam.median_floor_ns),
                              fam.ratio,
                              fam.busy_ratio,
                              std::string(fam.compute_bound ? "compute" : "memory"),
                              Ns(fam.idle_ns),
                              Ns(fam.other_ns),
                              Ns(fam.gemm_above_ns),
                              Ns(fam.whole_graph_ns),
                              Bytes(fam.weight_bytes),
                              Bytes(fam.kv_bytes),
                              fam.flops,
                              fam.holder};
    if (sampled) AddPercents(row, fam.dram_pct, fam.tensor_pct);
    f.rows.push_back(std::move(row));
  }
  f.note = fmt::format(
      "Floor = max(bytes / memory bandwidth, FLOPs / tensor throughput) of the median step's "
      "work. The split of the time above it (each part's median over the steps): GPU idle = wall - "
      "busy; "
      "non-GEMM kernels = busy time outside GEMM and attention kernels; GEMM/attn above floor = "
      "GEMM and attention kernel time - floor. A family is far from its floor at {:.0f}x "
      "(docs/analyses/floor.md).",
      kFarFromFloorRatio);
  Table& t = s.AddTable("steps", "Steady steps",
                        {{"index", "Step", Unit::kCount},
                         {"start_ns", "Start", Unit::kTimestampNs},
                         {"family", "Family", Unit::kText},
                         {"decode_sequences", "Decode seqs", Unit::kNumber},
                         {"decode_context", "Context tokens", Unit::kNumber},
                         {"prefill_tokens", "Prefill tokens", Unit::kNumber},
                         {"wall_ns", "Wall", Unit::kDurationNs},
                         {"busy_ns", "GPU busy", Unit::kDurationNs},
                         {"memory_floor_ns", "Memory floor", Unit::kDurationNs},
                         {"compute_floor_ns", "Compute floor", Unit::kDurationNs},
                         {"ratio", "Wall / floor", Unit::kRatio},
                         {"gemm_attention_ns", "GEMM+attn", Unit::kDurationNs},
                         {"other_ns", "Other GPU", Unit::kDurationNs},
                         {"work_from", "Work from", Unit::kText, true}});
  if (sampled) {
    t.columns.push_back({"dram_pct", "DRAM r+w (sampled)", Unit::kPercent});
    t.columns.push_back({"tensor_pct", "Tensor active (sampled)", Unit::kPercent});
  }
  for (const FloorStep& st : r->steps) {
    if (static_cast<int64_t>(t.rows.size()) >= context.options().top_n) break;
    std::vector<Value> row = {st.index,
                              st.start_ns,
                              st.family,
                              st.work.decode_sequences,
                              st.work.decode_context,
                              st.work.prefill_tokens,
                              st.wall_ns,
                              st.busy_ns,
                              Ns(st.memory_floor_ns),
                              Ns(st.compute_floor_ns),
                              st.ratio(),
                              st.gemm_attention_ns,
                              st.other_ns,
                              st.work_from};
    if (sampled) AddPercents(row, st.dram_pct, st.tensor_pct);
    t.rows.push_back(std::move(row));
  }
  if (static_cast<int64_t>(r->steps.size()) > context.options().top_n) {
    t.note = fmt::format("The first {} of {} steady steps.", t.rows.size(), r->steps.size());
  }
  AddLayersTables(*r, s);
  for (const std::string& n : r->notes) s.notes.push_back(n);
  return Status::Ok();
}

}  // namespace sightline
