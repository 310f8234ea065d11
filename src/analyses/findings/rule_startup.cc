// Rule startup: the time before the first step that a cache or a setting would take away —
// compiling (torch.compile's workers, ptxas, gcc), autotuning, CUDA-graph capture, copying the
// weights to the GPU — from the phases of the run (analyses/phases). Paid once per process start,
// not per step: the finding is marked once_per_start and ranks after the steady state's findings;
// its figure is that start-up time, not a saving per step. docs/analyses/findings.md, "startup".
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "analyses/findings/findings.h"
#include "analyses/phases/phases.h"

namespace sightline {

// Below this, start-up work is not worth a finding.
inline constexpr DurationNs kMinStartupWorkNs = 2'000'000'000;

Status RuleStartup(AnalysisContext& c, std::vector<Finding>& out) {
  ASSIGN_OR_RETURN(const PhasesResult* rp, CachedPhases(c));
  const PhasesResult& r = *rp;
  if (!r.has_steps || r.segments.empty()) return Status::Ok();
  const DurationNs compile = r.activity(StartupActivity::kCompile);
  const DurationNs autotune = r.activity(StartupActivity::kAutotune);
  const DurationNs capture = r.activity(StartupActivity::kCapture);
  const DurationNs load = r.activity(StartupActivity::kLoad);
  const DurationNs work = compile + autotune + capture + load;
  if (work < kMinStartupWorkNs) return Status::Ok();
  const DurationNs before = std::max<DurationNs>(0, r.before_trace_ns);
  const DurationNs total = before + r.startup_ns();

  std::vector<std::string> parts;
  const auto part = [&](DurationNs ns, const char* what) {
    if (ns > 0) parts.push_back(fmt::format("{} {}", what, FormatDuration(ns)));
  };
  part(compile, "compiling");
  part(autotune, "autotuning");
  part(capture, "CUDA-graph capture");
  part(load, "copying to the GPU");
  Finding f;
  f.id = "startup";
  f.once_per_start = true;
  f.severity = work >= 10'000'000'000 ? Severity::kMedium : Severity::kLow;
  f.title = fmt::format(
      "Start-up: {} before the first step, of it {} that caches or settings take "
      "away ({})",
      FormatDuration(total), FormatDuration(work), fmt::join(parts, ", "));
  f.where = fmt::format("before the first step of '{}' ({} after the trace's first event)", r.steps,
                        FormatDuration(r.startup_ns()));
  f.estimated_savings_ns = work;
  if (before > 0) {
    f.evidence.push_back({"before_trace_ns", "Before the trace (imports, CUDA initialisation)",
                          before, Unit::kDurationNs});
  }
  f.evidence.push_back({"startup_ns", "Start-up in the trace (first event to first step)",
                        r.startup_ns(), Unit::kDurationNs});
  f.evidence.push_back({"compile_ns", "Compiling (compiler processes on CPU, GPU idle)", compile,
                        Unit::kDurationNs});
  if (r.compiler_processes > 0) {
    f.evidence.push_back(
        {"compiler_processes", "Compiler processes started", r.compiler_processes, Unit::kCount});
    f.evidence.push_back(
        {"compiler_cpu_ns", "Their CPU time in start-up", r.compiler_cpu_ns, Unit::kDurationNs});
  }
  f.evidence.push_back(
      {"autotune_ns", "Autotuning (kernels timed with CUDA events)", autotune, Unit::kDurationNs});
  f.evidence.push_back({"capture_ns", "CUDA-graph capture", capture, Unit::kDurationNs});
  f.evidence.push_back({"load_ns", "Copies to the GPU", load, Unit::kDurationNs});
  f.evidence.push_back({"host_ns", "Host work, GPU idle (not counted above)",
                        r.activity(StartupActivity::kHost), Unit::kDurationNs});
  std::vector<std::string> fix;
  if (compile > 0) {
    fix.push_back(
        "Keep the compiler's caches between starts: torch.compile's FX-graph and AOTAutograd "
        "caches and Triton's kernels live under TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR "
        "(by default in /tmp and ~/.triton: put them on storage that outlives the container), or "
        "ship them with torch.compiler.save_cache_artifacts() / load_cache_artifacts(); vLLM keeps "
        "its compile cache under VLLM_CACHE_ROOT (~/.cache/vllm); a TensorRT engine is built once "
        "and loaded");
  }
  if (autotune > 0) {
    fix.push_back(
        "Autotune less at start: the autotuning modes (mode=\"max-autotune\") time many kernel "
        "configurations; their choices are cached with the compile cache, and TensorRT keeps its "
        "tactic timings in a timing cache");
  }
  if (capture > 0) {
    fix.push_back(
        "Capture fewer CUDA graphs: one per batch size bucket actually served (vLLM "
        "cudagraph_capture_sizes, TensorRT-LLM cuda_graph_config.batch_sizes, SGLang "
        "cuda_graph_max_bs)");
  }
  if (load > 0) {
    fix.push_back(
        "Load the weights faster: safetensors read straight into GPU memory, files on local "
        "NVMe or in the page cache, several loader threads");
  }
  f.recommendation = fmt::format(
      "{}. Paid once per process start (cold start, scaling out), not "
      "per step: the steady state's findings rank first.",
      fmt::join(fix, ". "));
  for (const StartupSegment& s : r.segments) {
    if (s.activity == StartupActivity::kCompile || s.activity == StartupActivity::kAutotune ||
        s.activity == StartupActivity::kCapture || s.activity == StartupActivity::kLoad) {
      f.AddSpan(s.start_ns, s.end_ns);
    }
  }
  f.SortSpans();
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
