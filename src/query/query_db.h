// The query database of `sightline query` (docs/query.md), opened for questions: read-only, and
// every statement bounded. A database is ours when it has the `sightline_meta` table of this
// schema version and only the plain tables of the schema; anything else is refused before a
// question runs, so a hostile file can neither hang the reader nor make it write.
//
// Bounds on a question (QueryLimits): a time limit (a progress handler that interrupts the
// statement), a row limit (rows past it are not read), one statement that only reads (an
// authorizer refuses writes, ATTACH, DDL, transactions, PRAGMAs other than the table_info family
// and load_extension; extension loading is off; no file other than the database is opened).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "report/report.h"

struct sqlite3;

namespace sightline {

struct QueryLimits {
  double seconds = 10.0;    // wall-clock time one statement may take
  int64_t max_rows = 1000;  // rows returned; the result says when more were there
};

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
  bool truncated = false;  // the statement had more rows than QueryLimits::max_rows
};

// Named parameters of a statement (:name), given as text: integers and reals bind as numbers.
using QueryParams = std::vector<std::pair<std::string, std::string>>;

struct QueryGuard;  // query_db.cc

// A table of the database and its columns, as the database has them.
struct QueryCatalogueTable {
  std::string name;
  std::vector<std::string> columns;
};

class QueryDb {
 public:
  // Opens a database written by `sightline query --save` (or a temporary one the builder wrote):
  // read-only and immutable, checked to be ours. InvalidInput naming the file and what to do when
  // it is not (another SQLite database, another schema version, a view or a virtual table in it).
  static StatusOr<QueryDb> Open(const std::string& path);
  // Whether `path` is an SQLite file whose schema has a `sightline_meta` table (a saved query
  // database, to be opened with Open rather than imported as a trace). Reads the schema only,
  // under a time bound; false for anything else.
  static bool LooksLikeQueryDb(const std::string& path);

  QueryDb();  // no database: Run refuses
  QueryDb(QueryDb&&) noexcept;
  QueryDb& operator=(QueryDb&&) noexcept;
  ~QueryDb();

  // Runs one statement within `limits`. Errors (InvalidArgument): SQLite's message, with the
  // tables (and, for a missing column, the columns of the tables the statement names) that exist.
  StatusOr<QueryResult> Run(std::string_view sql, const QueryLimits& limits,
                            const QueryParams& params = {}) const;

  const std::vector<QueryCatalogueTable>& catalogue() const { return catalogue_; }
  const std::string& path() const { return path_; }

 private:
  Status LoadCatalogue();
  Status CheckOurs();

  std::string path_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<QueryGuard> guard_;
  std::vector<QueryCatalogueTable> catalogue_;
};

}  // namespace sightline
