// The analysis registries. Each analysis has a typed entry point that tests call directly
// (ComputeX(AnalysisContext&, const XOptions&) -> StatusOr<XResult>, in its own header) and a
// registry entry that turns its result into report sections; the pipeline runs the registries and
// has no other wiring. Single-trace analyses get one trace's AnalysisContext; multi-trace analyses
// (ranks, diff) get a TraceSet, one member at a time. Analyses never render.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyses/common/diff_options.h"
#include "analyses/common/run_inputs.h"
#include "analyses/findings/findings_options.h"
#include "analyses/floor/floor_options.h"
#include "analyses/idle_gaps/idle_gaps_options.h"
#include "analyses/ranks/ranks_options.h"
#include "analyses/serving/serving_options.h"
#include "base/status.h"
#include "base/time_units.h"
#include "facts/facts_options.h"
#include "model/trace.h"
#include "report/report.h"

namespace sightline {

class AnalysisContext;  // analyses/common/analysis_context.h
class ResultsCache;     // facts/results_cache.h

// What the CLI sets for a run, choices only: the facts' options (FactsOptions, which these
// extend), the one choice every section shares (top_n), and each analysis's own options, named
// after it and defined in its room's <name>_options.h. An analysis reads its own member (and
// top_n). The documents the run reads besides its traces are RunInputs (run_inputs.h).
struct AnalyzeOptions : FactsOptions {
  int top_n = 15;             // rows kept in long tables (the CLI picks it per format)
  IdleGapsOptions idle_gaps;  // --min-gap-us
  ServingOptions serving;     // --slo
  RanksOptions ranks;         // --ranks-per-host
  FloorOptions floor;         // --batch, --context, --peak-*
  FindingsOptions findings;   // --no-findings
  // `sightline diff`: --min-share, --fail-if-slower, and how many of the traces are the baseline.
  DiffOptions diff;
};

struct AnalysisEntry {
  const char* name;     // "kernel_summary"; also the section key
  const char* summary;  // one line for `sightline analyze --list`
  // Appends this analysis's section(s) for the context's trace (report input `input`).
  Status (*run)(AnalysisContext& context, int input, Report& report);
  // The entries whose whole results (AnalysisContext::results(), through their Cached...(context)
  // accessors) this one reads: AnalyzeTrace starts it only once they are computed. Reading an
  // undeclared one is an error while an entry runs (ResultsCache::Reader).
  std::vector<const char*> needs = {};
  // Its sections describe a timeline (GPU work, host calls, ranges): left out of the report of an
  // input that has none (a memory snapshot alone), where they could only say "0" and "none".
  bool timeline = false;
};

// All single-trace analyses, in report order.
const std::vector<AnalysisEntry>& Analyses();

// The registry's needs as indexes into `analyses`: the entries each entry needs, in declared order.
// An error when a need names no entry, or the needs form a cycle.
StatusOr<std::vector<std::vector<size_t>>> AnalysisNeeds(
    const std::vector<AnalysisEntry>& analyses);

// Runs `entry` into `report` as the pipeline does: reading another entry's whole result that it
// does not declare in `needs` fails (ResultsCache::Reader). With `asked`, leaves there the declared
// needs it read (ResultsCache::Reader::asked()).
Status RunAnalysis(const AnalysisEntry& entry, AnalysisContext& context, int input, Report& report,
                   std::vector<std::string>* asked = nullptr);

// --- several traces ---------------------------------------------------------------------------

// What a set of traces is: the ranks of one job (`analyze` with several inputs), or a baseline and
// a candidate (`diff`).
enum class TraceSetKind { kRanks, kDiff };

// One input of a set. Its trace is loaded only while the pipeline analyses it.
struct TraceSetMember {
  std::string label;  // "rank0.json.gz (rank 0)", "baseline"
  std::string path;
  int input = -1;  // index into Report::inputs (0 in a rank's own report: pipeline/rank_parts.h)
  int index = -1;  // its place in TraceSet::members (the files in the order given)
};

struct TraceSet {
  TraceSetKind kind = TraceSetKind::kRanks;
  std::vector<TraceSetMember> members;
};

// A multi-trace analysis sees each member once, while its trace is loaded (so a set of hundreds of
// ranks never sits in memory at once), keeping what it needs: a compact profile, or, for a pair,
// the context itself. Finish runs once, after the last member.
class MultiTraceAnalysis {
 public:
  virtual ~MultiTraceAnalysis() = default;
  virtual Status Add(const std::shared_ptr<AnalysisContext>& context,
                     const TraceSetMember& member) = 0;
  // Reducible analyses keep only a compact, serializable state per member, so that members can be
  // analysed in other threads or MPI processes (pipeline/rank_parts.h): Reduce turns a member into
  // a versioned blob wherever its trace is loaded, AddReduced takes the blobs on process 0 in
  // member order. They derive from ReducibleAnalysis (reducible_analysis.h): Add is both.
  virtual bool Reducible() const { return false; }
  virtual StatusOr<std::string> Reduce(const std::shared_ptr<AnalysisContext>& /*context*/,
                                       const TraceSetMember& /*member*/) {
    return UnimplementedError("this analysis keeps its members' traces; it cannot be reduced");
  }
  virtual Status AddReduced(const std::string& /*blob*/, const TraceSetMember& /*member*/) {
    return UnimplementedError("this analysis keeps its members' traces; it cannot be reduced");
  }
  // Appends sections (input -1) to `report`, and leaves in `results` the whole results the finding
  // rules read (analyses/findings/findings.h: the pipeline runs those rules after every Finish);
  // may add nothing when the set does not call for it (one input that is not a rank of several).
  virtual Status Finish(const TraceSet& set, Report& report, ResultsCache& results) = 0;
};

struct MultiTraceAnalysisEntry {
  const char* name;  // also the section key
  const char* summary;
  TraceSetKind kind;  // the sets it runs on
  // `inputs`: the run's documents besides its traces (serving results for "serving"); they
  // outlive the analysis.
  std::unique_ptr<MultiTraceAnalysis> (*create)(const AnalyzeOptions& options,
                                                const RunInputs& inputs);
};

// The registry of multi-trace analyses is pipeline/pipeline.h's MultiTraceAnalyses(): the diff
// sits above this stage.

}  // namespace sightline
