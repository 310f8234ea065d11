// Bulk insertion for the query builder's large tables (kernels, API calls, ranges, ...): the rows
// come from a function, one at a time, and go in through a single `INSERT INTO t SELECT ... FROM
// sightline_rows`, where sightline_rows is an eponymous virtual table registered on the builder's
// connection only. Against a prepared INSERT stepped once per row, that saves the per-row
// statement start (cursor opened, rowid sought, every column bound) and lets SQLite append to the
// table's B-tree: on 10^6 kernels the inserts take about half the time (docs/PERFORMANCE.md).
// The virtual table is never written to the database's schema.
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sightline {

struct QueryTableDef;

// The cells of one row, set in the order of the table's columns. Text is not copied: it must
// stay valid until the next row is asked for (the trace's strings, static names).
class QueryRow {
 public:
  static constexpr int kMaxColumns = 48;

  QueryRow& Int(int64_t v) { return Set(Cell{Kind::kInt, v, 0, {}}); }
  QueryRow& Real(double v) { return Set(Cell{Kind::kReal, 0, v, {}}); }
  QueryRow& Text(std::string_view v) { return Set(Cell{Kind::kText, 0, 0, v}); }
  QueryRow& Null() { return Set(Cell{Kind::kNull, 0, 0, {}}); }
  // Int(v), or NULL when v == none.
  QueryRow& IntOr(int64_t v, int64_t none) { return v == none ? Null() : Int(v); }

  void Clear() { n_ = 0; }
  int size() const { return n_; }
  // The cell `col` as the result of a virtual table's xColumn.
  void Result(int col, sqlite3_context* ctx) const;

 private:
  enum class Kind : uint8_t { kNull, kInt, kReal, kText };
  struct Cell {
    Kind kind;
    int64_t i;
    double d;
    std::string_view s;
  };
  QueryRow& Set(const Cell& c) {
    if (n_ < kMaxColumns) cells_[static_cast<size_t>(n_)] = c;
    ++n_;
    return *this;
  }
  std::array<Cell, kMaxColumns> cells_{};
  int n_ = 0;
};

// Fills `row` (cleared) with the next row and returns true, or returns false after the last.
using QueryRowSource = std::function<bool(QueryRow& row)>;

// A source of the rows 0..n-1, `fill(i, row)` filling row i.
QueryRowSource RowsOf(size_t n, std::function<void(size_t, QueryRow&)> fill);

// The sightline_rows virtual table of one builder connection.
class QueryRowFeed {
 public:
  // Registers the virtual table on `db` (which must outlive the feed's use).
  static StatusOr<std::unique_ptr<QueryRowFeed>> Register(sqlite3* db);
  ~QueryRowFeed();
  QueryRowFeed(const QueryRowFeed&) = delete;
  QueryRowFeed& operator=(const QueryRowFeed&) = delete;

  // Inserts every row `next` gives into `table` (a fixed table of the schema) in one statement.
  // A row with another number of cells than the table has columns stops it with an error.
  Status Insert(const QueryTableDef& table, const QueryRowSource& next);

  sqlite3* db() const { return db_; }

  struct State;  // query_rows.cc

 private:
  QueryRowFeed(sqlite3* db, State* state) : db_(db), state_(state) {}
  sqlite3* db_;
  State* state_;  // owned by the connection's module (freed with it)
};

}  // namespace sightline
