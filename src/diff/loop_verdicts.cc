#include "diff/loop_verdicts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace sightline {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Each run's loop named `pattern`; a run without it gives an empty one (left out, with a note).
std::vector<RunSamples> LoopOf(const std::vector<std::vector<RunSamples>>& runs,
                               const std::string& pattern) {
  std::vector<RunSamples> out;
  for (const std::vector<RunSamples>& loops : runs) {
    auto it = std::find_if(loops.begin(), loops.end(), [&](const RunSamples& r) {
      return r.pattern == pattern && r.iterations() > 0;
    });
    if (it != loops.end()) {
      out.push_back(*it);
    } else {
      out.emplace_back().source = loops.empty() ? std::string() : loops[0].source;
    }
  }
  return out;
}

std::vector<RunSamples> MainOf(const std::vector<std::vector<RunSamples>>& runs) {
  std::vector<RunSamples> out;
  for (const std::vector<RunSamples>& loops : runs) {
    if (loops.empty()) continue;
    out.push_back(loops[0]);
  }
  return out;
}

// The names of the loops with iterations, in order of first appearance.
std::vector<std::string> Patterns(const std::vector<std::vector<RunSamples>>& runs) {
  std::vector<std::string> out;
  for (const std::vector<RunSamples>& loops : runs) {
    for (const RunSamples& r : loops) {
      if (r.iterations() > 0 && !Has(out, r.pattern)) out.push_back(r.pattern);
    }
  }
  return out;
}

int64_t Steps(const std::vector<std::vector<RunSamples>>& runs, const std::string& pattern) {
  int64_t n = 0;
  for (const RunSamples& r : LoopOf(runs, pattern)) n += static_cast<int64_t>(r.iterations());
  return n;
}

const char* DecisionWords(VerdictDecision d) {
  switch (d) {
    case VerdictDecision::kSlower:
      return "slower";
    case VerdictDecision::kNotSlower:
      return "not slower";
    case VerdictDecision::kCannotTell:
      return "cannot tell";
    case VerdictDecision::kNoGate:
      break;
  }
  return "";
}

std::string Short(const char* name, const Estimate& e) {
  std::string s = fmt::format("{} {:+.1f}%", name, e.value);
  if (std::isfinite(e.lo) && std::isfinite(e.hi)) s += fmt::format(" ± {:.1f}%", (e.hi - e.lo) / 2);
  return s;
}

// Another loop's answer in a few words: "`graph_step_N` slower (GPU time launched +7.0% ± 0.1%)".
std::string Clause(const VerdictResult& v) {
  std::vector<std::string> stats;
  const bool launched = std::isfinite(v.launched_change_pct.value);
  const bool launched_first =
      launched && (v.decided_by.empty() ? !v.step_time_gated
                                        : v.decided_by.find("step time") == std::string::npos);
  std::string step = Short("step time", v.median_change_pct);
  if (!v.step_time_gated) step += ", host noise";
  if (launched_first) stats.push_back(Short("GPU time launched", v.launched_change_pct));
  stats.push_back(step);
  if (launched && !launched_first)
    stats.push_back(Short("GPU time launched", v.launched_change_pct));
  const char* words = DecisionWords(v.decision);
  return fmt::format("`{}`{}{} ({})", v.loop, *words != '\0' ? " " : "", words,
                     fmt::join(stats, "; "));
}

}  // namespace

LoopVerdicts OneLoop(VerdictResult verdict) {
  LoopVerdicts out;
  out.decision = verdict.decision;
  out.sentence = verdict.sentence;
  out.loops.push_back(std::move(verdict));
  return out;
}

