#include "importers/torch_snapshot/memory_purpose.h"

#include "base/strings.h"

namespace sightline {
namespace {

// Whether `name` is one of the '|'-separated `names` (exact) or contains one of them (`part`).
bool NameMatches(std::string_view name, std::string_view names, bool part) {
  while (!names.empty()) {
    const size_t bar = names.find('|');
    const std::string_view one = names.substr(0, bar);
    if (part ? name.find(one) != std::string_view::npos : name == one) return true;
    if (bar == std::string_view::npos) break;
    names.remove_prefix(bar + 1);
  }
  return false;
}

bool Matches(const PurposeRule& r, const StackFrame& f) {
  const bool python = EndsWith(f.file, ".py");
  if (r.native == python) return false;
  if (!r.file.empty() && f.file.find(r.file) == std::string_view::npos) return false;
  switch (r.match) {
    case PurposeRule::kAnyName:
      return true;
    case PurposeRule::kNameIs:
      return NameMatches(f.name, r.names, false);
    case PurposeRule::kNameHas:
      return NameMatches(f.name, r.names, true);
  }
  return false;
}

using P = MemoryPurpose;
using R = PurposeRule;

// The rules, checked against each frame from the innermost out; within a frame, in this order.
// docs/analyses/memory.md ("Memory by purpose") lists them, and a test checks that it does.
constexpr PurposeRule kRules[] = {
    // CUDA graph capture: everything allocated while a graph is captured (or, for torch.compile's
    // CUDA graph trees, warmed up and recorded) lives in the graph's private pool.
    {P::kCudaGraphPool, R::kEnclosing, false, "torch/cuda/graphs.py", R::kAnyName, ""},
    {P::kCudaGraphPool, R::kEnclosing, false, "torch/_inductor/cudagraph_trees.py", R::kAnyName,
     ""},
    {P::kCudaGraphPool, R::kEnclosing, false, "vllm/compilation/cuda_graph.py", R::kAnyName, ""},
    {P::kCudaGraphPool, R::kEnclosing, false, "", R::kNameIs, "capture_model"},
    {P::kCudaGraphPool, R::kEnclosing, false, "cuda_graph_runner.py", R::kNameHas, "capture"},
    // KV cache: transformers' cache classes, the engines' KV cache allocation.
    {P::kKvCache, R::kInnermost, false, "transformers/cache_utils.py", R::kAnyName, ""},
    {P::kKvCache, R::kInnermost, false, "vllm/worker/cache_engine.py", R::kAnyName, ""},
    {P::kKvCache, R::kInnermost, false, "sglang/srt/mem_cache/", R::kAnyName, ""},
    {P::kKvCache, R::kInnermost, false, "tensorrt_llm/_torch/pyexecutor/resource_manager.py",
     R::kAnyName, ""},
    {P::kKvCache, R::kInnermost, false, "", R::kNameHas, "kv_cache|KVCache"},
    // Weights: parameters and buffers, made while the model is built, converted or loaded.
    {P::kWeights, R::kInnermost, false, "torch/nn/modules/", R::kNameIs,
     "__init__|reset_parameters|_apply|convert|to|cuda|to_empty|load_state_dict|"
     "_load_from_state_dict|register_parameter|register_buffer"},
    // A model's own classes make their parameters and buffers in their constructors (a norm's
    // torch.ones weight, a rotary embedding's inv_freq); vLLM's and SGLang's layers in
    // create_weights.
    {P::kWeights, R::kInnermost, false, "/models/", R::kNameIs, "__init__"},
    {P::kWeights, R::kInnermost, false, "vllm/model_executor/layers/", R::kNameIs,
     "__init__|create_weights"},
    {P::kWeights, R::kInnermost, false, "sglang/srt/layers/", R::kNameIs,
     "__init__|create_weights"},
    {P::kWeights, R::kInnermost, false, "torch/nn/init.py", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "torch/serialization.py", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "safetensors/", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "transformers/modeling_utils.py", R::kNameIs,
     "from_pretrained|_load_pretrained_model|load_state_dict|_load_state_dict_into_meta_model|"
     "post_init|init_weights|_init_weights|tie_weights|to|cuda|half|float|bfloat16"},
    {P::kWeights, R::kInnermost, false, "accelerate/utils/modeling.py", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "accelerate/big_modeling.py", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "vllm/model_executor/model_loader/", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "sglang/srt/model_loader/", R::kAnyName, ""},
    {P::kWeights, R::kInnermost, false, "", R::kNameIs,
     "from_pretrained|load_state_dict|load_weights|load_model|reset_parameters|init_weights"},
    // Activations and workspace: made inside a forward pass (freed when it ends, unless kept), and
    // the cuBLAS workspaces PyTorch allocates at the first matmul on a stream and keeps.
    {P::kActivations, R::kInnermost, true, "", R::kNameHas,
     "setWorkspaceForHandle|getCUDABlasLtWorkspace|getCurrentCUDABlasHandle|"
     "getCurrentCUDABlasLtHandle"},
    {P::kActivations, R::kInnermost, false, "", R::kNameIs, "forward"},
    {P::kActivations, R::kInnermost, false, "torch/nn/modules/module.py", R::kNameIs,
     "_call_impl|_wrapped_call_impl"},
    {P::kActivations, R::kInnermost, false, "torchinductor_", R::kAnyName, ""},
    {P::kActivations, R::kInnermost, false, "torch/_dynamo/eval_frame.py", R::kAnyName, ""},
};

}  // namespace

std::span<const PurposeRule> PurposeRules() { return kRules; }

MemoryPurpose PurposeOfStack(std::span<const StackFrame> frames, PoolHint pool) {
  if (pool == PoolHint::kUnknown) {
    for (const StackFrame& f : frames) {
      for (const PurposeRule& r : kRules) {
        if (r.scope == R::kEnclosing && Matches(r, f)) return r.purpose;
      }
    }
  }
  for (const StackFrame& f : frames) {
    for (const PurposeRule& r : kRules) {
      if (r.scope != R::kInnermost || !Matches(r, f)) continue;
      // In a private pool only weights and a KV cache are themselves (a MemPool that holds
      // them); anything else there is the CUDA graph's.
      if (pool == PoolHint::kPrivate && r.purpose != P::kWeights && r.purpose != P::kKvCache) {
        return P::kCudaGraphPool;
      }
      return r.purpose;
    }
  }
  if (pool == PoolHint::kPrivate) return P::kCudaGraphPool;
  return frames.empty() ? P::kUnknown : P::kOther;
}

bool IsTorchPythonFile(std::string_view file) {
  size_t at = std::string_view::npos;
  for (std::string_view dir :
       {std::string_view("site-packages/"), std::string_view("dist-packages/")}) {
    const size_t k = file.rfind(dir);
    if (k != std::string_view::npos && (at == std::string_view::npos || k + dir.size() > at)) {
      at = k + dir.size();
    }
  }
  if (at != std::string_view::npos) return file.substr(at).starts_with("torch/");
  return file.starts_with("torch/") || file.find("/torch/") != std::string_view::npos;
}

}  // namespace sightline
