// Rule gil_contention: the thread that launches the GPU work waits for the Python GIL while another
// thread of the process holds it. docs/analyses/findings.md, "gil_contention".
#include <fmt/format.h>

#include "analyses/findings/findings.h"
#include "analyses/threads/threads.h"

namespace sightline {
namespace {

constexpr double kGilMinWaitShare = 0.05;  // of the loop's wall time

}  // namespace

Status RuleGilContention(AnalysisContext& c, std::vector<Finding>& out) {
  ASSIGN_OR_RETURN(const ThreadsResult* r, CachedThreads(c));
  if (!r->has_gil || r->main_tid < 0 || r->main_waited_ns <= 0) return Status::Ok();
  // The loop's wall time: its iterations, or the span of the trace's GPU work.
  DurationNs loop = 0;
  for (const LoopWindow& w : c.loop().Windows()) loop += w.end_ns - w.start_ns;
  if (loop <= 0) return Status::Ok();
  const double share = static_cast<double>(r->main_waited_ns) / static_cast<double>(loop);
  if (share < kGilMinWaitShare) return Status::Ok();
  // The holder to name: the first that is not a profiler thread.
  const GilHolder* holder = nullptr;
  DurationNs blamed = 0;
  for (const GilHolder& h : r->holders) {
    if (h.role == ThreadRole::kProfiler) continue;
    blamed += h.held_while_waited_ns;
    if (holder == nullptr) holder = &h;
  }
  if (holder == nullptr) return Status::Ok();  // only the profiler held it: the capture's cost
  Finding f;
  f.id = "gil_contention";
  f.severity = share >= 0.2 ? Severity::kHigh : Severity::kMedium;
  f.title = fmt::format(
      "The launching thread waits for the GIL {} ({} of the loop); thread {}{} holds it most "
      "meanwhile",
      FormatDuration(r->main_waited_ns), Percent(share, 1.0), holder->tid,
      holder->name.empty() ? std::string() : fmt::format(" ({})", holder->name));
  f.evidence.push_back(
      {"gil_waited_ns", "Launching thread's GIL wait", r->main_waited_ns, Unit::kDurationNs});
  f.evidence.push_back({"loop_ns", "Loop wall time", loop, Unit::kDurationNs});
  f.evidence.push_back({"holder_tid", "Main holder thread", int64_t{holder->tid}, Unit::kNumber});
  f.evidence.push_back({"holder_held_ns", "It held the GIL meanwhile", holder->held_while_waited_ns,
                        Unit::kDurationNs});
  f.evidence.push_back(
      {"others_held_ns", "All non-profiler threads held it meanwhile", blamed, Unit::kDurationNs});
  f.where = fmt::format("launching thread {}:{}", r->main_pid, r->main_tid);
  f.recommendation =
      "Keep the launching thread off the GIL's queue: move the other thread's work (response "
      "handling, detokenization, logging) to another process, release the GIL in C++ "
      "extensions during long native calls, batch the other thread's work every N iterations, or "
      "run fewer Python threads beside the loop.";
  // Upper bound: the launching thread's wait, if nothing else took the GIL.
  f.estimated_savings_ns = r->main_waited_ns;
  out.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace sightline
