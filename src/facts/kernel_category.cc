#include "facts/kernel_category.h"

#include <array>
#include <cctype>
#include <initializer_list>
#include <string>

#include "model/trace_builder.h"

namespace sightline {
namespace {

using Keys = std::initializer_list<std::string_view>;

bool Has(std::string_view s, Keys keys) {
  for (std::string_view k : keys) {
    if (s.find(k) != std::string_view::npos) return true;
  }
  return false;
}

bool StartsWithAny(std::string_view s, Keys keys) {
  for (std::string_view k : keys) {
    if (s.starts_with(k)) return true;
  }
  return false;
}

// A kernel name split into what the rules look at, all lower case:
//   base:  the qualified function name without template arguments and parameters
//          ("void at::native::vectorized_elementwise_kernel"),
//   targs: the function's template arguments (where PyTorch and CUTLASS say what the kernel does:
//          "4, at::native::fillfunctor<float>, ..."),
//   ident: the last word of base, without return type
//   ("at::native::vectorized_elementwise_kernel"). params: the parameter list, where cuBLAS helper
//   kernels name their cuBLAS parameter types.
struct NameParts {
  std::string base, targs, ident, params;
};

NameParts SplitName(std::string_view full) {
  NameParts p;
  p.base.reserve(full.size());
  int angle = 0, paren_in_template = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(full[i])));
    if (angle == 0) {
      if (c == '(') {
        // "(anonymous namespace)::f" is part of the name; any other '(' opens the parameters.
        constexpr std::string_view kAnon = "(anonymous namespace)";
        if (full.substr(i).starts_with(kAnon)) {
          p.base.append("anon");
          i += kAnon.size() - 1;
          continue;
        }
        for (size_t j = i; j < full.size(); ++j) {
          p.params.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(full[j]))));
        }
        break;
      }
      if (c == '<') {
        ++angle;
        if (!p.targs.empty()) p.targs.push_back(' ');
        continue;
      }
      p.base.push_back(c);
      continue;
    }
    // Inside template arguments: '>' inside parentheses is a comparison ("(8)>(0)"), not a bracket.
    if (c == '(') ++paren_in_template;
    if (c == ')' && paren_in_template > 0) --paren_in_template;
    if (paren_in_template == 0) {
      if (c == '<') ++angle;
      if (c == '>' && --angle == 0) continue;
    }
    p.targs.push_back(c);
  }
  // FBGEMM's namespace is not a GEMM: "fbgemm_gpu::permute_2D_data_kernel".
  for (size_t pos; (pos = p.base.find("fbgemm_gpu::")) != std::string::npos;) p.base.erase(pos, 12);
  const size_t space = p.base.rfind(' ');
  p.ident = space == std::string::npos ? p.base : p.base.substr(space + 1);
  return p;
}

// ---- TensorRT Myelin ---------------------------------------------------------------------------

struct MyelinOp {
  std::string_view abbrev;
  std::string_view op;
};

