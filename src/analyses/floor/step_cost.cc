#include "analyses/floor/step_cost.h"

#include <algorithm>
#include <cmath>

namespace sightline {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

// Query-key and value widths of one head, and the attention projections' parameters.
struct AttentionShape {
  double qk_dim = 0, v_dim = 0;
  double projections = 0;  // weights of the linear projections
  double biases = 0;       // q, k, v biases (Qwen2)
  double norms = 0;        // q/k norms (Qwen3), the latents' norms (DeepSeek)
};

AttentionShape AttentionOf(const ModelConfig& c) {
  AttentionShape a;
  const double h = D(c.hidden_size), nh = D(c.num_heads);
  if (c.latent) {
    const LatentAttention& m = c.mla;
    const double qk = D(m.qk_nope_head_dim + m.qk_rope_head_dim);
    a.qk_dim = qk;
    a.v_dim = D(m.v_head_dim);
    const double q =
        m.q_lora_rank > 0 ? h * D(m.q_lora_rank) + D(m.q_lora_rank) * nh * qk : h * nh * qk;
    a.projections = q + h * D(m.kv_lora_rank + m.qk_rope_head_dim) +
                    D(m.kv_lora_rank) * nh * D(m.qk_nope_head_dim + m.v_head_dim) +
                    nh * D(m.v_head_dim) * h;
    a.norms = D(m.q_lora_rank) + D(m.kv_lora_rank);
    return a;
  }
  const double q = nh * D(c.head_dim), kv = D(c.num_kv_heads * c.head_dim);
  a.qk_dim = a.v_dim = D(c.head_dim);
  a.projections = h * q + 2 * h * kv + q * h;
  if (c.qkv_bias) a.biases = q + 2 * kv;
  if (c.qk_norm) a.norms = 2 * D(c.head_dim);
  return a;
}

}  // namespace

ModelSizes SizesOf(const ModelConfig& c) {
  ModelSizes s;
  const double h = D(c.hidden_size);
  s.embedding = D(c.vocab_size) * h;
  s.lm_head = c.tied_embeddings ? 0 : s.embedding;
  s.final_norm = h;
  const AttentionShape a = AttentionOf(c);
  s.attention = a.projections + a.biases;
  s.layer_norms = 2 * h + a.norms;
  s.dense_mlp = 3 * h * D(c.intermediate_size);
  if (c.moe()) {
    s.expert = 3 * h * D(c.expert_intermediate);
    s.shared = 3 * h * D(c.shared_intermediate) + (c.shared_expert_gate ? h : 0);
    s.router = h * D(c.experts) + (c.model_type == "deepseek_v3" ? D(c.experts) : 0);
  }
  for (int64_t l = 0; l < c.num_layers; ++l) (c.IsMoeLayer(l) ? s.moe_layers : s.dense_layers)++;
  const double per_layer = s.attention + s.layer_norms;
  const double moe_layer = s.router + D(c.experts) * s.expert + s.shared;
  const double moe_active = s.router + D(c.experts_per_token) * s.expert + s.shared;
  const double outside = s.embedding + s.lm_head + s.final_norm;
  s.total = outside + D(c.num_layers) * per_layer + D(s.dense_layers) * s.dense_mlp +
            D(s.moe_layers) * moe_layer;
  s.active = outside + D(c.num_layers) * per_layer + D(s.dense_layers) * s.dense_mlp +
             D(s.moe_layers) * moe_active;
  s.kv_elements_per_token_layer = c.latent ? D(c.mla.kv_lora_rank + c.mla.qk_rope_head_dim)
                                           : 2 * D(c.num_kv_heads) * D(c.head_dim);
  return s;
}

double ExpectedDistinctExperts(double experts, double k, double tokens) {
  if (experts <= 0 || k <= 0 || tokens <= 0) return 0;
  const double p = std::min(1.0, k / experts);
  return experts * (1.0 - std::pow(1.0 - p, tokens));
}

