// The registry entry "serving" (analyses/serving/serving_metrics.h): `analyze --requests FILE
// [TRACE...]` reads the results once, adds the serving section, joins a request log's token gaps to
// the first trace's iterations, and leaves the metrics, the TTFT tail's queueing and the join for
// the rules on serving results (analyses/findings/rule_*.cc).
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "analyses/serving/queueing.h"
#include "analyses/serving/serving_metrics.h"
#include "analyses/serving/serving_trace_join.h"
#include "facts/results_cache.h"
#include "importers/serving_results/request_results.h"

namespace sightline {
namespace {

// Section "serving" for aggregates-only results: the figures, and notes on what is missing.
void AddAggregateServingSection(const RequestResults& results, Report& report) {
  Section& s = report.AddSection("serving", "Serving: the benchmark's own aggregates", -1);
  s.AddFact("source", "Results", fmt::format("{} ({})", results.path, results.producer));
  if (results.duration_s > 0) {
    s.AddFact("duration_ns", "Benchmark duration", results.duration_s * 1e9, Unit::kDurationNs);
  }
  Table& t = s.AddTable("aggregates", "Figures as the benchmark wrote them",
                        {{"group", "Group", Unit::kText},
                         {"key", "Key", Unit::kText},
                         {"duration_ns", "Time", Unit::kDurationNs},
                         {"value", "Value", Unit::kNumber}});
  for (const RequestResults::Aggregate& a : results.aggregates) {
    const bool time = a.unit == Unit::kDurationNs;
    t.rows.push_back(
        {a.group, a.name, time ? Value(a.value) : Value(), time ? Value() : Value(a.value)});
  }
  t.note = "times converted from the tool's ms; other figures unconverted (units in the key)";
  for (const std::string& n : results.not_derived) s.notes.push_back(n);
}

// The serving section of `analyze --requests FILE [TRACE...]`, joined to the first trace.
class ServingAnalysis : public MultiTraceAnalysis {
 public:
  explicit ServingAnalysis(const AnalyzeOptions& options)
      : requests_(options.serving.requests), slo_(options.serving.slo) {}
  Status Add(const std::shared_ptr<AnalysisContext>& context, const TraceSetMember&) override {
    if (!context_) context_ = context;  // the first trace: the serving process's
    return Status::Ok();
  }
  // Without --requests there is nothing to keep, so the ranks can be spread over workers; with it,
  // the first trace's context is kept for the token-gap join.
  bool Reducible() const override { return !requests_; }
  StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>&,
                               const TraceSetMember&) override {
    return std::string();
  }
  Status AddReduced(const std::string&, const TraceSetMember&) override { return Status::Ok(); }
  Status Finish(const TraceSet&, Report& report, ResultsCache& results) override {
    if (!requests_) return Status::Ok();
    if (!requests_->diagnostics.empty()) {  // records of the results file that were not used
      ReportInput& in = report.inputs.emplace_back();
      in.label = "requests";
      in.path = requests_->path;
      in.format = requests_->format;
      in.producer = requests_->producer;
      in.diagnostics = requests_->diagnostics;
    }
    if (requests_->aggregates_only) {
      AddAggregateServingSection(*requests_, report);
      return Status::Ok();
    }
    ServingMetricsOptions o;
    o.slo = slo_;
    ASSIGN_OR_RETURN(const ServingMetrics* metrics, results.Get<ServingMetrics>([&] {
      return ComputeServingMetrics(*requests_, o);
    }));
    const ServingMetrics& m = *metrics;
    AddServingSection(*requests_, m, report);
    results.Put(ComputeQueueingTail(*requests_, m));
    // The request log's token gaps, joined to the trace's iterations: what ran inside them.
    const bool has_chunk_iterations =
        std::any_of(requests_->requests.begin(), requests_->requests.end(),
                    [](const RequestRecord& q) { return !q.chunk_iterations.empty(); });
    if (context_ && has_chunk_iterations) {
      ServingTraceJoin join = JoinTokenGapsToTrace(*context_, *requests_, m);
      for (Section& s : report.sections) {
        if (s.key == "serving") AddServingTraceJoin(join, s);
      }
      results.Put(std::move(join));
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<const RequestResults> requests_;
  std::shared_ptr<AnalysisContext> context_;
  SloOptions slo_;
};

}  // namespace

std::unique_ptr<MultiTraceAnalysis> CreateServingAnalysis(const AnalyzeOptions& options) {
  return std::make_unique<ServingAnalysis>(options);
}

}  // namespace sightline
