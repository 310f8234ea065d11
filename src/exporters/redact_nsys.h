// The Nsight Systems SQLite side of `sightline redact` (exporters/redact.h): what an export says of
// its machine (learned into a Redactor), the redacted copy, and the scan of a database for what
// was learned.
//
// The copy is a new database, never an edited copy of the old one: each table of the export
// (type 'table'; SQLite's own sqlite_* tables and virtual tables excepted) is created again from
// its columns (names, type affinity, an INTEGER PRIMARY KEY) and its rows are inserted with every
// TEXT and BLOB value through Redactor::Redact. Views, triggers and indexes are not carried over,
// and none of the old file's pages (free ones included) reach the copy. The input is only read,
// through the importer's defensive reader (importers/nsys/sqlite_db.h), so no trigger of the file
// runs. Rows that are the environment itself are dropped or emptied: META_DATA_CAPTURE's
// *ENVIRONMENT_VARIABLE* rows, TARGET_INFO_SYSTEM_ENV's DeviceEnvironment; the program's own
// captured output (the strings ProcessStreams.contentId names) is emptied.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "exporters/redact.h"
#include "exporters/redactor.h"

struct sqlite3;

namespace sightline {

class SqliteDb;

// Learns the user, host, environment and command-line secrets of the export `db`.
Status LearnNsysIdentity(const SqliteDb& db, Redactor& redactor);

// Writes the redacted copy of the export `input` to `output` (atomically), after checking the copy
// holds nothing `redactor` learned (InternalError, nothing written, if it does).
Status RedactNsys(const std::string& input, const std::string& output, RedactSummary& sum);

// Looks for what `redactor` learned in every string of database `db` (table and column names, the
// schema, every TEXT and BLOB value), and for what a copy by redact never has: views, triggers,
// virtual tables, free pages. `name` names the file in findings.
Status ScanNsysDatabase(sqlite3* db, const std::string& name, const Redactor& redactor,
                        RedactCheckResult& result);

}  // namespace sightline
