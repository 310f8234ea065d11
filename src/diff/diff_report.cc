#include "diff/diff_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyses/common/analysis_context.h"
#include "diff/step_samples.h"
#include "diff/verdict_report.h"

namespace sightline {
namespace {

Value Ns(double ns) {
  return std::isfinite(ns) ? Value(static_cast<int64_t>(std::llround(ns))) : Value();
}
Value Num(double v) { return std::isfinite(v) ? Value(v) : Value(); }

// The before/after/delta/change/ratio columns every comparison table shares.
std::vector<Column> CompareColumns(std::vector<Column> leading, const std::string& unit_note) {
  std::vector<Column> cols = std::move(leading);
  cols.push_back({"before_ns", "Before" + unit_note, Unit::kDurationNs});
  cols.push_back({"after_ns", "After" + unit_note, Unit::kDurationNs});
  cols.push_back({"delta_ns", "Delta", Unit::kDurationNs});
  cols.push_back({"delta_pct", "Change", Unit::kPercent});
  cols.push_back({"ratio", "Ratio", Unit::kRatio});
  return cols;
}

std::vector<Value> CompareValues(const std::string& label, const DiffItem& item) {
  std::vector<Value> row;
  row.reserve(12);
  row.emplace_back(label);
  row.push_back(Ns(item.before_ns));
  row.push_back(Ns(item.after_ns));
  row.push_back(Ns(item.delta_ns()));
  row.push_back(Num(item.delta_pct()));
  row.push_back(Num(item.ratio()));
  return row;
}

void Truncate(Table& t, size_t total, int top_n) {
  if (top_n > 0 && total > static_cast<size_t>(top_n)) {
    t.rows.resize(static_cast<size_t>(top_n));
    t.total_rows = static_cast<int64_t>(total);
  }
}

// Table notes stay under 118 characters: the text reporter does not wrap them.
std::string BasisNote(const TraceDiffResult& r) {
  if (r.basis == DiffBasis::kPerIteration) {
    return fmt::format(
        "Per iteration: work launched inside the iterations / their count ({} and {}).",
        r.iterations_before, r.iterations_after);
  }
  return "Totals over each whole trace.";
}

void AddSummary(const TraceDiffResult& r, int candidate_input, Report& report) {
  Section& s = report.AddSection("diff_summary", "Diff: candidate against baseline", -1);
  s.AddFact("baseline", "Baseline", report.inputs[0].path);
  s.AddFact("candidate", "Candidate", report.inputs[candidate_input].path);
  if (candidate_input != 1 || report.inputs.size() > 2) {
    s.notes.push_back(
        "several runs per side: the tables compare the first run of each; the verdict uses all");
  }
  s.AddFact("basis", "Before/after values are", DiffBasisName(r.basis));
  s.AddFact("basis_reason", "  because", r.basis_reason);
  s.AddFact("iterations_before", "Iterations in baseline", r.iterations_before, Unit::kCount);
  s.AddFact("iterations_after", "Iterations in candidate", r.iterations_after, Unit::kCount);
  if (r.iterations.has_value()) {
    s.AddFact("iteration_coverage_before_pct", "GPU time inside iterations, baseline",
              r.iteration_coverage_before_pct, Unit::kPercent);
    s.AddFact("iteration_coverage_after_pct", "GPU time inside iterations, candidate",
              r.iteration_coverage_after_pct, Unit::kPercent);
  }
  s.AddFact("kernels_before", "Distinct kernels in baseline", r.distinct_before, Unit::kCount);
  s.AddFact("kernels_after", "Distinct kernels in candidate", r.distinct_after, Unit::kCount);
  s.AddFact("kernels_matched", "Kernels matched", static_cast<int64_t>(r.kernels.size()),
            Unit::kCount);
  s.AddFact("kernels_matched_by_base_name", "  of them by base name only", r.loose_matches,
            Unit::kCount);
  s.AddFact("kernels_appeared", "Kernels only in candidate",
            static_cast<int64_t>(r.appeared.size()), Unit::kCount);
  s.AddFact("kernels_vanished", "Kernels only in baseline", static_cast<int64_t>(r.vanished.size()),
            Unit::kCount);
  s.AddFact("matched_share_before_pct", "Kernel time matched, baseline", r.matched_share_before_pct,
            Unit::kPercent);
  s.AddFact("matched_share_after_pct", "Kernel time matched, candidate", r.matched_share_after_pct,
            Unit::kPercent);
  Table& t =
      s.AddTable("totals", "GPU totals", CompareColumns({{"metric", "Metric", Unit::kText}}, ""));
  t.columns.push_back({"count_before", "Count before", Unit::kCount});
  t.columns.push_back({"count_after", "Count after", Unit::kCount});
  for (const DiffItem* item :
       {&r.gpu_time, &r.kernel_time, &r.memop_time, &r.trace_gpu_time, &r.gpu_busy}) {
    std::vector<Value> row = CompareValues(item->name, *item);
    const bool counted = item != &r.gpu_busy;
    row.push_back(counted ? Value(item->count_before) : Value());
    row.push_back(counted ? Value(item->count_after) : Value());
    t.rows.push_back(std::move(row));
  }
  t.note = BasisNote(r) + " The gate reads the first row.";
}

// `verdict`: the verdict decides the gate; the sums' items over the threshold are shown, not gated.
void AddGate(const TraceDiffResult& r, const LoopVerdicts* verdict, Report& report) {
  const GateResult& g = r.gate;
  if (!g.enabled) return;
  Section& s = report.AddSection("diff_gate", "Gate (--fail-if-slower)", -1);
  if (verdict != nullptr) {
    const char* result = verdict->decision == VerdictDecision::kSlower      ? "FAIL"
                         : verdict->decision == VerdictDecision::kNotSlower ? "pass"
                                                                            : "CANNOT TELL";
    s.AddFact("result", "Result", std::string(result));
    s.AddFact("decided_by", "Decided by", "verdict: " + DecidedBy(*verdict));
    s.AddFact("threshold_pct", "Fails when growth exceeds", g.threshold_pct, Unit::kPercent);
    s.AddFact("sum_items_over", "Items over the threshold on sums (not gated)",
              static_cast<int64_t>(g.failures.size()), Unit::kCount);
    return;
  }
  s.AddFact("result", "Result", std::string(g.failed ? "FAIL" : "pass"));
  s.AddFact("decided_by", "Decided by", std::string("sums (no verdict: see the verdict section)"));
  s.AddFact("threshold_pct", "Fails when growth exceeds", g.threshold_pct, Unit::kPercent);
  s.AddFact("min_share_pct", "Kernels gated from baseline share", g.min_share_pct, Unit::kPercent);
  s.AddFact("gated_kernels", "Kernels gated", g.gated_kernels, Unit::kCount);
  s.AddFact("basis", "Basis", DiffBasisName(r.basis));
  s.AddFact("failures", "Items over the threshold", static_cast<int64_t>(g.failures.size()),
            Unit::kCount);
  if (g.failures.empty()) return;
  Table& t = s.AddTable("failures", "Items that grew more than the threshold",
                        {{"item", "Item", Unit::kText},
                         {"kind", "Kind", Unit::kText},
                         {"before_ns", "Before", Unit::kDurationNs},
                         {"after_ns", "After", Unit::kDurationNs},
                         {"growth_pct", "Growth", Unit::kPercent}});
  for (const GateFailure& f : g.failures) {
    t.rows.push_back({f.what, f.kind, Ns(f.before_ns), Ns(f.after_ns), Num(f.growth_pct)});
  }
}

void AddKernelTable(Section& s, const char* key, const char* title,
                    const std::vector<const DiffItem*>& items, const TraceDiffResult& r,
                    int top_n) {
  Table& t = s.AddTable(key, title, CompareColumns({{"kernel", "Kernel", Unit::kText}}, ""));
  t.columns.push_back({"calls_before", "N before", Unit::kCount});
  t.columns.push_back({"calls_after", "N after", Unit::kCount});
  t.columns.push_back({"baseline_share_pct", "Share", Unit::kPercent});
  t.columns.push_back({"category", "Category", Unit::kText, true});
  t.columns.push_back({"match", "Match", Unit::kText, true});
  t.columns.push_back({"key", "Matching key", Unit::kText, true});
  t.columns.push_back({"full_name", "Full name (baseline)", Unit::kText, true});
  for (const DiffItem* k : items) {
    std::vector<Value> row = CompareValues(k->name, *k);
    row.push_back(k->count_before);
    row.push_back(k->count_after);
    row.push_back(k->share_before_pct);
    row.push_back(k->category);
    row.push_back(std::string(k->loose_match ? "base name" : "name"));
    row.push_back(k->key);
    row.push_back(k->detail);
    t.rows.push_back(std::move(row));
  }
  Truncate(t, items.size(), top_n);
  t.note = BasisNote(r);
}

void AddKernels(const TraceDiffResult& r, int top_n, Report& report) {
  Section& s = report.AddSection("diff_kernels", "Kernels", -1);
  // r.kernels is sorted by delta, largest regression first; improvements read best-first.
  std::vector<const DiffItem*> slower, faster;
  for (const DiffItem& k : r.kernels) (k.delta_ns() > 0 ? slower : faster).push_back(&k);
  std::reverse(faster.begin(), faster.end());
  AddKernelTable(s, "regressions", "Slower in the candidate (largest regression first)", slower, r,
                 top_n);
  AddKernelTable(s, "improvements", "Faster or unchanged (largest saving first)", faster, r, top_n);

  auto one_sided = [&](const char* key, const char* title, const std::vector<DiffItem>& items,
                       bool after) {
    if (items.empty()) return;  // the summary's counts say "0"
    Table& u = s.AddTable(
        key, title,
        {{"kernel", "Kernel", Unit::kText},
         {after ? "after_ns" : "before_ns", after ? "After" : "Before", Unit::kDurationNs},
         {"calls", "Calls", Unit::kCount},
         {"category", "Category", Unit::kText},
         {"key", "Matching key", Unit::kText, true},
         {"full_name", "Full name", Unit::kText, true}});
    for (const DiffItem& k : items) {
      u.rows.push_back({k.name, Ns(after ? k.after_ns : k.before_ns),
                        after ? k.count_after : k.count_before, k.category, k.key, k.detail});
    }
    Truncate(u, items.size(), top_n);
    u.note = BasisNote(r);
  };
  one_sided("appeared", "Kernels that appeared (only in the candidate)", r.appeared, true);
  one_sided("vanished", "Kernels that vanished (only in the baseline)", r.vanished, false);
}

void AddCategories(const TraceDiffResult& r, Report& report) {
  Section& s = report.AddSection("diff_categories", "Kernel categories and memory operations", -1);
  Table& t = s.AddTable("categories", "By category",
                        CompareColumns({{"category", "Category", Unit::kText}}, ""));
  t.columns.push_back({"count_before", "Count before", Unit::kCount});
  t.columns.push_back({"count_after", "Count after", Unit::kCount});
  for (const DiffItem& c : r.categories) {
    std::vector<Value> row = CompareValues(c.name, c);
    row.push_back(c.count_before);
    row.push_back(c.count_after);
    t.rows.push_back(std::move(row));
  }
  t.note = BasisNote(r);
}

void AddRanges(const TraceDiffResult& r, int top_n, Report& report) {
  if (r.ranges.empty()) return;
  Section& s =
      report.AddSection("diff_ranges", "NVTX and annotation ranges: GPU time launched", -1);
  Table& t = s.AddTable("ranges", "Ranges by nesting path (digits in names read as N)",
                        CompareColumns({{"range", "Range", Unit::kText}}, ""));
  t.columns.push_back({"count_before", "Count before", Unit::kCount});
  t.columns.push_back({"count_after", "Count after", Unit::kCount});
  for (const DiffItem& g : r.ranges) {
    std::vector<Value> row = CompareValues(g.name, g);
    row.push_back(g.count_before);
    row.push_back(g.count_after);
    t.rows.push_back(std::move(row));
  }
  Truncate(t, r.ranges.size(), top_n);
  t.note = "Totals over each whole trace: GPU time launched inside the ranges (docs/metrics.md).";
}

void AddIterations(const TraceDiffResult& r, int top_n, Report& report) {
  Section& s = report.AddSection("diff_iterations", "Iterations", -1);
  if (!r.iterations.has_value()) {
    s.notes.push_back(fmt::format(
        "iterations not compared: found {} in the baseline and {} in the candidate (both need "
        "some; see --iterations)",
        r.iterations_before, r.iterations_after));
    return;
  }
  const IterationDiff& d = *r.iterations;
  s.AddFact("pattern_before", "Iteration names, baseline", d.pattern_before);
  s.AddFact("pattern_after", "Iteration names, candidate", d.pattern_after);
  Table& t = s.AddTable("stats", "Per-iteration statistics",
                        CompareColumns({{"statistic", "Statistic", Unit::kText}}, ""));
  t.columns.push_back({"iterations_before", "Iterations before", Unit::kCount});
  t.columns.push_back({"iterations_after", "Iterations after", Unit::kCount});
  for (const DiffItem& item : d.stats) {
    std::vector<Value> row = CompareValues(item.name, item);
    row.push_back(item.count_before);
    row.push_back(item.count_after);
    t.rows.push_back(std::move(row));
  }
  std::vector<DiffItem> by_index = d.by_index;
  std::stable_sort(by_index.begin(), by_index.end(), [](const DiffItem& a, const DiffItem& b) {
    return a.delta_ns() > b.delta_ns();
  });
  Table& u = s.AddTable("by_index", "Iteration i against iteration i: wall time",
                        CompareColumns({{"iteration", "Iteration", Unit::kText}}, ""));
  u.columns.push_back({"kernels_before", "Kernels before", Unit::kCount});
  u.columns.push_back({"kernels_after", "Kernels after", Unit::kCount});
  for (const DiffItem& item : by_index) {
    std::vector<Value> row = CompareValues(item.name, item);
    row.push_back(item.count_before);
    row.push_back(item.count_after);
    u.rows.push_back(std::move(row));
  }
  Truncate(u, by_index.size(), top_n);
  u.note = "Largest slowdown first; kernels = kernels launched inside the iteration.";
}

}  // namespace

void AddDiffSections(const TraceDiffResult& diff, int top_n, Report& report) {
  AddDiffSections(diff, nullptr, top_n, report);
}

void AddDiffSections(const TraceDiffResult& diff, const LoopVerdicts* verdict, int top_n,
                     Report& report, int candidate_input) {
  if (verdict != nullptr) AddVerdictSection(*verdict, top_n, report);
  const bool by_verdict = verdict != nullptr && SetGateFromVerdict(*verdict, report);
  AddSummary(diff, candidate_input, report);
  AddGate(diff, by_verdict ? verdict : nullptr, report);
  AddKernels(diff, top_n, report);
  AddCategories(diff, report);
  AddRanges(diff, top_n, report);
  AddIterations(diff, top_n, report);
  const GateResult& gate = diff.gate;
  if (by_verdict || !gate.failed) return;
  // CI logs show stderr even when the report goes to a file: the CLI names what failed there too.
  std::string items;
  constexpr size_t kNamed = 8;  // the report lists them all
  for (size_t i = 0; i < gate.failures.size() && i < kNamed; ++i) {
    const GateFailure& f = gate.failures[i];
    items += fmt::format("{}{} {:+.1f}%", i == 0 ? "" : "; ", f.what, f.growth_pct);
  }
  if (gate.failures.size() > kNamed) {
    items += fmt::format("; and {} more (see the report)", gate.failures.size() - kNamed);
  }
  report.gate.failed = true;
  report.gate.message = fmt::format("slower than allowed (+{:.1f}%, {} basis): {}",
                                    gate.threshold_pct, DiffBasisName(diff.basis), items);
}

namespace {

// `sightline diff` as a multi-trace analysis: the first run of each side stays loaded (a pair) for
// the tables; every run gives its per-iteration figures for the verdict.
class DiffAnalysis : public MultiTraceAnalysis {
 public:
  explicit DiffAnalysis(const AnalyzeOptions& options)
      : top_n_(options.top_n), baseline_runs_(options.diff.baseline_runs) {
    options_.min_share_pct = options.diff.min_share_pct;
    options_.fail_if_slower_pct = options.diff.fail_if_slower_pct;
    verdict_options_.threshold_pct = options.diff.fail_if_slower_pct;
  }

