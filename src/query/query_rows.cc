#include "query/query_rows.h"

#include <fmt/format.h>

#include <cstring>
#include <new>

#include "query/query_schema.h"

namespace sightline {

// What the virtual table reads from: the source of the statement running now.
struct QueryRowFeed::State {
  const QueryRowSource* next = nullptr;
  int columns = 0;
  std::string table;
};

namespace {

struct Cursor {
  sqlite3_vtab_cursor base;  // first: SQLite's view of the cursor
  QueryRowFeed::State* state;
  QueryRow row;
  int64_t index = 0;
  bool eof = true;
};

struct VTab {
  sqlite3_vtab base;  // first: SQLite's view of the table
  QueryRowFeed::State* state;
};

int Connect(sqlite3* db, void* aux, int /*argc*/, const char* const* /*argv*/, sqlite3_vtab** out,
            char** /*err*/) {
  std::string sql = "CREATE TABLE x(";
  for (int c = 0; c < QueryRow::kMaxColumns; ++c) sql += fmt::format("{}c{}", c ? ", " : "", c);
  sql += ")";
  const int rc = sqlite3_declare_vtab(db, sql.c_str());
  if (rc != SQLITE_OK) return rc;
  auto* vtab = static_cast<VTab*>(sqlite3_malloc(sizeof(VTab)));
  if (vtab == nullptr) return SQLITE_NOMEM;
  std::memset(vtab, 0, sizeof(VTab));
  vtab->state = static_cast<QueryRowFeed::State*>(aux);
  *out = &vtab->base;
  return SQLITE_OK;
}

int BestIndex(sqlite3_vtab* /*vtab*/, sqlite3_index_info* info) {
  info->estimatedCost = 1e6;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

int Open(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* cursor = new (std::nothrow) Cursor();
  if (cursor == nullptr) return SQLITE_NOMEM;
  cursor->state = reinterpret_cast<VTab*>(vtab)->state;
  *out = &cursor->base;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* cursor) {
  delete reinterpret_cast<Cursor*>(cursor);
  return SQLITE_OK;
}

// Asks the source for the next row; an error when there is no source or the row does not fit.
int Advance(Cursor* c) {
  const QueryRowFeed::State* s = c->state;
  if (s->next == nullptr) {
    c->eof = true;
    return SQLITE_OK;
  }
  c->row.Clear();
  c->eof = !(*s->next)(c->row);
  if (!c->eof && c->row.size() != s->columns) {
    sqlite3_vtab* vtab = c->base.pVtab;
    sqlite3_free(vtab->zErrMsg);
    vtab->zErrMsg = sqlite3_mprintf("row %lld of %s has %d values for %d columns",
                                    static_cast<long long>(c->index), s->table.c_str(),
                                    c->row.size(), s->columns);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

int Filter(sqlite3_vtab_cursor* cursor, int /*idx*/, const char* /*idx_str*/, int /*argc*/,
           sqlite3_value** /*argv*/) {
  auto* c = reinterpret_cast<Cursor*>(cursor);
  c->index = 0;
  return Advance(c);
}

int Next(sqlite3_vtab_cursor* cursor) {
  auto* c = reinterpret_cast<Cursor*>(cursor);
  ++c->index;
  return Advance(c);
}

int Eof(sqlite3_vtab_cursor* cursor) { return reinterpret_cast<Cursor*>(cursor)->eof ? 1 : 0; }

int Column(sqlite3_vtab_cursor* cursor, sqlite3_context* ctx, int col) {
  reinterpret_cast<Cursor*>(cursor)->row.Result(col, ctx);
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* cursor, sqlite_int64* out) {
  *out = reinterpret_cast<Cursor*>(cursor)->index;
  return SQLITE_OK;
}

void FreeState(void* state) { delete static_cast<QueryRowFeed::State*>(state); }

// Eponymous-only (no xCreate): usable as `FROM sightline_rows`, never CREATEd into the schema.
const sqlite3_module kModule = {
    /*iVersion=*/0,
    /*xCreate=*/nullptr,
    Connect,
    BestIndex,
    Disconnect,
    /*xDestroy=*/nullptr,
    Open,
    Close,
    Filter,
    Next,
    Eof,
    Column,
    Rowid,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr};

}  // namespace

void QueryRow::Result(int col, sqlite3_context* ctx) const {
  if (col < 0 || col >= n_ || col >= kMaxColumns) {
    sqlite3_result_null(ctx);
    return;
  }
  const Cell& c = cells_[static_cast<size_t>(col)];
  switch (c.kind) {
    case Kind::kInt:
      sqlite3_result_int64(ctx, c.i);
      break;
    case Kind::kReal:
      sqlite3_result_double(ctx, c.d);
      break;
    case Kind::kText:
      // Static: the text stays valid until the next row, and SQLite copies it into the record
      // (a text over SQLite's length limit stops the statement with SQLITE_TOOBIG).
      sqlite3_result_text64(ctx, c.s.data(), c.s.size(), SQLITE_STATIC, SQLITE_UTF8);
      break;
    case Kind::kNull:
      sqlite3_result_null(ctx);
      break;
  }
}

QueryRowSource RowsOf(size_t n, std::function<void(size_t, QueryRow&)> fill) {
  return [n, fill = std::move(fill), i = size_t{0}](QueryRow& row) mutable {
    if (i >= n) return false;
    fill(i++, row);
    return true;
  };
}

StatusOr<std::unique_ptr<QueryRowFeed>> QueryRowFeed::Register(sqlite3* db) {
  auto* state = new State();
  // On failure SQLite calls FreeState itself.
  const int rc = sqlite3_create_module_v2(db, "sightline_rows", &kModule, state, FreeState);
  if (rc != SQLITE_OK) {
    return OutputError(fmt::format("writing the query database: cannot register its row source: {}",
                                   sqlite3_errmsg(db)));
  }
  return std::unique_ptr<QueryRowFeed>(new QueryRowFeed(db, state));
}

QueryRowFeed::~QueryRowFeed() = default;

Status QueryRowFeed::Insert(const QueryTableDef& table, const QueryRowSource& next) {
  const int columns = static_cast<int>(table.columns.size());
  if (columns > QueryRow::kMaxColumns) {
    return InternalError(
        fmt::format("table {} has more than {} columns", table.name, QueryRow::kMaxColumns));
  }
  std::string sql = fmt::format("INSERT INTO {} SELECT ", QuoteSqlName(table.name));
  for (int c = 0; c < columns; ++c) sql += fmt::format("{}c{}", c ? ", " : "", c);
  sql += " FROM sightline_rows";
  state_->next = &next;
  state_->columns = columns;
  state_->table = table.name;
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  state_->next = nullptr;
  if (rc != SQLITE_OK) {
    Status s = OutputError(fmt::format("writing the query database's table {}: {}", table.name,
                                       err != nullptr ? err : sqlite3_errstr(rc)));
    sqlite3_free(err);
    return s;
  }
  return Status::Ok();
}

}  // namespace sightline