// Myelin names list the fused operations as capitalized abbreviations of 2..6 letters; the same
// operation appears under several lengths ("Res", "Resh"; "Tra", "Tran"). Gathered from kernel and
// layer names in public TensorRT engines and profiles.
constexpr std::array kMyelinOps = {
    MyelinOp{"Add", "add"},          MyelinOp{"Sub", "sub"},
    MyelinOp{"Mul", "mul"},          MyelinOp{"Div", "div"},
    MyelinOp{"Neg", "neg"},          MyelinOp{"Abs", "abs"},
    MyelinOp{"Exp", "exp"},          MyelinOp{"Log", "log"},
    MyelinOp{"Pow", "pow"},          MyelinOp{"Sqr", "sqrt"},
    MyelinOp{"Sqrt", "sqrt"},        MyelinOp{"Rsq", "rsqrt"},
    MyelinOp{"Rsqr", "rsqrt"},       MyelinOp{"Rsqrt", "rsqrt"},
    MyelinOp{"Recip", "reciprocal"}, MyelinOp{"Erf", "erf"},
    MyelinOp{"Tanh", "tanh"},        MyelinOp{"Sig", "sigmoid"},
    MyelinOp{"Sigm", "sigmoid"},     MyelinOp{"Silu", "silu"},
    MyelinOp{"Gelu", "gelu"},        MyelinOp{"Relu", "relu"},
    MyelinOp{"Sin", "sin"},          MyelinOp{"Cos", "cos"},
    MyelinOp{"Min", "min"},          MyelinOp{"Max", "max"},
    MyelinOp{"Maxr", "reduce_max"},  MyelinOp{"Minr", "reduce_min"},
    MyelinOp{"Sum", "reduce_sum"},   MyelinOp{"Sumr", "reduce_sum"},
    MyelinOp{"Mea", "mean"},         MyelinOp{"Mean", "mean"},
    MyelinOp{"Prod", "reduce_prod"}, MyelinOp{"Top", "topk"},
    MyelinOp{"Topk", "topk"},        MyelinOp{"Argm", "argmax"},
    MyelinOp{"Cas", "cast"},         MyelinOp{"Cast", "cast"},
    MyelinOp{"Res", "reshape"},      MyelinOp{"Resh", "reshape"},
    MyelinOp{"Tra", "transpose"},    MyelinOp{"Tran", "transpose"},
    MyelinOp{"Trans", "transpose"},  MyelinOp{"Sli", "slice"},
    MyelinOp{"Slic", "slice"},       MyelinOp{"Con", "concat"},
    MyelinOp{"Conc", "concat"},      MyelinOp{"Conv", "convolution"},
    MyelinOp{"Gat", "gather"},       MyelinOp{"Gath", "gather"},
    MyelinOp{"Sca", "scatter"},      MyelinOp{"Scat", "scatter"},
    MyelinOp{"Mov", "copy"},         MyelinOp{"Move", "copy"},
    MyelinOp{"Rep", "repeat"},       MyelinOp{"Repl", "repeat"},
    MyelinOp{"Pad", "pad"},          MyelinOp{"Fc", "fully_connected"},
    MyelinOp{"Mm", "matmul"},        MyelinOp{"Bmm", "matmul"},
    MyelinOp{"Gemm", "matmul"},      MyelinOp{"Matm", "matmul"},
    MyelinOp{"Flo", "floor"},        MyelinOp{"Floo", "floor"},
    MyelinOp{"Cei", "ceil"},         MyelinOp{"Rou", "round"},
    MyelinOp{"Roun", "round"},       MyelinOp{"Whe", "where"},
    MyelinOp{"Wher", "where"},       MyelinOp{"Sel", "select"},
    MyelinOp{"Equ", "equal"},        MyelinOp{"Grid", "grid_sample"},
    MyelinOp{"Shu", "shuffle"},      MyelinOp{"Iota", "range"},
    MyelinOp{"Fill", "fill"},
};

std::string_view DecodeMyelinToken(std::string_view token) {
  for (const MyelinOp& m : kMyelinOps) {
    if (m.abbrev == token) return m.op;
  }
  return token;
}

bool Contains(const std::vector<std::string_view>& ops, std::string_view op) {
  for (std::string_view o : ops) {
    if (o == op) return true;
  }
  return false;
}