  Status Add(const std::shared_ptr<AnalysisContext>& context,
             const TraceSetMember& member) override {
    const bool baseline = seen_ < baseline_runs_;
    ++seen_;
    ASSIGN_OR_RETURN(std::vector<RunSamples> run, CollectLoopSamples(*context));
    (baseline ? before_ : after_).push_back(std::move(run));
    std::shared_ptr<AnalysisContext>& first = baseline ? first_before_ : first_after_;
    if (first == nullptr) {
      first = context;
      if (!baseline) candidate_input_ = member.input;
    }
    return Status::Ok();
  }

  Status Finish(const TraceSet&, Report& report, ResultsCache&) override {
    if (first_before_ == nullptr || first_after_ == nullptr) {
      return InvalidArgumentError(fmt::format(
          "diff compares a baseline and a candidate (one or more runs each), got {} trace(s)",
          seen_));
    }
    ASSIGN_OR_RETURN(TraceDiffResult diff,
                     ComputeTraceDiff(*first_before_, *first_after_, options_));
    const LoopVerdicts verdict = ComputeLoopVerdicts(before_, after_, verdict_options_);
    AddDiffSections(diff, &verdict, top_n_, report, candidate_input_);
    return Status::Ok();
  }

 private:
  TraceDiffOptions options_;
  VerdictOptions verdict_options_;
  int top_n_;
  int baseline_runs_;
  int seen_ = 0;
  int candidate_input_ = 1;
  std::shared_ptr<AnalysisContext> first_before_, first_after_;
  std::vector<std::vector<RunSamples>> before_, after_;  // [run][loop]
};

}  // namespace

std::unique_ptr<MultiTraceAnalysis> CreateDiffAnalysis(const AnalyzeOptions& options,
                                                       const RunInputs& /*inputs*/) {
  return std::make_unique<DiffAnalysis>(options);
}

}  // namespace sightline
