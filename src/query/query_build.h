// Writes the query database (docs/query.md) of one or more analysed traces: the model's tables,
// the facts of the analysis (iterations, the NVTX projection, graph kernels' capture paths,
// kernel categories) and the report's facts, tables and findings. Rows go in through prepared
// statements in one transaction, one table at a time, so memory stays that of the trace and
// its analysis; the database is read with QueryDb (query_db.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "importers/serving_results/request_results.h"
#include "report/report.h"

struct sqlite3;

namespace sightline {

class QueryDbBuilder {
 public:
  // A new database in the file `path`, which must be empty or absent (a fresh temporary).
  static StatusOr<std::unique_ptr<QueryDbBuilder>> Create(const std::string& path);
  ~QueryDbBuilder();
  QueryDbBuilder(const QueryDbBuilder&) = delete;
  QueryDbBuilder& operator=(const QueryDbBuilder&) = delete;

  // The trace of `context` as input `input`: kernels, api_calls, memops, ranges with their
  // projection, range_kernels, iterations, threads, processes, devices, gpu_metrics,
  // memory_events (query_build_trace.cc).
  Status AddTrace(AnalysisContext& context, int input);
  // Serving results (an input of their own): the `requests` table.
  Status AddRequests(const RequestResults& results);
  // The report: inputs, report_facts, report_tables (and a table each), report_columns,
  // findings, finding_evidence (query_build_report.cc).
  Status AddReport(const Report& report);
  // Writes sightline_meta, commits and closes the file.
  Status Finish(const std::vector<std::string>& built_from);

  // An error of the builder's database, naming what it was doing.
  Status Error(int rc, std::string_view what) const;
  sqlite3* db() const { return db_; }

 private:
  explicit QueryDbBuilder(std::string path) : path_(std::move(path)) {}
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace sightline