StepCost CostOf(const ModelConfig& c, const StepWork& w) {
  StepCost cost;
  const double tokens = w.tokens();
  if (tokens <= 0) return cost;
  const ModelSizes s = SizesOf(c);
  const AttentionShape a = AttentionOf(c);
  const double h = D(c.hidden_size), layers = D(c.num_layers);
  const double lin = D(c.linear_weight_bytes), elem = D(c.dtype_bytes);

  // Weights: every layer's attention and MLP (the experts the tokens touch), the final norm, the
  // lm_head (or the tied embedding) for the logits, and the embedding rows of the tokens.
  cost.experts_touched =
      c.moe() ? ExpectedDistinctExperts(D(c.experts), D(c.experts_per_token), tokens) : 0;
  const double linear = layers * a.projections + D(s.dense_layers) * s.dense_mlp +
                        D(s.moe_layers) * (cost.experts_touched * s.expert + s.shared);
  const double small =
      layers * (s.layer_norms + a.biases) + D(s.moe_layers) * s.router + s.final_norm;
  const double vocab_rows = std::min(tokens, D(c.vocab_size));
  cost.weight_bytes = linear * lin + small * elem + (w.logit_rows() > 0 ? s.embedding * elem : 0) +
                      (c.tied_embeddings ? 0 : vocab_rows * h * elem);

  // KV cache: the decode sequences' context is read once per layer; every new token is written.
  double context = w.decode_context;
  if (c.sliding_window > 0) context = std::min(context, w.decode_sequences * D(c.sliding_window));
  const double kv_token = s.kv_elements_per_token_layer * elem * layers;
  cost.kv_read_bytes = context * kv_token;
  cost.kv_write_bytes = tokens * kv_token;

  // FLOPs: 2 per multiply-add. GEMMs over every token (routed: k experts per token); attention
  // over (query, key) pairs: each decode token sees its context and itself, a prefill sequence of
  // P tokens P(P + 1) / 2 pairs (causal).
  const double per_token_linear =
      layers * a.projections + D(s.dense_layers) * s.dense_mlp +
      D(s.moe_layers) * (D(c.experts_per_token) * s.expert + s.shared + s.router);
  cost.gemm_flops = 2 * tokens * per_token_linear + 2 * w.logit_rows() * s.embedding;
  double pairs = context + w.decode_sequences;
  if (w.prefill_sequences > 0) {
    const double p = w.prefill_tokens / w.prefill_sequences;
    pairs += w.prefill_sequences * p * (p + 1) / 2;
  }
  cost.attention_flops = 2 * D(c.num_heads) * (a.qk_dim + a.v_dim) * pairs * layers;
  return cost;
}

StepCost LayerCostOf(const ModelConfig& c, const StepWork& w, int64_t layer) {
  StepCost cost;
  const double tokens = w.tokens();
  if (tokens <= 0 || layer < 0 || layer >= c.num_layers) return cost;
  const ModelSizes s = SizesOf(c);
  const AttentionShape a = AttentionOf(c);
  const double lin = D(c.linear_weight_bytes), elem = D(c.dtype_bytes);
  const bool moe = c.IsMoeLayer(layer);
  cost.experts_touched =
      moe ? ExpectedDistinctExperts(D(c.experts), D(c.experts_per_token), tokens) : 0;
  const double linear =
      a.projections + (moe ? cost.experts_touched * s.expert + s.shared : s.dense_mlp);
  const double small = s.layer_norms + a.biases + (moe ? s.router : 0);
  cost.weight_bytes = linear * lin + small * elem;
  double context = w.decode_context;
  if (c.sliding_window > 0) context = std::min(context, w.decode_sequences * D(c.sliding_window));
  const double kv_token = s.kv_elements_per_token_layer * elem;
  cost.kv_read_bytes = context * kv_token;
  cost.kv_write_bytes = tokens * kv_token;
  const double per_token =
      a.projections + (moe ? D(c.experts_per_token) * s.expert + s.shared + s.router : s.dense_mlp);
  cost.gemm_flops = 2 * tokens * per_token;
  double pairs = context + w.decode_sequences;
  if (w.prefill_sequences > 0) {
    const double p = w.prefill_tokens / w.prefill_sequences;
    pairs += w.prefill_sequences * p * (p + 1) / 2;
  }
  cost.attention_flops = 2 * D(c.num_heads) * (a.qk_dim + a.v_dim) * pairs;
  return cost;
}

StepCost HeadCostOf(const ModelConfig& c, const StepWork& w) {
  StepCost cost;
  if (w.tokens() <= 0) return cost;
  const ModelSizes s = SizesOf(c);
  const double elem = D(c.dtype_bytes);
  cost.weight_bytes = s.final_norm * elem + (w.logit_rows() > 0 ? s.embedding * elem : 0);
  cost.gemm_flops = 2 * w.logit_rows() * s.embedding;
  return cost;
}

StepCost EmbeddingCostOf(const ModelConfig& c, const StepWork& w) {
  StepCost cost;
  const double rows = std::min(w.tokens(), D(c.vocab_size));
  if (rows <= 0) return cost;
  cost.weight_bytes = rows * D(c.hidden_size) * D(c.dtype_bytes);
  return cost;
}

StepCost ExpertCostOf(const ModelConfig& c, const StepWork& w) {
  StepCost cost;
  if (!c.moe() || w.tokens() <= 0) return cost;
  const ModelSizes s = SizesOf(c);
  cost.experts_touched = 1;
  cost.weight_bytes = s.expert * D(c.linear_weight_bytes);
  const double share = std::min(1.0, D(c.experts_per_token) / D(c.experts));
  cost.gemm_flops = 2 * w.tokens() * share * s.expert;
  return cost;
}

}  // namespace sightline
