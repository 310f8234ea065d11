// The reader of a Hugging Face config.json (importers/model_config/model_config.h): the shipped
// configs' fields as their files state them, the defaults where a field is absent, and a clear
// error for every field a shape needs that is missing, of the wrong type or out of bounds.
#include "importers/model_config/model_config.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/model_config/";

ModelConfig Read(const std::string& name) {
  return testing::ValueOrDie(ReadModelConfig(kData + name));
}

std::string ErrorOf(const std::string& json) {
  StatusOr<ModelConfig> c = ParseModelConfig(json, "config.json");
  EXPECT_FALSE(c.ok()) << json;
  return c.ok() ? "" : c.status().message();
}

// A minimal llama config with `extra` fields appended (later keys win in simdjson's lookups only
// when unique, so tests replace a field by leaving it out of `base`).
std::string Llama(const std::string& fields) { return "{\"model_type\":\"llama\"," + fields + "}"; }

constexpr char kLlamaFields[] =
    "\"hidden_size\":2048,\"num_hidden_layers\":16,\"num_attention_heads\":32,"
    "\"intermediate_size\":8192,\"vocab_size\":128256";

TEST(ModelConfig, ReadsLlama32_1B) {
  const ModelConfig c = Read("llama_3_2_1b.config.json");
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.hidden_size, 2048);
  EXPECT_EQ(c.num_layers, 16);
  EXPECT_EQ(c.num_heads, 32);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.intermediate_size, 8192);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_FALSE(c.moe());
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_TRUE(c.dtype_stated);
  EXPECT_EQ(c.dtype_bytes, 2);
  EXPECT_EQ(c.linear_weight_bytes, 2);
}

TEST(ModelConfig, ReadsQwen3Moe) {
  const ModelConfig c = Read("qwen3_30b_a3b.config.json");
  EXPECT_EQ(c.model_type, "qwen3_moe");
  EXPECT_EQ(c.experts, 128);
  EXPECT_EQ(c.experts_per_token, 8);
  EXPECT_EQ(c.expert_intermediate, 768);
  EXPECT_EQ(c.shared_intermediate, 0);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.sliding_window, 0);  // use_sliding_window false, and null
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_TRUE(c.IsMoeLayer(0));
  EXPECT_TRUE(c.IsMoeLayer(47));
}

// transformers 5.17's save_pretrained of a Qwen3-MoE config (Qwen3-30B-A3B's shape at 8 layers,
// written on the GPU machine by examples/programs/floor_sweep.py): the experts under
// "num_local_experts", not the hub's "num_experts".
TEST(ModelConfig, ReadsQwen3MoeAsTransformers5SavesIt) {
  const ModelConfig c = Read("qwen3_moe_transformers5.config.json");
  EXPECT_EQ(c.model_type, "qwen3_moe");
  EXPECT_EQ(c.experts, 128);
  EXPECT_EQ(c.experts_per_token, 8);
  EXPECT_EQ(c.expert_intermediate, 768);
  EXPECT_EQ(c.num_layers, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_TRUE(c.IsMoeLayer(7));
}

TEST(ModelConfig, ReadsDeepSeekV3) {
  const ModelConfig c = Read("deepseek_v3.config.json");
  EXPECT_TRUE(c.latent);
  EXPECT_EQ(c.mla.kv_lora_rank, 512);
  EXPECT_EQ(c.mla.q_lora_rank, 1536);
  EXPECT_EQ(c.experts, 256);
  EXPECT_EQ(c.shared_intermediate, 2048);  // one shared expert of moe_intermediate_size
  EXPECT_EQ(c.dense_layers, 3);
  EXPECT_FALSE(c.IsMoeLayer(2));
  EXPECT_TRUE(c.IsMoeLayer(3));
  EXPECT_EQ(c.quantization, "fp8");
  EXPECT_EQ(c.linear_weight_bytes, 1);  // fp8 linear weights
  EXPECT_EQ(c.dtype_bytes, 2);          // embeddings, norms, KV cache
}

TEST(ModelConfig, DefaultsWhereFieldsAreAbsent) {
  const ModelConfig c = testing::ValueOrDie(ParseModelConfig(Llama(kLlamaFields), "c.json"));
  EXPECT_EQ(c.num_kv_heads, 32);  // multi-head attention
  EXPECT_EQ(c.head_dim, 64);      // hidden / heads
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_FALSE(c.dtype_stated);
  EXPECT_EQ(c.dtype_bytes, 2);
  // transformers 5.x writes "dtype"; an integral number written as a float counts.
  const ModelConfig d = testing::ValueOrDie(ParseModelConfig(
      "{\"model_type\":\"qwen2\",\"hidden_size\":896.0,\"num_hidden_layers\":24,"
      "\"num_attention_heads\":14,\"num_key_value_heads\":2,\"intermediate_size\":4864,"
      "\"vocab_size\":151936,\"dtype\":\"float32\"}",
      "c.json"));
  EXPECT_EQ(d.hidden_size, 896);
  EXPECT_EQ(d.dtype_bytes, 4);
  EXPECT_TRUE(d.qkv_bias);  // Qwen2's q, k, v projections have biases
}

TEST(ModelConfig, ReadsTheTextConfigOfAWrapper) {
  const ModelConfig c = testing::ValueOrDie(ParseModelConfig(
      std::string("{\"model_type\":\"llava\",\"text_config\":{\"model_type\":\"llama\",") +
          kLlamaFields + "}}",
      "c.json"));
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.hidden_size, 2048);
}