KernelCategory ClassifyMyelinOps(const std::vector<std::string_view>& ops) {
  if (ops.empty()) return KernelCategory::kOther;
  const bool exp = Contains(ops, "exp");
  const bool sum = Contains(ops, "reduce_sum");
  const bool softmax = exp && (sum || Contains(ops, "reduce_max") || Contains(ops, "div"));
  if (Contains(ops, "fully_connected") || Contains(ops, "matmul") || Contains(ops, "convolution")) {
    return softmax ? KernelCategory::kAttention : KernelCategory::kGemm;
  }
  if ((Contains(ops, "mean") || sum) && (Contains(ops, "sqrt") || Contains(ops, "rsqrt"))) {
    return KernelCategory::kNormalization;
  }
  if (softmax) return KernelCategory::kReduction;
  if (Contains(ops, "round")) return KernelCategory::kQuantization;
  for (std::string_view r :
       {"mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "topk", "argmax"}) {
    if (Contains(ops, r)) return KernelCategory::kReduction;
  }
  bool moves = false, only_movement = true;
  for (std::string_view o : ops) {
    if (o == "cast") continue;
    if (o == "reshape" || o == "transpose" || o == "slice" || o == "concat" || o == "gather" ||
        o == "scatter" || o == "copy" || o == "repeat" || o == "pad" || o == "shuffle") {
      moves = true;
    } else {
      only_movement = false;
    }
  }
  if (moves && only_movement) return KernelCategory::kCopyMemset;
  return KernelCategory::kElementwise;
}

// ---- PyTorch Inductor / Triton -----------------------------------------------------------------

// The words of an Inductor kernel name ("triton_poi_fused_add_cat_0" -> triton, poi, fused, add,
// cat, 0) are aten op names; these only move data.
bool OnlyMovementWords(std::string_view name) {
  static constexpr std::string_view kMovement[] = {
      "triton",    "poi",     "fused",  "clone",  "cat",      "index",     "embedding", "permute",
      "transpose", "slice",   "select", "gather", "scatter",  "unsqueeze", "squeeze",   "expand",
      "reshape",   "view",    "stack",  "split",  "constant", "pad",       "nd",        "copy",
      "as",        "strided", "unsafe", "alias",  "t",        "zeros",     "full",      "fill",
      "new",       "empty",   "lift",   "fresh"};
  size_t pos = 0;
  bool any = false;
  while (pos <= name.size()) {
    size_t end = name.find('_', pos);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view word = name.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (std::isdigit(static_cast<unsigned char>(word[0]))) continue;
    bool movement = false;
    for (std::string_view m : kMovement) movement = movement || word == m;
    if (!movement) return false;
    any = true;
  }
  return any;
}

bool HasWord(std::string_view name, std::string_view word) {
  // word delimited by '_' or the ends of the name.
  size_t pos = 0;
  while ((pos = name.find(word, pos)) != std::string_view::npos) {
    const bool left = pos == 0 || name[pos - 1] == '_';
    const size_t end = pos + word.size();
    const bool right = end == name.size() || name[end] == '_';
    if (left && right) return true;
    pos = end;
  }
  return false;
}

// Returns true and sets *out when the aten op names in an Inductor-style name decide the category.
bool ClassifyByAtenOps(std::string_view n, KernelCategory* out) {
  if (Has(n, {"attention", "attn", "flash", "sdpa"})) {
    *out = KernelCategory::kAttention;
  } else if (Has(n,
                 {"layer_norm", "rms_norm", "group_norm", "batch_norm", "layernorm", "rmsnorm"}) ||
             (HasWord(n, "rsqrt") &&
              (HasWord(n, "mean") || HasWord(n, "var") || Has(n, {"var_mean"})))) {
    *out = KernelCategory::kNormalization;
  } else if (Has(n, {"softmax"}) || (HasWord(n, "amax") && HasWord(n, "exp"))) {
    *out = KernelCategory::kReduction;
  } else if (HasWord(n, "mm") || HasWord(n, "bmm") || HasWord(n, "addmm") ||
             HasWord(n, "baddbmm") || HasWord(n, "convolution")) {
    *out = KernelCategory::kGemm;
  } else if (Has(n, {"quant", "fp8", "float8"})) {
    *out = KernelCategory::kQuantization;
  } else {
    return false;
  }
  return true;
}

KernelCategory ClassifyInductor(std::string_view n) {
  KernelCategory c;
  if (n.starts_with("triton_tem_")) {
    // Templates are matmul/conv/flex-attention kernels generated from a Triton template.
    return Has(n, {"attention", "flex", "sdpa"}) ? KernelCategory::kAttention
                                                 : KernelCategory::kGemm;
  }
  if (ClassifyByAtenOps(n, &c)) return c;
  if (n.starts_with("triton_red_") || n.starts_with("triton_per_")) {
    return KernelCategory::kReduction;
  }
  return OnlyMovementWords(n) ? KernelCategory::kCopyMemset : KernelCategory::kElementwise;
}

// ---- Everything else, by library naming conventions --------------------------------------------

// Keywords in the template arguments of PyTorch's generic elementwise kernels
// (at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>).
KernelCategory ClassifyPyTorchElementwise(std::string_view targs) {
  if (Has(targs, {"layer_norm", "rms_norm"})) return KernelCategory::kNormalization;
  if (Has(targs, {"quant", "fp8", "float8", "fp4"})) return KernelCategory::kQuantization;
  if (Has(targs, {"copy", "fill", "index", "gather", "scatter", "cat_"})) {
    return KernelCategory::kCopyMemset;
  }
  return KernelCategory::kElementwise;
}

KernelCategory ClassifyGeneric(const NameParts& p) {
  const std::string_view b = p.base, t = p.targs, ident = p.ident;

  if (Has(b, {"nccl", "allreduce", "all_reduce", "allgather", "all_gather", "reducescatter",
              "reduce_scatter", "alltoall", "all_to_all", "cross_device_reduce", "custom_ar",
              "userbuffers", "nvshmem", "deepep", "deep_ep", "sendrecv", "lamport"})) {
    return KernelCategory::kCommunication;
  }
  if (Has(b, {"flash_fwd",
              "flash_bwd",
              "flash::",
              "flashattn",
              "flash_attn",
              "flash_mla",
              "flashmla",
              "fmha",
              "mha",
              "attention",
              "attn",
              "sdpa",
              "xqa",
              "batchprefill",
              "batchdecode",
              "singleprefill",
              "singledecode",
              "mergestate",
              "reshape_and_cache",
              "kvcache",
              "kv_cache",
              "decode_att",
              "extend_att",
              "prefill_att"}) ||
      ident.starts_with("_fwd_kernel")) {
    return KernelCategory::kAttention;
  }
  if (Has(b, {"cutlass"})) {
    // CUTLASS wraps every kernel in cutlass::Kernel<Op> / device_kernel<Op>: the operator decides.
    const size_t colons = ident.rfind("::");
    const std::string_view last =
        colons == std::string_view::npos ? ident : ident.substr(colons + 2);
    if (ident.starts_with("cutlass") || last == "kernel" || last == "kernel2" ||
        last == "device_kernel" || Has(b, {"gemm", "conv"})) {
      return Has(t, {"fmha", "attention", "flash", "mha"}) ? KernelCategory::kAttention
                                                           : KernelCategory::kGemm;
    }
  }
  if (Has(b, {"gemm", "gemv", "xmma", "nvjet", "cublas", "matmul", "splitkreduce", "scudnn",
              "marlin", "fused_moe", "batched_mm", "grouped_mm", "implicit_convolve"}) ||
      StartsWithAny(ident, {"bmm_", "gemm"}) || Has(p.params, {"cublas"})) {
    return KernelCategory::kGemm;
  }
  if (Has(b, {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "group_norm", "groupnorm",
              "batch_norm", "batchnorm", "instance_norm", "instancenorm", "l2norm", "l2_norm",
              "cudnn::bn_", "gammabetabackward", "rowwisemoments", "computepartgradgammabeta",
              "cucomputegradinput"})) {
    return KernelCategory::kNormalization;
  }
  if (Has(b, {"elementwise_kernel", "multi_tensor_apply"}) &&
      !Has(b, {"index_elementwise", "scatter_gather"})) {
    return ClassifyPyTorchElementwise(t);
  }
  if (Has(b, {"quant", "fp8", "fp4", "int8", "e4m3", "float8", "hfp8", "mxfp", "nvfp4"})) {
    return KernelCategory::kQuantization;
  }
  if (Has(b, {"softmax", "reduce", "reduction", "argmax", "argmin", "topk", "top_k",
              "cross_entropy", "nll_loss", "scan", "cumsum", "max_pool", "avg_pool", "pool2d",
              "pool3d", "histogram", "routing", "moe_align", "finalize"})) {
    return KernelCategory::kReduction;
  }
  if (Has(b, {"rotary", "rope", "silu", "gelu", "swiglu", "act_and_mul", "activation", "dropout",
              "distribution", "philox", "generatednativepointwise"})) {
    return KernelCategory::kElementwise;
  }
  if (Has(b, {"copy", "memcpy", "memset", "fill", "catarray", "concat", "transpose", "permute",
              "index", "gather", "scatter", "embedding", "reformat", "nchwto", "nhwcto", "to_dense",
              "repeat", "reshape"})) {
    return KernelCategory::kCopyMemset;
  }
  if (Has(b,
          {"elementwise", "vectorized", "unrolled", "pointwise", "relu", "sigmoid", "tanh", "bias",
           "add", "mul", "neg", "exp", "clamp", "where", "cast", "convert", "adam", "sgd"})) {
    return KernelCategory::kElementwise;
  }
  return KernelCategory::kOther;
}

}  // namespace

