// The fused all-reduce + residual add + RMSNorm + NVFP4 quantization kernels, and the unfused
// epilogue with the same quantization (fused_rows.cuh, quant_epilogue.cuh).
#include "fused_rows.cuh"

namespace sightline::allreduce {

cudaError_t LaunchFusedNvfp4(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& a,
                             int max_blocks, cudaStream_t stream) {
  return LaunchFusedRows<Quant::kNvfp4>(c, d, two_shot, a, max_blocks, stream);
}

cudaError_t LaunchResidualNvfp4(Dtype d, const FusedArgs& a, cudaStream_t stream) {
  return LaunchResidualRows<Quant::kNvfp4>(d, a, stream);
}

}  // namespace sightline::allreduce
