#include "facts/loop_facts.h"

#include <fmt/format.h>

#include <algorithm>

namespace sightline {

StatusOr<const IterationsResult*> LoopFacts::Iterations() {
  std::call_once(iterations_once_, [this] {
    IterationsOptions o;
    o.name_regex = options_.iterations_regex;
    iterations_.emplace(ComputeIterations(trace_, gpu_, host_, graphs_, o));
  });
  if (!iterations_->ok()) return iterations_->status();
  return &iterations_->value();
}

void LoopFacts::EnsureWindows() {
  std::call_once(windows_once_, [this] {
    StatusOr<const IterationsResult*> iterations = Iterations();
    if (iterations.ok() && !(*iterations)->sets.empty() &&
        !(*iterations)->sets[0].iterations.empty()) {
      main_set_ = &(*iterations)->sets[0];
      // The device the loop's process used most; the first of its devices otherwise.
      int32_t device = -1;
      DurationNs best = -1;
      for (int32_t d : main_set_->devices) {
        const DurationNs t = TotalLength(gpu_.Busy(d));
        if (t > best) best = t, device = d;
      }
      // The steady state only: findings speak of it, not of the warm-up steps before it.
      for (const Iteration& it : main_set_->iterations) {
        if (it.warmup) continue;
        windows_.push_back(LoopWindow{it.index, it.start_ns, it.end_ns, main_set_->pid,
                                      main_set_->tid, device, &it});
      }
      return;
    }
    for (int32_t d : gpu_.GpuDevices()) {
      const std::vector<Interval>& b = gpu_.Busy(d);
      windows_.push_back(LoopWindow{-1, b.front().start_ns, b.back().end_ns, -1, -1, d, nullptr});
    }
  });
}

const IterationSet* LoopFacts::MainSet() {
  EnsureWindows();
  return main_set_;
}

const std::vector<LoopWindow>& LoopFacts::Windows() {
  EnsureWindows();
  return windows_;
}

int64_t LoopFacts::FindWindow(int32_t pid, TimeNs t) {
  EnsureWindows();
  // Iteration windows are sorted and disjoint; whole-trace windows (one per device) overlap, and
  // the first that holds t is taken.
  if (main_set_ == nullptr) {
    for (size_t w = 0; w < windows_.size(); ++w) {
      if (t >= windows_[w].start_ns && t < windows_[w].end_ns) return static_cast<int64_t>(w);
    }
    return -1;
  }
  // The last window that starts at or before t. Callers ask in time order (rows of a table), so
  // the previous answer's window and the next one are tried before a binary search.
  size_t w = windows_.size();
  const size_t hint = window_hint_.load(std::memory_order_relaxed);
  for (size_t c = hint; c < windows_.size() && c <= hint + 1; ++c) {
    if (t >= windows_[c].start_ns && (c + 1 == windows_.size() || t < windows_[c + 1].start_ns)) {
      w = c;
      break;
    }
  }
  if (w == windows_.size()) {
    auto it = std::upper_bound(windows_.begin(), windows_.end(), t,
                               [](TimeNs v, const LoopWindow& lw) { return v < lw.start_ns; });
    if (it == windows_.begin()) return -1;
    w = static_cast<size_t>(it - windows_.begin()) - 1;
  }
  window_hint_.store(w, std::memory_order_relaxed);
  if (t >= windows_[w].end_ns || pid != windows_[w].pid) return -1;
  return static_cast<int64_t>(w);
}

std::string LoopFacts::WindowLabel(const LoopWindow& w) const {
  if (w.it == nullptr) return "whole trace";
  const std::string plain = fmt::format("iteration {}", w.iteration);
  const std::string_view name = trace_.str(w.it->name);
  if (name == plain) return plain;  // "iteration 12", not "iteration 12 (iteration 12)"
  return fmt::format("{} ({})", plain, name);
}

}  // namespace sightline
