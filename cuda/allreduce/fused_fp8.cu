// The fused all-reduce + residual add + RMSNorm + FP8 E4M3 quantization kernels (per-tensor and
// per-token scales), and the unfused epilogue with the same quantization (fused_rows.cuh,
// quant_epilogue.cuh).
#include "fused_rows.cuh"

namespace sightline::allreduce {

cudaError_t LaunchFusedFp8(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& a,
                           int max_blocks, cudaStream_t stream) {
  return a.quant == Quant::kFp8
             ? LaunchFusedRows<Quant::kFp8>(c, d, two_shot, a, max_blocks, stream)
             : LaunchFusedRows<Quant::kFp8PerToken>(c, d, two_shot, a, max_blocks, stream);
}

cudaError_t LaunchResidualFp8(Dtype d, const FusedArgs& a, cudaStream_t stream) {
  return a.quant == Quant::kFp8 ? LaunchResidualRows<Quant::kFp8>(d, a, stream)
                                : LaunchResidualRows<Quant::kFp8PerToken>(d, a, stream);
}

}  // namespace sightline::allreduce