LoopVerdicts ComputeLoopVerdicts(const std::vector<std::vector<RunSamples>>& before,
                                 const std::vector<std::vector<RunSamples>>& after,
                                 const VerdictOptions& options) {
  const std::vector<std::string> in_before = Patterns(before), in_after = Patterns(after);
  std::vector<std::string> mains;
  for (const auto* side : {&before, &after}) {
    for (const std::vector<RunSamples>& loops : *side) {
      if (!loops.empty() && loops[0].iterations() > 0) mains.push_back(loops[0].pattern);
    }
  }
  // The main loop: the first baseline run's main set, matched by name in every run; when the
  // candidate has no loop of that name (a renamed step), each run's main set, as one loop.
  const std::string first = mains.empty() ? std::string() : mains[0];
  const bool by_name = !first.empty() && Has(in_after, first);
  std::vector<std::string> others;
  std::vector<std::string> notes;
  for (const std::string& p : in_before) {
    if (p == first || (!by_name && Has(mains, p))) continue;
    if (!Has(in_after, p)) {
      notes.push_back(fmt::format("loop `{}` only in the baseline ({} steps): not compared", p,
                                  Steps(before, p)));
      continue;
    }
    const int64_t b = Steps(before, p), a = Steps(after, p);
    if (std::min(a, b) < options.min_iterations) {
      notes.push_back(
          fmt::format("loop `{}`: {} and {} steps, fewer than {} on a side: not compared", p, b, a,
                      options.min_iterations));
      continue;
    }
    others.push_back(p);
  }
  for (const std::string& p : in_after) {
    if (p == first || (!by_name && Has(mains, p)) || Has(in_before, p)) continue;
    notes.push_back(fmt::format("loop `{}` only in the candidate ({} steps): not compared", p,
                                Steps(after, p)));
  }

  LoopVerdicts out;
  VerdictOptions o = options;
  const bool several = !others.empty();
  if (several) o.loop_label = first;
  out.loops.push_back(by_name ? ComputeVerdict(LoopOf(before, first), LoopOf(after, first), o)
                              : ComputeVerdict(MainOf(before), MainOf(after), o));
  for (const std::string& p : others) {
    o.loop_label = p;
    out.loops.push_back(ComputeVerdict(LoopOf(before, p), LoopOf(after, p), o));
  }
  out.notes = std::move(notes);

  // The gate: any loop slower is a slower program; the main loop leads unless another decided.
  const VerdictResult& main = out.loops[0];
  out.decision = main.available ? main.decision : VerdictDecision::kNoGate;
  if (main.available && main.decision != VerdictDecision::kNoGate && several) {
    auto first_with = [&](VerdictDecision d) -> int {
      if (out.loops[0].decision == d) return 0;
      for (size_t i = 1; i < out.loops.size(); ++i) {
        if (out.loops[i].available && out.loops[i].decision == d) return static_cast<int>(i);
      }
      return -1;
    };
    if (int i = first_with(VerdictDecision::kSlower); i >= 0) {
      out.decision = VerdictDecision::kSlower;
      out.lead = static_cast<size_t>(i);
    } else if (int j = first_with(VerdictDecision::kCannotTell); j >= 0) {
      out.decision = VerdictDecision::kCannotTell;
      out.lead = static_cast<size_t>(j);
    } else {
      out.decision = VerdictDecision::kNotSlower;
    }
  }
  if (several) {
    const char* words = DecisionWords(out.decision);
    if (out.lead == 0) {
      out.lead_why = fmt::format("the main loop (the most steps, then the longest in total){}",
                                 out.decision == VerdictDecision::kNoGate
                                     ? std::string()
                                     : fmt::format(", and it is {}", words));
    } else {
      out.lead_why = fmt::format("it is {}, where the main loop `{}` is {}", words, main.loop,
                                 DecisionWords(main.decision));
    }
  }
  out.sentence = out.Lead().sentence;
  if (several) {
    std::vector<std::string> clauses;
    for (size_t i = 0; i < out.loops.size(); ++i) {
      if (i != out.lead) clauses.push_back(Clause(out.loops[i]));
    }
    out.sentence +=
        fmt::format(" Other loop{}: {}.", clauses.size() == 1 ? "" : "s", fmt::join(clauses, "; "));
  }
  return out;
}

}  // namespace sightline