TEST(ModelConfig, RefusesWhatItCannotUse) {
  EXPECT_NE(ErrorOf("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"hidden_size\": 4}").find("no \"model_type\""), std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\":\"gpt2\",\"n_embd\":768}").find("model_type \"gpt2\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(Llama("\"num_hidden_layers\":16,\"num_attention_heads\":32,"
                          "\"intermediate_size\":8192,\"vocab_size\":128256"))
                .find("no \"hidden_size\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(Llama(std::string(kLlamaFields) + ",\"num_key_value_heads\":5"))
                .find("not a multiple"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Llama(std::string(kLlamaFields) + ",\"num_key_value_heads\":64"))
                .find("outside the sizes taken"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\":\"llama\",\"hidden_size\":-1}").find("outside"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\":\"llama\",\"hidden_size\":\"big\"}").find("not a number"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\":\"llama\",\"hidden_size\":1e30}").find("outside"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\":\"llama\",\"hidden_size\":20.5}").find("whole number"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Llama(std::string(kLlamaFields) + ",\"torch_dtype\":\"int4\""))
                .find("dtype \"int4\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(Llama(std::string(kLlamaFields) + ",\"tie_word_embeddings\":1"))
                .find("not true or false"),
            std::string::npos);
  // A MoE shape needs its experts, and top-k within them.
  EXPECT_NE(ErrorOf("{\"model_type\":\"mixtral\"," + std::string(kLlamaFields) + "}")
                .find("no \"num_local_experts\""),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"model_type\":\"mixtral\"," + std::string(kLlamaFields) +
                    ",\"num_local_experts\":8,\"num_experts_per_tok\":9}")
                .find("\"num_experts_per_tok\" is 9"),
            std::string::npos);
  // Every error names the file and the format doc.
  EXPECT_NE(ErrorOf("{}").find("config.json: "), std::string::npos);
  EXPECT_NE(ErrorOf("{}").find("docs/formats/model-config.md"), std::string::npos);
}

TEST(ModelConfig, SniffsConfigsAndNothingElse) {
  EXPECT_TRUE(LooksLikeModelConfig(testing::Slurp(kData + "llama_3_2_1b.config.json")));
  EXPECT_TRUE(LooksLikeModelConfig(testing::Slurp(kData + "deepseek_v3.config.json")));
  EXPECT_FALSE(LooksLikeModelConfig("{\"traceEvents\":[],\"model_type\":\"x\",\"hidden_size\":1}"));
  EXPECT_FALSE(LooksLikeModelConfig("{\"model_type\":\"x\"}"));
  EXPECT_FALSE(LooksLikeModelConfig("[{\"model_type\":\"llama\",\"hidden_size\":1}]"));
}

}  // namespace
}  // namespace sightline
