// The strategies of sightline-allreduce-bench (harness.h, StrategyOps): for each, the
// configurations it cannot run and how one call is enqueued. NCCL's all-reduce (then the
// residual-add + RMSNorm kernel when fused), the custom one-shot and two-shot kernels (fused or
// not), and Lamport's (not fused).
#include <string>

#include "harness.h"

namespace sightline::allreduce {
namespace {

// A fused configuration: what the fused kernel cannot take ("" when it can).
std::string FusedSkip(const Run& r, const Config& c) {
  return FusedLimit(r.comm, c.dtype, c.tokens, c.hidden, QuantOf(c.fusion));
}

std::string NcclSkip(const Run& r, const Config& c) {
  if (c.fusion != Fusion::kNone) return FusedSkip(r, c);
  return "";
}

std::string OneShotSkip(const Run& r, const Config& c) {
  if (c.bytes() > r.opt.one_shot_max_bytes) return "one-shot above --one-shot-max";
  if (c.fusion != Fusion::kNone) return FusedSkip(r, c);
  return OneShotLimit(r.comm, c.dtype, c.count);
}

std::string TwoShotSkip(const Run& r, const Config& c) {
  if (c.fusion != Fusion::kNone) return FusedSkip(r, c);
  return TwoShotLimit(r.comm, c.dtype, c.count);
}

std::string LamportSkip(const Run& r, const Config& c) {
  if (c.fusion != Fusion::kNone) return "lamport has no fused variant";
  if (c.bytes() > r.opt.lamport_max_bytes) return "lamport above --lamport-max";
  return LamportLimit(r.comm, c.dtype, c.count);
}

void NcclEnqueue(Run& r, const Config& c, int k, bool norm_out) {
  const bool fused = c.fusion != Fusion::kNone;
  CHECK(ncclAllReduce(r.in[k], fused ? r.sum : r.out[k], c.count, NcclType(c.dtype), ncclSum,
                      r.nccl, r.stream));
  if (fused) {
    FusedArgs a = FusedFor(r, c, k, norm_out);
    a.x = r.sum;
    CHECK(LaunchResidualRmsNorm(c.dtype, a, r.stream));
  }
}

// One-shot or two-shot (`two`), fused or not.
void PeerEnqueue(Run& r, const Config& c, int k, bool norm_out, bool two) {
  if (c.fusion != Fusion::kNone) {
    CHECK(LaunchFusedRmsNorm(r.comm, c.dtype, two, FusedFor(r, c, k, norm_out), r.opt.max_blocks,
                             r.stream));
  } else if (two) {
    CHECK(LaunchTwoShot(r.comm, c.dtype, r.in[k], r.out[k], c.count, r.opt.max_blocks, r.stream));
  } else {
    CHECK(LaunchOneShot(r.comm, c.dtype, r.in[k], r.out[k], c.count, r.opt.max_blocks, r.stream));
  }
}

void OneShotEnqueue(Run& r, const Config& c, int k, bool norm_out) {
  PeerEnqueue(r, c, k, norm_out, /*two=*/false);
}

void TwoShotEnqueue(Run& r, const Config& c, int k, bool norm_out) {
  PeerEnqueue(r, c, k, norm_out, /*two=*/true);
}

void LamportEnqueue(Run& r, const Config& c, int k, bool /*norm_out*/) {
  CHECK(LaunchLamport(r.comm, c.dtype, r.in[k], r.out[k], c.count, r.opt.max_blocks, r.stream));
}

constexpr StrategyOps kStrategies[] = {
    {Strategy::kNccl, NcclSkip, NcclEnqueue},
    {Strategy::kOneShot, OneShotSkip, OneShotEnqueue},
    {Strategy::kTwoShot, TwoShotSkip, TwoShotEnqueue},
    {Strategy::kLamport, LamportSkip, LamportEnqueue},
};

}  // namespace

const StrategyOps& OpsOf(Strategy s) {
  for (const StrategyOps& ops : kStrategies) {
    if (ops.strategy == s) return ops;
  }
  Fatal("unknown strategy " + std::to_string(static_cast<int>(s)));
}

// The fused call's arguments for input/output pair k. A quantizing fusion writes the normalized
// row (`out`) only with norm_out, as the check calls do; the timed calls write the quantized
// outputs and residual_out only, as TensorRT-LLM's RESIDUAL_RMS_NORM_QUANT_* patterns do.
FusedArgs FusedFor(const Run& r, const Config& c, int k, bool norm_out) {
  FusedArgs a;
  a.x = r.in[k];
  a.residual = r.residual;
  a.gamma = r.gamma;
  a.out = r.out[k];
  a.residual_out = r.resout[k];
  a.tokens = c.tokens;
  a.hidden = c.hidden;
  a.quant = QuantOf(c.fusion);
  if (a.quant != Quant::kNone) {
    if (!norm_out) a.out = nullptr;
    a.q.values = r.qvals[k];
    a.q.scales = r.qscales[k];
    a.q.scale_in = r.qscale_in + (a.quant == Quant::kNvfp4 ? 1 : 0);
  }
  return a;
}
}  // namespace sightline::allreduce
