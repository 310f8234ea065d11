// What one step of a model must at least read and compute, from its config (importers/
// model_config/model_config.h) and the step's work (decode sequences and their context, prefill
// tokens): weight bytes, KV-cache bytes read and written, GEMM and attention FLOPs. Pure
// functions; the floor analysis (floor.h) turns them into times with a GPU's peaks (gpu_peaks.h).
// Definitions and assumptions: docs/analyses/floor.md, "The model of a step".
#pragma once

#include <cstdint>

#include "importers/model_config/model_config.h"

namespace sightline {

// The work of one step. Decode sequences each add one token to a KV cache that holds their
// context; prefill sequences process their prompt tokens with no earlier context (no prefix
// cache, no chunking).
struct StepWork {
  double decode_sequences = 0;
  double decode_context = 0;  // tokens already cached, summed over the decode sequences
  double prefill_sequences = 0;
  double prefill_tokens = 0;  // prompt tokens, summed over the prefill sequences

  double tokens() const { return decode_sequences + prefill_tokens; }
  // Rows of logits: one per sequence (the last token's), as serving engines compute them.
  double logit_rows() const { return decode_sequences + prefill_sequences; }
};

// The model's parameters by part, counted from the config (elements, not bytes).
struct ModelSizes {
  double embedding = 0;  // vocab x hidden
  double lm_head = 0;    // vocab x hidden when untied, else 0 (the embedding serves)
  double final_norm = 0;
  double attention = 0;    // one layer's attention projections (and their biases)
  double layer_norms = 0;  // one layer's norms (input, post-attention, q/k, latent)
  double dense_mlp = 0;    // one dense MLP: 3 x hidden x intermediate (gated)
  double expert = 0;       // one routed expert's MLP
  double shared = 0;       // the shared experts of one MoE layer (and their gate)
  double router = 0;       // one MoE layer's router (and its score bias)
  int64_t dense_layers = 0, moe_layers = 0;
  double total = 0;   // every parameter
  double active = 0;  // parameters one token uses (k routed experts per MoE layer)
  double kv_elements_per_token_layer = 0;  // 2 x kv heads x head dim; MLA: latent + rope dims
};
ModelSizes SizesOf(const ModelConfig& config);

// Expected distinct experts that `tokens` tokens route to when each picks `k` of `experts`
// uniformly at random: experts x (1 - (1 - k / experts)^tokens). The floor's assumption for the
// expert weights a step reads (real routers are skewed: fewer distinct experts, a lower floor).
double ExpectedDistinctExperts(double experts, double k, double tokens);

struct StepCost {
  double weight_bytes = 0;     // every weight the step reads once
  double kv_read_bytes = 0;    // the decode sequences' cached keys and values (or latents)
  double kv_write_bytes = 0;   // the step's new tokens' keys and values
  double gemm_flops = 0;       // projections, MLPs, experts, router, lm_head (2 x m x n x k)
  double attention_flops = 0;  // scores and weighted sums (2 x heads x (qk dim + v dim) per pair)
  double experts_touched = 0;  // expected distinct routed experts per MoE layer; 0 when dense

  double bytes() const { return weight_bytes + kv_read_bytes + kv_write_bytes; }
  double flops() const { return gemm_flops + attention_flops; }
};

// The step's cost; zero work costs nothing (no weights are read for no token).
StepCost CostOf(const ModelConfig& config, const StepWork& work);

// The cost of the parts of a step that a trace can name (docs/analyses/floor.md, "Per layer"):
// decoder layer `layer` (0-based: its attention, MLP or MoE block, norms, and its share of the KV
// cache), the head (final norm and the lm_head, or the tied embedding, for the logits), the
// embedding (the rows of the step's tokens), and one routed expert of a MoE layer that the step's
// tokens reach (its weights once, and the FLOPs of its expected share k / experts of the tokens).
// The layers, head and embedding add up to CostOf for a model with untied embeddings; with tied
// ones CostOf counts the table once, in the head, and the embedding's rows only here.
StepCost LayerCostOf(const ModelConfig& config, const StepWork& work, int64_t layer);
StepCost HeadCostOf(const ModelConfig& config, const StepWork& work);
StepCost EmbeddingCostOf(const ModelConfig& config, const StepWork& work);
StepCost ExpertCostOf(const ModelConfig& config, const StepWork& work);

}  // namespace sightline
