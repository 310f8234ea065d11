#include "importers/model_config/model_config.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "base/input_data.h"

namespace sightline {
namespace {

constexpr const char* kKnownTypes[] = {"llama",     "mistral",     "qwen2",
                                       "qwen3",     "mixtral",     "qwen2_moe",
                                       "qwen3_moe", "deepseek_v2", "deepseek_v3"};

Status ConfigBad(const std::string& path, const std::string& what) {
  return InvalidInputError(
      fmt::format("{}: {}; expected a Hugging Face model config.json (docs/formats/"
                  "model-config.md)",
                  path, what));
}

// Reads the fields of one config object, with every error naming the file and the field.
class ConfigFields {
 public:
  ConfigFields(simdjson::dom::object object, const std::string& path) : o_(object), path_(path) {}

  bool Has(const char* key) const {
    simdjson::dom::element e;
    return o_[key].get(e) == simdjson::SUCCESS && !e.is_null();
  }

  // An integer field (an integral number counts: 4096.0) within [lo, hi]; nullopt when absent or
  // null. An error when present with anything else.
  StatusOr<std::optional<int64_t>> Int(const char* key, int64_t lo, int64_t hi) const {
    simdjson::dom::element e;
    if (o_[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::optional<int64_t>();
    double v = 0;
    int64_t i = 0;
    uint64_t u = 0;
    if (e.get_int64().get(i) == simdjson::SUCCESS) {
      v = static_cast<double>(i);
    } else if (e.get_uint64().get(u) == simdjson::SUCCESS) {
      v = static_cast<double>(u);
    } else if (e.get_double().get(v) != simdjson::SUCCESS) {
      return ConfigBad(path_, fmt::format("\"{}\" is not a number", key));
    }
    if (!std::isfinite(v) || v != std::floor(v)) {
      return ConfigBad(path_, fmt::format("\"{}\" is {}, not a whole number", key, v));
    }
    if (v < static_cast<double>(lo) || v > static_cast<double>(hi)) {
      return ConfigBad(
          path_, fmt::format("\"{}\" is {}, outside the sizes taken ({} to {})", key, v, lo, hi));
    }
    return std::optional<int64_t>(static_cast<int64_t>(v));
  }

  StatusOr<int64_t> Required(const char* key, int64_t lo, int64_t hi,
                             const std::string& shape) const {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, Int(key, lo, hi));
    if (!v) return ConfigBad(path_, fmt::format("no \"{}\", which a {} model needs", key, shape));
    return *v;
  }

  StatusOr<int64_t> Optional(const char* key, int64_t lo, int64_t hi, int64_t fallback) const {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, Int(key, lo, hi));
    return v ? *v : fallback;
  }

