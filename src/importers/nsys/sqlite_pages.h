// Reads the integer columns of a plain rowid table straight from the database's b-tree pages,
// without SQLite's virtual machine. The nsys reader's large scans (kernels, API calls) are records
// of small integers, and decoding them through SQLite (sqlite3VdbeExec and the value accessors) was
// most of an import's CPU time. Only tables whose stored values SQLite would return unchanged are
// read this way (PlanSqlitePageScan says why not otherwise, and the scan goes through SQLite); a
// page that is not what the file format says stops the read with the error SQLite gives for a
// corrupt file. The format: https://www.sqlite.org/fileformat2.html, sections 1.3, 1.6 and 2.1.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace sightline {

class SqliteDb;

// The database's pages: the file mapped read-only, or the decompressed image the connection reads.
class SqlitePages {
 public:
  // Unimplemented (not an error of the file: the caller reads through SQLite) when the file cannot
  // be mapped or its header is not one this reader takes.
  static StatusOr<std::unique_ptr<SqlitePages>> Open(const SqliteDb& db);
  ~SqlitePages();
  SqlitePages(const SqlitePages&) = delete;
  SqlitePages& operator=(const SqlitePages&) = delete;

  // Page n (1-based), n in [1, page_count()].
  const uint8_t* page(uint32_t n) const { return bytes_ + size_t{n - 1} * page_size_; }
  uint32_t page_count() const { return page_count_; }
  uint32_t page_size() const { return page_size_; }
  uint32_t usable_size() const { return usable_size_; }  // the page less its reserved bytes
  const std::string& path() const { return path_; }

 private:
  SqlitePages() = default;

  std::string path_;
  const uint8_t* bytes_ = nullptr;
  void* map_ = nullptr;  // what munmap gets back; null for an image
  size_t map_bytes_ = 0;
  uint32_t page_count_ = 0, page_size_ = 0, usable_size_ = 0;
};

// One output column of a page scan.
struct SqlitePageColumn {
  int index = -1;  // the column's position in the table's records; -1: a constant (null_as)
  // What NULL (or a column the record lacks) reads as; without one, the row is dropped.
  std::optional<int64_t> null_as;
};

struct SqlitePagePlan {
  uint32_t root = 0;  // the table's root page
  std::vector<SqlitePageColumn> columns;
  int record_columns = 0;  // how many leading record columns the scan decodes (max index + 1)
};

// The plan for reading `chosen` columns of `table` (an empty name: the constant `null_as[i]`, an
// SQL integer literal or null). Unimplemented when the table must be read through SQLite: a
// WITHOUT ROWID table, a column that is the rowid, has a DEFAULT (records written before the
// column was added read as that default) or REAL affinity (SQLite returns its integers as reals),
// or a constant that is not an integer literal.
StatusOr<SqlitePagePlan> PlanSqlitePageScan(SqliteDb& db, const std::string& table,
                                            std::span<const std::string> chosen,
                                            std::span<const char* const> null_as);

// Where a page scan's rows go.
class SqlitePageSink {
 public:
  virtual ~SqlitePageSink() = default;
  // Where the next row's values go, one per plan column (written in place: no copy per row).
  virtual int64_t* NextRow() = 0;
  // The row at NextRow() is complete; false stops the scan.
  virtual bool Commit() = 0;
  // The row at NextRow() is dropped for a value that is not an integer (text, a real, a blob, NULL
  // without null_as).
  virtual void WrongType() = 0;
};

// Every row of the plan's table in rowid order (SQLite's order for a full scan). InvalidInput,
// naming the file, for a page or record that breaks the format, a page reached twice or a tree
// deeper than SQLite allows: the work is bounded by the file's size.
Status ScanSqlitePages(const SqlitePages& pages, const SqlitePagePlan& plan, SqlitePageSink& sink);

// False when SIGHTLINE_NSYS_PAGES=0 asks for every scan through SQLite (for comparing the two).
bool SqlitePageScansEnabled();

}  // namespace sightline
