#include "kernel/ncu_stalls.h"

namespace sightline {
namespace {

constexpr StallReasonInfo kStalls[] = {
    {"long_scoreboard", "Long scoreboard",
     "waiting on global, local, texture or surface memory (an L1TEX operation)",
     "split loads from their use and keep more loads in flight (unroll, prefetch into registers "
     "or shared memory), vectorize to 16-byte accesses, coalesce, and avoid register spills"},
    {"short_scoreboard", "Short scoreboard",
     "waiting on shared memory or a special-function/MUFU result (an MIO operation)",
     "remove shared-memory bank conflicts (padding, swizzling), use fewer transcendental "
     "functions or their fast intrinsics, and keep independent work between load and use"},
    {"barrier", "Barrier", "waiting at __syncthreads() for the block's other warps",
     "balance work across the block's warps, use smaller blocks, or replace block barriers with "
     "warp-level sync or cooperative-groups tiles where the algorithm allows"},
    {"membar", "Memory barrier", "waiting for a memory fence (__threadfence) to complete",
     "fence less often or with a narrower scope; batch writes before one fence"},
    {"mio_throttle", "MIO throttle",
     "the memory input/output queue is full: too many shared-memory, special-math or dynamic "
     "branch instructions in flight",
     "use wider shared-memory accesses (fewer instructions), fewer atomics on shared memory, and "
     "mix other work between them"},
    {"lg_throttle", "LG throttle",
     "the local/global memory queue is full: too many memory instructions",
     "vectorize loads and stores (float4, 16 bytes), combine small accesses, and remove register "
     "spills (local memory)"},
    {"tex_throttle", "TEX throttle",
     "the texture/L1TEX unit is saturated (texture fetches or, on some GPUs, FP64/global loads)",
     "fewer or wider texture fetches; spread the load over more blocks"},
    {"math_pipe_throttle", "Math pipe throttle",
     "the math pipeline the warp needs is busy: the kernel is limited by that unit",
     "this is compute saturation: use a faster unit (tensor cores, lower precision, FMA) or do "
     "less arithmetic; more warps will not help"},
    {"wait", "Wait", "a fixed-latency dependency between instructions (ALU results)",
     "more instruction-level parallelism: independent accumulators, unrolling; more warps "
     "hide it too"},
    {"dispatch_stall", "Dispatch stall",
     "the dispatcher could not issue the selected instruction (pipeline conflict)",
     "usually small; if large, look for register bank or pipeline conflicts in the SASS"},
    {"drain", "Drain", "waiting after EXIT for the warp's memory stores to drain",
     "normal at the end of short kernels; fewer, larger kernels reduce it"},
    {"imc_miss", "IMC miss", "waiting for the immediate constant cache (a constant-memory miss)",
     "keep constants uniform across the warp and small; pass per-thread data in global memory"},
    {"branch_resolving", "Branch resolving",
     "waiting for a branch target or the warp's mask to be computed",
     "reduce divergent and indirect branches; make control flow uniform per warp"},
    {"no_instruction", "No instruction",
     "no instruction fetched: an instruction cache miss or a jump just taken",
     "shrink the hot loop's code (less unrolling or inlining), avoid many kernel variants "
     "running together"},
    {"no_instructions", "No instruction",
     "no instruction fetched: an instruction cache miss or a jump just taken",
     "shrink the hot loop's code (less unrolling or inlining), avoid many kernel variants "
     "running together"},
    {"sleeping", "Sleeping", "the warp is in __nanosleep or waiting at a warp-level barrier",
     "fewer sleeps or shorter backoff in spin loops; check producer/consumer balance"},
    {"misc", "Misc", "a rare reason ncu does not break out",
     "look at the source view to locate it"},
    {"not_selected", "Not selected",
     "ready, but another warp was picked: the scheduler had enough eligible warps",
     "none needed; this means latency is hidden (a compute-bound sign)"},
    {"selected", "Selected", "the warp issued an instruction (not a stall)", "none"},
    {"gmma", "GMMA", "waiting for warpgroup matrix-multiply-accumulate (wgmma) results",
     "overlap wgmma with the next tile's loads (deeper pipelining) so tensor cores stay fed"},
    {"warpgroup_arrive", "Warpgroup arrive",
     "waiting at a warpgroup arrive/wait for asynchronous tensor-core work",
     "deepen the pipeline so that wgmma waits less; balance producer and consumer warpgroups"},
    {"tensor_memory", "Tensor memory", "waiting on tensor memory (Blackwell TMEM) operations",
     "overlap TMEM loads with MMA work; pipeline deeper"},
};

}  // namespace

const StallReasonInfo* FindStallReason(std::string_view key) {
  for (const StallReasonInfo& s : kStalls) {
    if (key == s.key) return &s;
  }
  return nullptr;
}

}  // namespace sightline
