#include "diff/verdict_report.h"

#include <fmt/format.h>

#include <cmath>

namespace sightline {
namespace {

Value NumValue(double v) { return std::isfinite(v) ? Value(v) : Value(); }
Value NsValue(double ns) {
  return std::isfinite(ns) ? Value(static_cast<int64_t>(std::llround(ns))) : Value();
}

void AddPartTable(Section& s, const char* key, const char* title, const char* first,
                  const std::vector<VerdictPart>& items, int top_n, std::string note) {
  if (items.empty()) return;
  Table& t = s.AddTable(key, title,
                        {{"part", first, Unit::kText},
                         {"before_ns", "Before", Unit::kDurationNs},
                         {"after_ns", "After", Unit::kDurationNs},
                         {"delta_ns", "Delta", Unit::kDurationNs},
                         {"points", "Points", Unit::kNumber},
                         {"points_low", "Low", Unit::kNumber},
                         {"points_high", "High", Unit::kNumber},
                         {"change_pct", "Change", Unit::kPercent},
                         {"status", "Status", Unit::kText},
                         {"kind", "Kind", Unit::kText, true},
                         {"range", "Range", Unit::kText, true},
                         {"what", "What", Unit::kText, true},
                         {"change_low_pct", "Change low", Unit::kPercent, true},
                         {"change_high_pct", "Change high", Unit::kPercent, true}});
  for (const VerdictPart& p : items) {
    std::string status = p.appeared                 ? "appeared"
                         : p.vanished               ? "vanished"
                         : p.points.excludes_zero() ? (p.points.value > 0 ? "grew" : "shrank")
                                                    : "within noise";
    t.rows.push_back({p.label, NsValue(p.before_ns), NsValue(p.after_ns), NsValue(p.delta_ns()),
                      NumValue(p.points.value), NumValue(p.points.lo), NumValue(p.points.hi),
                      NumValue(p.change_pct.value), std::move(status), p.kind, p.range, p.what,
                      NumValue(p.change_pct.lo), NumValue(p.change_pct.hi)});
  }
  if (top_n > 0 && items.size() > static_cast<size_t>(top_n)) {
    t.rows.resize(static_cast<size_t>(top_n));
    t.total_rows = static_cast<int64_t>(items.size());
  }
  t.note = std::move(note);
}

// decided_by in a table cell: "step time", "GPU time", "both".
std::string ShortDecidedBy(const VerdictResult& v) {
  if (v.decided_by == "step time and GPU time launched") return "both";
  return v.decided_by == "GPU time launched" ? "GPU time" : v.decided_by;
}

// Every loop's answer, when a trace holds several.
void AddLoopTable(const LoopVerdicts& lv, Section& s) {
  Table& t = s.AddTable("loops", "Loops: each compared on its own",
                        {{"loop", "Loop", Unit::kText},
                         {"iterations_before", "N before", Unit::kCount},
                         {"iterations_after", "N after", Unit::kCount},
                         {"decision", "Decision", Unit::kText},
                         {"decided_by", "Decided by", Unit::kText},
                         {"step_change_pct", "Step time", Unit::kPercent},
                         {"step_low_pct", "Low", Unit::kPercent},
                         {"step_high_pct", "High", Unit::kPercent},
                         {"launched_change_pct", "GPU launched", Unit::kPercent},
                         {"launched_low_pct", "Low", Unit::kPercent},
                         {"launched_high_pct", "High", Unit::kPercent},
                         {"busy_share_pct", "GPU busy", Unit::kPercent},
                         {"step_time_gated", "Step time gated", Unit::kText, true}});
  for (const VerdictResult& v : lv.loops) {
    const Estimate& m = v.median_change_pct;
    const Estimate& l = v.launched_change_pct;
    t.rows.push_back({v.loop, v.iterations_before, v.iterations_after,
                      std::string(VerdictDecisionName(v.decision)), ShortDecidedBy(v),
                      NumValue(m.value), NumValue(m.lo), NumValue(m.hi), NumValue(l.value),
                      NumValue(l.lo), NumValue(l.hi), NumValue(v.busy_share_before_pct),
                      std::string(v.step_time_gated ? "yes" : "no: host noise")});
  }
  t.note = "Medians per step; GPU busy: share of the baseline's step. The gate: slower if any is.";
}

}  // namespace

std::string DecidedBy(const LoopVerdicts& lv) {
  const VerdictResult& v = lv.Lead();
  std::string s = v.decided_by_detail;
  if (lv.loops.size() > 1) s += fmt::format(", in `{}`", v.loop);
  if (!v.step_time_gated) s += "; the step time is host noise here, not gated";
  return s;
}

void AddVerdictSection(const VerdictResult& v, int top_n, Report& report) {
  AddVerdictSection(OneLoop(v), top_n, report);
}

void AddVerdictSection(const LoopVerdicts& lv, int top_n, Report& report) {
  const VerdictResult& v = lv.Lead();
  Section& s = report.AddSection("diff_verdict", "Verdict: step time, how sure, and why", -1);
  if (!v.available) {
    s.AddFact("available", "Verdict", std::string("none"));
    s.notes.push_back("no verdict: " + v.unavailable_reason +
                      "; the comparison below is of sums, without an interval");
    return;
  }
  s.AddFact("summary", "In one sentence", lv.sentence);
  if (lv.loops.size() > 1) {
    s.AddFact("loop", "Loop shown", v.loop);
    s.AddFact("loop_reason", "  because", lv.lead_why);
    AddLoopTable(lv, s);
  }
  for (const std::string& n : lv.notes) s.notes.push_back(n);
  for (const std::string& n : v.notes) s.notes.push_back(n);
  // Host noise: said in full in the decision's reason, or here without a gate.
  if (!v.step_time_gated) {
    s.AddFact("step_time_gated", "Step time gated", std::string("no: host noise"));
    if (v.decision == VerdictDecision::kNoGate) {
      s.AddFact("step_time_noise", "  because", v.step_time_noise);
    }
  }
  if (v.decision != VerdictDecision::kNoGate) {
    s.AddFact("decision", "Decision", std::string(VerdictDecisionName(lv.decision)));
    s.AddFact("threshold_pct", "Threshold (--fail-if-slower)", v.threshold_pct, Unit::kPercent);
    s.AddFact("decided_by", "  read from", v.decided_by);
    s.AddFact("decision_reason", "  because", v.decision_reason);
    if (v.iterations_to_decide.has_value()) {
      s.AddFact("iterations_to_decide", "Iterations per side that would likely decide",
                *v.iterations_to_decide, Unit::kCount);
    }
    if (v.runs_to_decide.has_value()) {
      s.AddFact("runs_to_decide", "Runs per side that would likely decide", *v.runs_to_decide,
                Unit::kCount);
    }
  }
  s.AddFact("runs_before", "Runs, baseline", v.runs_before, Unit::kCount);
  s.AddFact("runs_after", "Runs, candidate", v.runs_after, Unit::kCount);
  s.AddFact("iterations_before", "Iterations, baseline", v.iterations_before, Unit::kCount);
  s.AddFact("iterations_after", "Iterations, candidate", v.iterations_after, Unit::kCount);
  s.AddFact("confidence_pct", "Interval confidence", v.confidence * 100, Unit::kPercent);
  s.AddFact("resamples", "Bootstrap resamples", static_cast<int64_t>(v.resamples), Unit::kCount);
  s.AddFact("seed", "Seed", static_cast<int64_t>(v.seed), Unit::kCount);

  Table& t = s.AddTable("step_time", "Step time and GPU time per iteration",
                        {{"metric", "Metric", Unit::kText},
                         {"before_ns", "Before", Unit::kDurationNs},
                         {"after_ns", "After", Unit::kDurationNs},
                         {"change_pct", "Change", Unit::kPercent},
                         {"change_low_pct", "Low", Unit::kPercent},
                         {"change_high_pct", "High", Unit::kPercent},
                         {"points", "Points", Unit::kNumber},
                         {"points_low", "Points low", Unit::kNumber},
                         {"points_high", "Points high", Unit::kNumber}});
  t.rows.push_back({std::string("step time, median"), NsValue(v.median_before_ns),
                    NsValue(v.median_after_ns), NumValue(v.median_change_pct.value),
                    NumValue(v.median_change_pct.lo), NumValue(v.median_change_pct.hi), Value(),
                    Value(), Value()});
  t.rows.push_back({std::string("step time, mean"), NsValue(v.mean_before_ns),
                    NsValue(v.mean_after_ns), NumValue(v.mean_change_pct.value),
                    NumValue(v.mean_change_pct.lo), NumValue(v.mean_change_pct.hi),
                    NumValue(v.mean_change_pct.value), NumValue(v.mean_change_pct.lo),
                    NumValue(v.mean_change_pct.hi)});
  t.rows.push_back({std::string("GPU time launched, median"), NsValue(v.launched_median_before_ns),
                    NsValue(v.launched_median_after_ns), NumValue(v.launched_change_pct.value),
                    NumValue(v.launched_change_pct.lo), NumValue(v.launched_change_pct.hi), Value(),
                    Value(), Value()});
  for (const VerdictPart* p : {&v.gpu_busy, &v.gpu_idle}) {
    t.rows.push_back({p->label + ", mean", NsValue(p->before_ns), NsValue(p->after_ns),
                      NumValue(p->change_pct.value), NumValue(p->change_pct.lo),
                      NumValue(p->change_pct.hi), NumValue(p->points.value), NumValue(p->points.lo),
                      NumValue(p->points.hi)});
  }
  t.note = fmt::format(
      "{:.0f}% bootstrap intervals{}; points: change / the baseline's mean step time x 100.",
      v.confidence * 100,
      v.between_runs ? fmt::format(", each widened to hold the spread between the {} + {} runs "
                                   "(Student's t over each run's own figure)",
                                   v.runs_before, v.runs_after)
                     : "");

  AddPartTable(s, "parts", "Where the change in mean step time went (parts add up to it)", "Part",
               v.parts, top_n,
               "Mean per iteration; GPU parts: work on the GPU, split evenly among what ran at "
               "once.");
  AddPartTable(s, "ranges", "GPU work by range below the iteration", "Range", v.ranges, top_n,
               "(step): launched in the iteration outside a range; (outside): elsewhere.");
  AddPartTable(s, "categories", "GPU work by category", "Category", v.categories, top_n,
               "Kernel categories and memory-operation kinds.");
}

bool SetGateFromVerdict(const VerdictResult& v, Report& report) {
  return SetGateFromVerdict(OneLoop(v), report);
}

bool SetGateFromVerdict(const LoopVerdicts& lv, Report& report) {
  const VerdictResult& v = lv.Lead();
  if (!v.available || lv.decision == VerdictDecision::kNoGate) return false;
  report.gate.failed = lv.decision == VerdictDecision::kSlower;
  report.gate.undecided = lv.decision == VerdictDecision::kCannotTell;
  std::string message = lv.sentence;
  if (lv.decision != VerdictDecision::kNotSlower) message += " (" + v.decision_reason + ")";
  if (v.iterations_to_decide.has_value()) {
    message += v.runs_to_decide.has_value()
                   ? fmt::format("; about {} runs per side would likely decide", *v.runs_to_decide)
                   : fmt::format("; about {} iterations per side would likely decide",
                                 *v.iterations_to_decide);
  }
  report.gate.message = std::move(message);
  return true;
}

}  // namespace sightline
