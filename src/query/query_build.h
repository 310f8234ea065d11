// Writes the query database (docs/query.md) of one or more analysed traces: the model's tables,
// the facts of the analysis (iterations, the NVTX projection, graph kernels' capture paths,
// kernel categories) and the report's facts, tables and findings. Rows go in within one
// transaction, one table at a time (the large tables in one statement each through QueryRowFeed,
// query_rows.h; the indexes after them), so memory stays that of the trace and its analysis; the
// database is read with QueryDb (query_db.h).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/common/analysis_context.h"
#include "base/status.h"
#include "importers/serving_results/request_results.h"
#include "query/query_rows.h"
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

  // Only the rows of these tables of a trace (kernels, api_calls, ...; the other tables are made,
  // empty, and sightline_meta's `left_out` names them): a database built for one question that
  // reads them (TablesReadBy, query_inputs.h). By default every table is filled.
  void FillOnly(std::set<std::string> tables) { fill_only_ = std::move(tables); }
  bool Fills(std::string_view table) const {
    return !fill_only_ || fill_only_->contains(std::string(table));
  }

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
  QueryRowFeed* feed() const { return feed_.get(); }

 private:
  explicit QueryDbBuilder(std::string path) : path_(std::move(path)) {}
  std::string path_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<QueryRowFeed> feed_;
  std::optional<std::set<std::string>> fill_only_;
};

}  // namespace sightline