const char* KernelCategoryName(KernelCategory category) {
  switch (category) {
    case KernelCategory::kGemm:
      return "GEMM";
    case KernelCategory::kAttention:
      return "attention";
    case KernelCategory::kNormalization:
      return "normalization";
    case KernelCategory::kElementwise:
      return "elementwise";
    case KernelCategory::kReduction:
      return "reduction";
    case KernelCategory::kCommunication:
      return "communication";
    case KernelCategory::kCopyMemset:
      return "copy/memset";
    case KernelCategory::kQuantization:
      return "quantization";
    case KernelCategory::kCudaGraph:
      return "CUDA graph";
    case KernelCategory::kOther:
      return "other";
  }
  return "other";
}

std::vector<std::string_view> DecodeMyelinOps(std::string_view name) {
  std::vector<std::string_view> ops;
  constexpr std::string_view kPrefix = "__myl_";
  if (!name.starts_with(kPrefix)) return ops;
  std::string_view body = name.substr(kPrefix.size());
  body = body.substr(0, body.find('_'));  // "_0x<hash>", "_myl36_0" follow the op list
  size_t i = 0;
  while (i < body.size()) {
    size_t j = i + 1;
    while (j < body.size() && !std::isupper(static_cast<unsigned char>(body[j]))) ++j;
    ops.push_back(DecodeMyelinToken(body.substr(i, j - i)));
    i = j;
  }
  return ops;
}

KernelCategory ClassifyKernel(std::string_view name) {
  if (name.empty()) return KernelCategory::kOther;
  if (IsWholeGraphName(name)) return KernelCategory::kCudaGraph;
  if (name.starts_with("__myl_")) return ClassifyMyelinOps(DecodeMyelinOps(name));
  const NameParts parts = SplitName(name);
  if (parts.ident.starts_with("triton_")) return ClassifyInductor(parts.ident);
  KernelCategory c;
  if (parts.ident.starts_with("fused_")) {
    // Inductor-style "fused_<aten ops>" names, or library kernels named fused_* (fused_moe_kernel).
    if (ClassifyByAtenOps(parts.ident, &c)) return c;
    c = ClassifyGeneric(parts);
    return c == KernelCategory::kOther ? KernelCategory::kElementwise : c;
  }
  return ClassifyGeneric(parts);
}

}  // namespace sightline
