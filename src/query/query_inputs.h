// Where `sightline query`'s database comes from: a database saved before (`--save`), opened as it
// is, or traces, each imported and analysed as `sightline analyze` does (pipeline.h's
// AnalyzeTrace on each trace, one at a time) and written into a new database: a temporary that
// is gone when the process ends, or the file `--save` names, which appears whole or not at all.
#pragma once

#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/status.h"
#include "query/query_db.h"

namespace sightline {

// One saved database alone, or one or more traces. `save` (may be empty): where to keep the
// database built from traces; it must not be one of the inputs (the CLI checks).
StatusOr<QueryDb> OpenQueryInputs(const std::vector<std::string>& paths,
                                  const AnalyzeOptions& options, const std::string& save);

}  // namespace sightline
