// A PyTorch op over libsightline_allreduce (include/sightline/allreduce.h): what a runtime's custom
// all-reduce op looks like. Built by torch_allreduce.py with torch.utils.cpp_extension.load; the
// calls go on PyTorch's current stream, so they order with the model's kernels and can be captured
// in torch.cuda.graphs.
#include <c10/cuda/CUDAStream.h>
#include <torch/extension.h>

#include <string>
#include <vector>

#include "sightline/allreduce.h"

namespace {

sightline_ar_comm* g_comm = nullptr;

void Check(sightline_ar_status s, const char* what) {
  TORCH_CHECK(s == SIGHTLINE_AR_SUCCESS, what, ": ", sightline_ar_status_name(s), ": ",
              sightline_ar_last_error());
}

sightline_ar_dtype DtypeOf(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kBFloat16:
      return SIGHTLINE_AR_BF16;
    case at::kHalf:
      return SIGHTLINE_AR_FP16;
    case at::kFloat:
      return SIGHTLINE_AR_FP32;
    default:
      break;
  }
  TORCH_CHECK(false, "sightline all-reduce takes bf16, fp16 or fp32, not ", t.scalar_type());
  return SIGHTLINE_AR_BF16;
}

sightline_ar_strategy StrategyOf(const std::string& name) {
  sightline_ar_strategy s;
  TORCH_CHECK(sightline_ar_parse_strategy(name.c_str(), &s) == 0, "unknown strategy '", name,
              "' (auto, nccl, oneshot, twoshot, lamport)");
  return s;
}

CUstream_st* Stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

void CheckInput(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda() && t.is_contiguous(), name, " must be a contiguous CUDA tensor");
  TORCH_CHECK(g_comm != nullptr, "call init() first");
  TORCH_CHECK(t.get_device() == sightline_ar_comm_device(g_comm), name, " is on GPU ",
              t.get_device(), ", the communicator on GPU ", sightline_ar_comm_device(g_comm));
}

// Collective: every rank calls it once, after torch.cuda.set_device(local rank).
void Init(int64_t max_bytes) {
  TORCH_CHECK(g_comm == nullptr, "init() was called already");
  sightline_ar_config cfg;
  sightline_ar_config_init(&cfg);
  cfg.max_bytes = static_cast<size_t>(max_bytes);
  Check(sightline_ar_comm_init_env(&cfg, &g_comm), "sightline_ar_comm_init_env");
}

at::Tensor AllReduce(const at::Tensor& x, const std::string& strategy) {
  CheckInput(x, "x");
  at::Tensor out = at::empty_like(x);
  Check(sightline_ar_allreduce(g_comm, x.data_ptr(), out.data_ptr(), x.numel(), DtypeOf(x),
                               x.dim() > 0 ? x.size(-1) : 0, StrategyOf(strategy), Stream()),
        "sightline_ar_allreduce");
  return out;
}

// Returns {out, residual_out}: residual_out = allreduce(x) + residual, out = rmsnorm(residual_out)
// * gamma, rows of x.size(-1).
std::vector<at::Tensor> FusedAddRmsNorm(const at::Tensor& x, const at::Tensor& residual,
                                        const at::Tensor& gamma, double eps,
                                        const std::string& strategy) {
  CheckInput(x, "x");
  CheckInput(residual, "residual");
  CheckInput(gamma, "gamma");
  TORCH_CHECK(residual.sizes() == x.sizes() && residual.scalar_type() == x.scalar_type(),
              "residual must match x");
  TORCH_CHECK(gamma.numel() == x.size(-1) && gamma.scalar_type() == x.scalar_type(),
              "gamma must hold one row of x's dtype");
  at::Tensor out = at::empty_like(x), residual_out = at::empty_like(x);
  sightline_ar_fused_args a{};
  a.fusion = SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM;
  a.x = x.data_ptr();
  a.residual = residual.data_ptr();
  a.gamma = gamma.data_ptr();
  a.out = out.data_ptr();
  a.residual_out = residual_out.data_ptr();
  a.hidden_size = x.size(-1);
  a.tokens = x.numel() / x.size(-1);
  a.eps = static_cast<float>(eps);
  Check(sightline_ar_allreduce_fused(g_comm, &a, DtypeOf(x), StrategyOf(strategy), Stream()),
        "sightline_ar_allreduce_fused");
  return {out, residual_out};
}

std::string LastStrategy() {
  return sightline_ar_strategy_name(sightline_ar_last_strategy(g_comm));
}

void Shutdown() {
  sightline_ar_comm_destroy(g_comm);
  g_comm = nullptr;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("init", &Init, "create the communicator from the launcher's environment (collective)",
        py::arg("max_bytes") = 64 << 20);
  m.def("all_reduce", &AllReduce, "sum over ranks into a new tensor", py::arg("x"),
        py::arg("strategy") = "auto");
  m.def("fused_add_rmsnorm", &FusedAddRmsNorm, "all-reduce + residual add + RMSNorm", py::arg("x"),
        py::arg("residual"), py::arg("gamma"), py::arg("eps") = 1e-6, py::arg("strategy") = "auto");
  m.def("last_strategy", &LastStrategy, "the strategy the latest call ran");
  m.def("shutdown", &Shutdown, "destroy the communicator");
}
