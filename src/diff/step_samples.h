// Per-iteration figures of one run, what the diff verdict resamples (diff/verdict.h) and what a
// saved baseline keeps (diff/baseline_file.h): each iteration's wall time split into parts that
// add up to it: GPU work by range and category, and GPU idle by what the host was doing. Built
// from the main set of the iterations analysis. Units: ns. Rules: docs/analyses/diff.md, "Verdict".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"

namespace sightline {

// One part of an iteration's wall time.
struct StepPart {
  enum class Kind : uint8_t { kGpu, kIdle };
  Kind kind = Kind::kGpu;
  // kGpu: the range one level below the iteration that launched the work (digit runs read as N:
  // "layer 3" and "layer 7" are "layer N"); kStepRange when launched in the iteration outside any
  // such range, kOutsideRange when launched outside the iterations or not linked to a launch. A
  // replayed graph kernel launched in the iteration: the outermost range of its capture path
  // (facts/graph_kernel_paths.h) below the capture's own range (one around all of its thread's
  // capture points), or around its eager counterpart below the eager step's.
  std::string range;
  // kGpu: the kernel category ("gemm", ...) or memory-operation kind ("memcpy HtoD", "memset");
  // kIdle: what the host was doing, kIdleCauses.
  std::string what;

  std::string Key() const;                 // unique: kind, range and what
  std::string Label() const;               // "`mlp` gemm", "GPU idle, host in synchronize"
  static const char* KindName(Kind kind);  // "gpu", "idle"
};

inline constexpr char kStepRange[] = "(step)";
inline constexpr char kOutsideRange[] = "(outside)";
// What the host was doing while no GPU work of the iteration's devices ran, in this order of
// precedence when they overlap: a synchronize call, a garbage collection (ranges named as
// AnalyzeOptions::gc_range_names), the process's main launching thread waiting for the Python GIL
// (nsys -t python-gil), that thread in a waiting OS call outside CUDA calls (nsys -t osrt;
// IsWaitingOsCall), a memcpy/memset call, a launch call, another CUDA call, none (host code, or not
// traced).
inline constexpr const char* kIdleCauses[] = {
    "synchronize", "garbage collection", "GIL wait", "OS wait", "memcpy",
    "launch",      "other CUDA call",    "host"};

// The iterations of one run. For every iteration i: sum over p of part_ns[p][i] == wall_ns[i]
// (up to rounding).
struct RunSamples {
  std::string source;   // the trace's path, or the run's name in a saved baseline
  std::string pattern;  // the iteration names found ("ProfilerStep#N")
  std::vector<double> wall_ns;
  // GPU time launched inside the iteration (docs/metrics.md, "Iterations"): summed durations of
  // the kernels and memory operations whose launching call is in it, wherever they ran. Unlike the
  // parts, it sees work a host loop queues ahead of the GPU.
  std::vector<double> launched_ns;
  std::vector<StepPart> parts;
  std::vector<std::vector<double>> part_ns;  // [part][iteration]

  size_t iterations() const { return wall_ns.size(); }
  // Adds a part (all zero) when it is new; returns its index.
  size_t PartIndex(const StepPart& part);
  // Checks the shape and that every value is finite and not negative, and that the parts add up
  // to the wall time; `where` prefixes the message.
  Status Validate(const std::string& where) const;
};

// The per-iteration figures of the context's main iteration set. GPU work inside an iteration's
// window [start, end) on the set's devices (clipped to it; devices share one timeline) is split
// evenly among the items running at each instant, so the parts of the work add up to the GPU busy
// time; the rest of the window is GPU idle, split by the host's CUDA calls and garbage collections
// (any thread of the
// set's process). No iterations: a RunSamples with none (not an error).
StatusOr<RunSamples> CollectRunSamples(AnalysisContext& context);

// The main set's figures (CollectRunSamples) first, then those of each other loop of its process
// (IterationsResult::other_loops: a graph_step_N loop beside eager_step_N), each with its pattern.
StatusOr<std::vector<RunSamples>> CollectLoopSamples(AnalysisContext& context);

}  // namespace sightline
