// Entry points of the fused residual add + RMSNorm all-reduce (fused_rows.cuh has the kernels): the
// plain fusion is instantiated here, the quantizing ones in fused_fp8.cu and fused_nvfp4.cu.
#include <string>

#include "fused_rows.cuh"
#include "kernels.h"

namespace sightline::allreduce {

std::string FusedLimit(const DeviceComm& c, Dtype d, int64_t tokens, int64_t hidden, Quant quant) {
  const int64_t row_bytes = hidden * DtypeBytes(d);
  if (row_bytes % 16 != 0) return "hidden size x dtype bytes is not a multiple of 16";
  if (quant == Quant::kNvfp4 && hidden % 16 != 0) return "NVFP4: hidden size not a multiple of 16";
  if (row_bytes / 16 > kRowBlockThreads * kRowMaxVecPerThread)
    return "row longer than " + std::to_string(kRowBlockThreads * kRowMaxVecPerThread * 16) +
           " bytes";
  if (row_bytes * tokens > c.cap_bytes) return "size exceeds the staging buffer (--cap)";
  return "";
}

cudaError_t LaunchFusedRmsNorm(const DeviceComm& c, Dtype d, bool two_shot, const FusedArgs& fa,
                               int max_blocks, cudaStream_t stream) {
  switch (fa.quant) {
    case Quant::kNone:
      return LaunchFusedRows<Quant::kNone>(c, d, two_shot, fa, max_blocks, stream);
    case Quant::kFp8:
    case Quant::kFp8PerToken:
      return LaunchFusedFp8(c, d, two_shot, fa, max_blocks, stream);
    case Quant::kNvfp4:
      return LaunchFusedNvfp4(c, d, two_shot, fa, max_blocks, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchResidualRmsNorm(Dtype d, const FusedArgs& fa, cudaStream_t stream) {
  switch (fa.quant) {
    case Quant::kNone:
      return LaunchResidualRows<Quant::kNone>(d, fa, stream);
    case Quant::kFp8:
    case Quant::kFp8PerToken:
      return LaunchResidualFp8(d, fa, stream);
    case Quant::kNvfp4:
      return LaunchResidualNvfp4(d, fa, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace sightline::allreduce