  StatusOr<std::optional<bool>> Bool(const char* key) const {
    simdjson::dom::element e;
    if (o_[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::optional<bool>();
    bool b = false;
    if (e.get_bool().get(b) != simdjson::SUCCESS) {
      return ConfigBad(path_, fmt::format("\"{}\" is not true or false", key));
    }
    return std::optional<bool>(b);
  }

  StatusOr<std::optional<std::string>> String(const char* key) const {
    simdjson::dom::element e;
    if (o_[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::optional<std::string>();
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) {
      return ConfigBad(path_, fmt::format("\"{}\" is not a string", key));
    }
    return std::optional<std::string>(std::string(s));
  }

  const simdjson::dom::object& object() const { return o_; }

 private:
  simdjson::dom::object o_;
  const std::string& path_;
};

constexpr int64_t kMaxHidden = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeads = 65536;
constexpr int64_t kMaxWidth = int64_t{1} << 22;  // MLP widths, ranks, head dims
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxExperts = 65536;

StatusOr<int64_t> DtypeBytes(const std::string& dtype, const std::string& path) {
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "half" || dtype == "bf16" ||
      dtype == "fp16") {
    return 2;
  }
  if (dtype == "float32" || dtype == "float" || dtype == "fp32") return 4;
  if (dtype.starts_with("float8") || dtype == "fp8") return 1;
  return ConfigBad(path,
                   fmt::format("dtype \"{}\" is none of bfloat16, float16, float32, float8_*; give "
                               "the dtype the weights are held in",
                               dtype));
}

Status ReadMoe(const ConfigFields& f, ModelConfig& c, const std::string& path) {
  const std::string& t = c.model_type;
  const std::string shape = t + " (mixture of experts)";
  const char* experts_key = t == "mixtral"              ? "num_local_experts"
                            : t.starts_with("deepseek") ? "n_routed_experts"
                                                        : "num_experts";
  // The family's own name first, then the others': transformers 5 saves a qwen3_moe config with
  // "num_local_experts" (the attribute it reads "num_experts" into), the hub's files with
  // "num_experts".
  const char* key = experts_key;
  for (const char* other : {"num_experts", "num_local_experts", "n_routed_experts"}) {
    if (!f.Has(key) && f.Has(other)) key = other;
  }
  ASSIGN_OR_RETURN(c.experts, f.Required(key, 1, kMaxExperts, shape));
  ASSIGN_OR_RETURN(c.experts_per_token, f.Required("num_experts_per_tok", 1, c.experts, shape));
  if (t == "mixtral") {
    c.expert_intermediate = c.intermediate_size;
  } else {
    ASSIGN_OR_RETURN(c.expert_intermediate,
                     f.Required("moe_intermediate_size", 1, kMaxWidth, shape));
  }
  if (t == "qwen2_moe") {
    ASSIGN_OR_RETURN(c.shared_intermediate,
                     f.Optional("shared_expert_intermediate_size", 0, kMaxWidth, 0));
    c.shared_expert_gate = c.shared_intermediate > 0;
  }
  if (t.starts_with("qwen")) {
    ASSIGN_OR_RETURN(c.sparse_step, f.Optional("decoder_sparse_step", 1, kMaxLayers, 1));
    simdjson::dom::array only;
    simdjson::dom::element e;
    if (f.object()["mlp_only_layers"].get(e) == simdjson::SUCCESS && !e.is_null()) {
      if (e.get_array().get(only) != simdjson::SUCCESS) {
        return ConfigBad(path, "\"mlp_only_layers\" is not a list of layer numbers");
      }
      for (simdjson::dom::element x : only) {
        int64_t l = 0;
        if (x.get_int64().get(l) != simdjson::SUCCESS || l < 0 || l >= c.num_layers) {
          return ConfigBad(path,
                           fmt::format("\"mlp_only_layers\" holds something other than a layer "
                                       "number below num_hidden_layers ({})",
                                       c.num_layers));
        }
        c.mlp_only_layers.push_back(l);
      }
    }
  }
  if (t.starts_with("deepseek")) {
    ASSIGN_OR_RETURN(int64_t shared, f.Optional("n_shared_experts", 0, kMaxExperts, 0));
    c.shared_intermediate = shared * c.expert_intermediate;
    ASSIGN_OR_RETURN(c.dense_layers, f.Optional("first_k_dense_replace", 0, c.num_layers, 0));
    ASSIGN_OR_RETURN(c.moe_layer_freq, f.Optional("moe_layer_freq", 1, kMaxLayers, 1));
  }
  return Status::Ok();
}

Status ReadLatentAttention(const ConfigFields& f, ModelConfig& c) {
  const std::string shape = c.model_type + " (latent attention)";
  c.latent = true;
  ASSIGN_OR_RETURN(c.mla.q_lora_rank, f.Optional("q_lora_rank", 1, kMaxWidth, 0));
  ASSIGN_OR_RETURN(c.mla.kv_lora_rank, f.Required("kv_lora_rank", 1, kMaxWidth, shape));
  ASSIGN_OR_RETURN(c.mla.qk_nope_head_dim, f.Required("qk_nope_head_dim", 1, kMaxWidth, shape));
  ASSIGN_OR_RETURN(c.mla.qk_rope_head_dim, f.Required("qk_rope_head_dim", 1, kMaxWidth, shape));
  ASSIGN_OR_RETURN(c.mla.v_head_dim, f.Required("v_head_dim", 1, kMaxWidth, shape));
  return Status::Ok();
}

}  // namespace

bool ModelConfig::IsMoeLayer(int64_t layer) const {
  if (experts <= 0 || layer < dense_layers) return false;
  if (std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) != mlp_only_layers.end()) {
    return false;
  }
  return (layer + 1) % sparse_step == 0 && layer % moe_layer_freq == 0;
}

StatusOr<ModelConfig> ParseModelConfig(std::string_view json, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::object top;
  if (parser.parse(json.data(), json.size()).get_object().get(top) != simdjson::SUCCESS) {
    return ConfigBad(path, "not a JSON object");
  }
  ModelConfig c;
  c.path = path;
  {
    ConfigFields f(top, path);
    ASSIGN_OR_RETURN(std::optional<std::string> type, f.String("model_type"));
    if (!type) return ConfigBad(path, "no \"model_type\"");
    c.model_type = *type;
  }
  // A multimodal wrapper keeps the language model's shapes in "text_config".
  simdjson::dom::object o = top;
  simdjson::dom::object text;
  if (top["hidden_size"].error() != simdjson::SUCCESS &&
      top["text_config"].get_object().get(text) == simdjson::SUCCESS) {
    o = text;
    std::string_view inner;
    if (text["model_type"].get_string().get(inner) == simdjson::SUCCESS) c.model_type = inner;
  }
  if (std::find(std::begin(kKnownTypes), std::end(kKnownTypes), c.model_type) ==
      std::end(kKnownTypes)) {
    return ConfigBad(path,
                     fmt::format("model_type \"{}\" is not a shape the floor knows (llama, "
                                 "mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, "
                                 "deepseek_v2, deepseek_v3); without a config, give --batch and "
                                 "leave --model-config out",
                                 c.model_type));
  }
  const ConfigFields f(o, path);
  const std::string& t = c.model_type;
  ASSIGN_OR_RETURN(c.hidden_size, f.Required("hidden_size", 1, kMaxHidden, t));
  ASSIGN_OR_RETURN(c.num_layers, f.Required("num_hidden_layers", 1, kMaxLayers, t));
  ASSIGN_OR_RETURN(c.num_heads, f.Required("num_attention_heads", 1, kMaxHeads, t));
  ASSIGN_OR_RETURN(c.num_kv_heads, f.Optional("num_key_value_heads", 1, c.num_heads, c.num_heads));
  if (c.num_heads % c.num_kv_heads != 0) {
    return ConfigBad(path, fmt::format("num_attention_heads ({}) is not a multiple of "
                                       "num_key_value_heads ({})",
                                       c.num_heads, c.num_kv_heads));
  }
  ASSIGN_OR_RETURN(c.head_dim, f.Optional("head_dim", 1, kMaxWidth, c.hidden_size / c.num_heads));
  if (c.head_dim == 0) {
    return ConfigBad(path,
                     fmt::format("hidden_size ({}) is smaller than num_attention_heads ({}) and "
                                 "no head_dim is given",
                                 c.hidden_size, c.num_heads));
  }
  ASSIGN_OR_RETURN(c.intermediate_size, f.Required("intermediate_size", 1, kMaxWidth, t));
  ASSIGN_OR_RETURN(c.vocab_size, f.Required("vocab_size", 1, kMaxVocab, t));
  ASSIGN_OR_RETURN(std::optional<bool> tied, f.Bool("tie_word_embeddings"));
  c.tied_embeddings = tied.value_or(false);
  ASSIGN_OR_RETURN(std::optional<bool> bias, f.Bool("attention_bias"));
  c.qkv_bias = bias.value_or(t == "qwen2" || t == "qwen2_moe");
  c.qk_norm = t == "qwen3" || t == "qwen3_moe";
  ASSIGN_OR_RETURN(std::optional<bool> use_window, f.Bool("use_sliding_window"));
  if (use_window.value_or(true)) {
    ASSIGN_OR_RETURN(c.sliding_window, f.Optional("sliding_window", 1, int64_t{1} << 40, 0));
  }
  if (t == "mixtral" || t.ends_with("_moe") || t.starts_with("deepseek")) {
    RETURN_IF_ERROR(ReadMoe(f, c, path));
  }
  if (t.starts_with("deepseek")) RETURN_IF_ERROR(ReadLatentAttention(f, c));

  // torch_dtype (transformers 4.x) or dtype (5.x), at the top or in text_config.
  std::optional<std::string> dtype;
  const ConfigFields top_fields(top, path);
  for (const ConfigFields* h : {&f, &top_fields}) {
    for (const char* key : {"dtype", "torch_dtype"}) {
      if (dtype) break;
      ASSIGN_OR_RETURN(dtype, h->String(key));
    }
  }
  if (dtype) {
    c.dtype = *dtype;
    c.dtype_stated = true;
  }
  ASSIGN_OR_RETURN(c.dtype_bytes, DtypeBytes(c.dtype, path));
  c.linear_weight_bytes = c.dtype_bytes;
  simdjson::dom::object quant;
  if (top["quantization_config"].get_object().get(quant) == simdjson::SUCCESS) {
    std::string_view method;
    if (quant["quant_method"].get_string().get(method) == simdjson::SUCCESS) {
      c.quantization = method;
      if (method == "fp8") c.linear_weight_bytes = 1;
    }
  }
  return c;
}

StatusOr<ModelConfig> ReadModelConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadInput(path));
  return ParseModelConfig(text, path);
}

bool LooksLikeModelConfig(std::string_view head) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return false;
  if (head.find("\"model_type\"") == std::string_view::npos) return false;
  if (head.find("\"traceEvents\"") != std::string_view::npos) return false;
  for (std::string_view key : {"\"hidden_size\"", "\"num_hidden_layers\"", "\"text_config\""}) {
    if (head.find(key) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace sightline
