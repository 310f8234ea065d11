// One rank file reduced to what process 0 needs for the multi-rank report, as a versioned blob:
// the file's report input, the sections and findings of the single-trace analyses, and each
// reducible multi-trace analysis's state (the ranks analysis: its RankProfile with the compact
// table of communication kernels). Every multi-rank `analyze` goes through these blobs, on one
// thread, several, or several MPI processes, so all of them give the same report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "report/report.h"

namespace sightline {

// Imports `path`, the set's member `index`, with the run's other documents (`inputs`), runs the
// single-trace analyses into a report of its own and reduces it with each of `multi` (all
// Reducible()). Thread-safe as long as the analyses' Reduce are. `sections` false: only the input
// record, no single-trace analyses (RunOptions::rank_sections). The analyses run on up to
// `analysis_threads` threads (AnalyzeTrace).
StatusOr<std::string> ReduceRankFile(const std::string& path, size_t index,
                                     const AnalyzeOptions& options, const RunInputs& inputs,
                                     const std::vector<MultiTraceAnalysis*>& multi,
                                     bool sections = true, int analysis_threads = 1);

// Appends the blob's input, sections and findings to `report` (input indexes shifted to the
// report's) and hands each analysis its state; fills `member` (label, path, input).
Status MergeRankPart(const std::string& blob, TraceSetMember& member, Report& report,
                     const std::vector<MultiTraceAnalysis*>& multi);

}  // namespace sightline
