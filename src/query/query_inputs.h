// Where `sightline query`'s database comes from: a database saved before (`--save`), opened as it
// is, or traces, each imported and analysed as `sightline analyze` does (pipeline.h's
// AnalyzeTrace on each trace, one at a time) and written into a new database: a temporary that
// is gone when the process ends, or the file `--save` names, which appears whole or not at all.
// A temporary built for one question holds the rows of only the trace tables that question reads
// (every table is made; the report's tables are always filled).
// Several traces are the ranks of one job (or the processes of one run), as in `analyze`: the
// report's multi-trace sections (input NULL) and their findings are in the database too.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "query/query_db.h"

namespace sightline {

// One saved database alone, or one or more traces. `save` (may be empty): where to keep the
// database built from traces; it must not be one of the inputs (the CLI checks). `question` (may
// be empty): the one statement a temporary database is built for, whose trace tables alone are
// filled (ignored with `save`: a saved database holds everything).
StatusOr<QueryDb> OpenQueryInputs(const std::vector<std::string>& paths,
                                  const AnalyzeOptions& options, const std::string& save,
                                  std::string_view question = {});

// The tables of the fixed schema (query_schema.h) that the statement `sql` reads, found by
// preparing it on an empty in-memory database of the schema, whose authorizer is told each table
// a statement reads (a table none of whose columns is used included). nullopt when it does not
// prepare there (a report table, an error: the full database then answers or says what is wrong).
std::optional<std::set<std::string>> TablesReadBy(std::string_view sql);

}  // namespace sightline
