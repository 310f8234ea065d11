// One prepared INSERT of the query builder, bound column by column in the order of the table's
// definition (query_schema.h): Int, Text, Real or Null once per column, then Row().
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "report/report.h"

namespace sightline {

class QueryInsert {
 public:
  QueryInsert(sqlite3* db, const std::string& sql) : db_(db), sql_(sql) {
    rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr);
  }
  ~QueryInsert() { sqlite3_finalize(st_); }
  QueryInsert(const QueryInsert&) = delete;
  QueryInsert& operator=(const QueryInsert&) = delete;

  QueryInsert& Int(int64_t v) {
    if (rc_ == SQLITE_OK) sqlite3_bind_int64(st_, ++col_, v);
    return *this;
  }
  QueryInsert& Text(std::string_view v) {
    if (rc_ == SQLITE_OK) {
      sqlite3_bind_text(st_, ++col_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    }
    return *this;
  }
  QueryInsert& Real(double v) {
    if (rc_ == SQLITE_OK) sqlite3_bind_double(st_, ++col_, v);
    return *this;
  }
  QueryInsert& Null() {
    if (rc_ == SQLITE_OK) sqlite3_bind_null(st_, ++col_);
    return *this;
  }
  // Int(v), or NULL when v == none.
  QueryInsert& IntOr(int64_t v, int64_t none) { return v == none ? Null() : Int(v); }
  QueryInsert& Val(const Value& v) {
    if (const auto* i = std::get_if<int64_t>(&v)) return Int(*i);
    if (const auto* d = std::get_if<double>(&v)) return Real(*d);
    if (const auto* s = std::get_if<std::string>(&v)) return Text(*s);
    return Null();
  }
  // Inserts the bound row; the first error is kept.
  void Row() {
    if (rc_ != SQLITE_OK) return;
    const int rc = sqlite3_step(st_);
    if (rc != SQLITE_DONE) rc_ = rc;
    sqlite3_reset(st_);
    col_ = 0;
  }
  // OK, or the first error, naming the statement.
  Status status() const {
    if (rc_ == SQLITE_OK) return Status::Ok();
    return OutputError(
        fmt::format("writing the query database: {} ({})", sqlite3_errmsg(db_), sql_));
  }

 private:
  sqlite3* db_;
  std::string sql_;
  sqlite3_stmt* st_ = nullptr;
  int rc_ = SQLITE_OK;
  int col_ = 0;
};

}  // namespace sightline
