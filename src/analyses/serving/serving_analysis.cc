// The registry entry "serving" (analyses/serving/serving_metrics.h): `analyze --requests FILE
// [TRACE...]` takes the results the run read (RunInputs::requests), adds the serving section,
// joins a request log's token gaps to the first trace's iterations, and leaves the metrics, the
// TTFT tail's queueing and the join for the rules on serving results (analyses/findings/rule_*.cc).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "analyses/common/reducible_analysis.h"
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

// The serving section of `analyze --requests FILE [TRACE...]`, joined to the first trace. It
// keeps no trace: the first trace's join is made where that trace is loaded (Reduce, on any rank
// thread or MPI process), so serving results leave the ranks spread like any run.
class ServingAnalysis : public ReducibleAnalysis {
 public:
  ServingAnalysis(const AnalyzeOptions& options, const RunInputs& inputs)
      : requests_(inputs.requests), slo_(options.serving.slo) {}
  // The first trace (the serving process's): the request log's token gaps joined to its
  // iterations; the others: nothing.
  StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>& context,
                               const TraceSetMember& member) override {
    if (member.index != 0 || !JoinsTrace()) return std::string();
    const StatusOr<ServingMetrics>& metrics = Metrics();
    if (!metrics.ok()) return std::string();  // Finish says why
    return EncodeServingTraceJoin(JoinTokenGapsToTrace(*context, *requests_, *metrics));
  }
  Status AddReduced(const std::string& blob, const TraceSetMember&) override {
    if (blob.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(ServingTraceJoin join, DecodeServingTraceJoin(blob));
    join_ = std::move(join);
    return Status::Ok();
  }
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
    ASSIGN_OR_RETURN(const ServingMetrics* metrics,
                     results.Get<ServingMetrics>([&] { return Metrics(); }));
    const ServingMetrics& m = *metrics;
    AddServingSection(*requests_, m, report);
    results.Put(ComputeQueueingTail(*requests_, m));
    // The request log's token gaps, joined to the trace's iterations: what ran inside them.
    if (join_) {
      for (Section& s : report.sections) {
        if (s.key == "serving") AddServingTraceJoin(*join_, s);
      }
      results.Put(std::move(*join_));
    }
    return Status::Ok();
  }

 private:
  // Only a request log says in which iteration each token came out (chunk iterations).
  bool JoinsTrace() const {
    return requests_ && !requests_->aggregates_only &&
           std::any_of(requests_->requests.begin(), requests_->requests.end(),
                       [](const RequestRecord& q) { return !q.chunk_iterations.empty(); });
  }
  // The results' metrics, computed once here, whichever of Reduce and Finish asks first.
  const StatusOr<ServingMetrics>& Metrics() {
    std::call_once(metrics_once_, [&] {
      ServingMetricsOptions o;
      o.slo = slo_;
      metrics_ = ComputeServingMetrics(*requests_, o);
    });
    return metrics_;
  }

  std::shared_ptr<const RequestResults> requests_;
  SloOptions slo_;
  std::once_flag metrics_once_;
  StatusOr<ServingMetrics> metrics_ = InternalError("not computed");
  std::optional<ServingTraceJoin> join_;
};

}  // namespace

std::unique_ptr<MultiTraceAnalysis> CreateServingAnalysis(const AnalyzeOptions& options,
                                                          const RunInputs& inputs) {
  return std::make_unique<ServingAnalysis>(options, inputs);
}

}  // namespace sightline
