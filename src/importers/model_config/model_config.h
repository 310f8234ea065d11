// Reader of a Hugging Face model's config.json (`sightline analyze --model-config FILE`): the
// shapes that decide what a step of the model must read and compute (hidden size, layers, heads,
// KV heads, head dim, MLP and expert sizes, vocabulary, tied embeddings, dtype), for the floor
// analysis (analyses/floor/). Not a timeline: a document of its own kind. Known shapes: llama,
// mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3; every size is
// checked against a bound before it is used. docs/formats/model-config.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/input_sniff.h"
#include "base/status.h"

namespace sightline {

// Multi-head latent attention (DeepSeek V2/V3): queries through a low-rank projection, keys and
// values from one compressed latent per token, which is what the KV cache holds.
struct LatentAttention {
  int64_t q_lora_rank = 0;  // 0: queries projected directly (q_lora_rank null)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

struct ModelConfig {
  std::string path;
  std::string model_type;  // "llama", "qwen3_moe", ...
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;       // num_key_value_heads; num_heads when absent
  int64_t head_dim = 0;           // head_dim; hidden_size / num_heads when absent or null
  int64_t intermediate_size = 0;  // dense MLP (Mixtral: each expert's)
  int64_t vocab_size = 0;
  bool tied_embeddings =
      false;              // tie_word_embeddings (false when absent, as these models' classes)
  bool qkv_bias = false;  // qwen2, qwen2_moe; attention_bias where stated
  bool qk_norm = false;   // qwen3, qwen3_moe: an RMSNorm over each head's q and k
  // Sliding-window attention: the keys a query sees are at most this many; 0 when none (null, or
  // use_sliding_window false).
  int64_t sliding_window = 0;

  // Mixture of experts; experts == 0 for a dense model.
  int64_t experts = 0;              // num_local_experts / num_experts / n_routed_experts
  int64_t experts_per_token = 0;    // num_experts_per_tok
  int64_t expert_intermediate = 0;  // moe_intermediate_size (Mixtral: intermediate_size)
  int64_t shared_intermediate = 0;  // always-active shared experts' MLP width, summed; 0 none
  bool shared_expert_gate = false;  // qwen2_moe: a sigmoid gate (hidden -> 1) on the shared expert
  int64_t dense_layers = 0;         // first layers with a dense MLP (first_k_dense_replace)
  int64_t sparse_step = 1;          // Qwen: layer l is MoE when (l + 1) % decoder_sparse_step == 0
  int64_t moe_layer_freq = 1;       // DeepSeek: layer l is MoE when l % moe_layer_freq == 0
  std::vector<int64_t> mlp_only_layers;  // Qwen: layers with a dense MLP whatever the step

  bool latent = false;  // DeepSeek's multi-head latent attention
  LatentAttention mla;

  // Element sizes. dtype: torch_dtype or dtype ("bfloat16", "float16", "float32"); when absent,
  // bfloat16 is taken and dtype_stated is false. Linear weights of an fp8-quantized checkpoint
  // (quantization_config.quant_method "fp8") take 1 byte; embeddings, norms and the KV cache keep
  // dtype's size.
  std::string dtype = "bfloat16";
  bool dtype_stated = false;
  int64_t dtype_bytes = 2;
  int64_t linear_weight_bytes = 2;
  std::string quantization;  // quant_method when stated ("fp8"), else ""

  // Not from config.json: what a PyTorch memory snapshot of the program says (`analyze
  // --weights-snapshot`, analyses/floor/weights_snapshot_kind.h): the bytes of the weights alive at
  // its dump; 0 none. A ModelConfig read from no config.json (has_shapes() false) carries only
  // these, and the floor is theirs alone.
  int64_t snapshot_weight_bytes = 0;
  std::string snapshot_weights;  // what gave them: "snap.pickle: 40 allocations on device 0 ..."

  bool has_shapes() const { return num_layers > 0; }
  bool moe() const { return experts > 0; }
  // Whether layer `layer` (0-based) has a MoE block rather than a dense MLP.
  bool IsMoeLayer(int64_t layer) const;
};

// Parses the text of a config.json (`path` names it in errors). InvalidInput, saying which field
// and what to do, when a field a shape needs is missing, of the wrong type or out of bounds, or
// when model_type is not one of the known shapes.
StatusOr<ModelConfig> ParseModelConfig(std::string_view json, const std::string& path);
StatusOr<ModelConfig> ReadModelConfig(const std::string& path);

// True when `head` (a file's first bytes) looks like a Hugging Face config.json: a JSON object
// with "model_type" and one of the size keys, and none of a trace's keys.
bool LooksLikeModelConfig(std::string_view head);

// The first of the JSON formats recognised by their keys (after the text formats with a fixed
// start: ncu, the sweep): it refuses a trace's keys, and no serving or log format has model_type
// with a size key.
inline constexpr ReaderSpec kModelConfigReader = {
    "hf-model-config", "Hugging Face model config.json (--model-config: the floor analysis)", 650,
    &LooksLikeModelConfig};

}  // namespace sightline
