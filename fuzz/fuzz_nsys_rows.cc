// The Nsight Systems importer on hostile rows rather than hostile bytes (a structure-aware
// generator: always a valid SQLite export): each input is read as a few rows of SQL values
// (integers, NULLs, text, reals, blobs, ids that point nowhere) put into a small generated
// export's kernel (with CUDA graph nodes), graph-node, API, memory-copy, NVTX and OS-call (with
// call chain) tables, whose columns are declared without NOT NULL so that any value fits. Most
// values decode to what a real export would hold there, so that the hostile ones sit among
// plausible rows. What the importer makes of them then goes through the whole program
// (whole_program.h).
// CI executions: 2000
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "importers/nsys/nsys_importer.h"
#include "whole_program.h"

namespace {

// PID 4242, TID 4243 on machine 1, packed as nsys packs them.
constexpr int64_t kGlobalPid = (int64_t{1} << 48) | (int64_t{4242} << 24);
constexpr int64_t kGlobalTid = kGlobalPid | 4243;

// A column and the value a real export would hold in row r: base + step * r, or text.
struct Column {
  const char* name;
  int64_t base = 0;
  int64_t step = 0;
  const char* text = nullptr;
};

struct Table {
  const char* name;
  std::vector<Column> columns;
};

const std::vector<Table>& Tables() {
  static const auto* tables = new std::vector<Table>{
      {"CUPTI_ACTIVITY_KIND_KERNEL",
       {{"start", 1000, 1000},
        {"end", 1500, 1000},
        {"deviceId", 0},
        {"streamId", 7},
        {"correlationId", 1, 1},
        {"globalPid", kGlobalPid},
        {"demangledName", 1},
        {"shortName", 2},
        {"gridX", 132},
        {"gridY", 1},
        {"gridZ", 1},
        {"blockX", 256},
        {"blockY", 1},
        {"blockZ", 1},
        {"registersPerThread", 64},
        {"staticSharedMemory", 0},
        {"dynamicSharedMemory", 49152},
        {"graphNodeId", 1, 1}}},  // replayed from a CUDA graph (--cuda-graph-trace=node)
      // The graph's nodes: an instantiated node names the captured one (originalGraphNodeId).
      {"CUDA_GRAPH_NODE_EVENTS",
       {{"start", 100, 10},
        {"graphNodeId", 1, 1},
        {"originalGraphNodeId", 0, 0},
        {"globalTid", kGlobalTid}}},
      {"CUPTI_ACTIVITY_KIND_RUNTIME",
       {{"start", 900, 1000},
        {"end", 950, 1000},
        {"eventClass", 0},
        {"globalTid", kGlobalTid},
        {"correlationId", 1, 1},
        {"nameId", 3}}},
      {"CUPTI_ACTIVITY_KIND_MEMCPY",
       {{"start", 1600, 1000},
        {"end", 1700, 1000},
        {"deviceId", 0},
        {"streamId", 7},
        {"correlationId", 1000, 1},
        {"globalPid", kGlobalPid},
        {"bytes", 4096},
        {"copyKind", 1},
        {"srcKind", 0},
        {"dstKind", 2}}},
      {"NVTX_EVENTS",
       {{"start", 800, 1000},
        {"end", 1800, 1000},
        {"eventType", 59},
        {"text", 0, 0, "step"},
        {"globalTid", kGlobalTid},
        {"textId", 4},
        {"domainId", 0}}},
      // OS runtime calls and their call chains (callchainId -> OSRT_CALLCHAINS.id).
      {"OSRT_API",
       {{"start", 700, 1000},
        {"end", 1700, 1000},
        {"eventClass", 27},
        {"globalTid", kGlobalTid},
        {"nameId", 5},
        {"returnValue", 0},
        {"callchainId", 1, 1}}},
      {"OSRT_CALLCHAINS", {{"id", 1, 1}, {"symbol", 5}, {"module", 6}, {"stackDepth", 0}}},
  };
  return *tables;
}

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t Byte() { return p_ < end_ ? *p_++ : 0; }
  int64_t Int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | Byte();
    return static_cast<int64_t>(v);
  }
  std::string Bytes(size_t n) {
    std::string s;
    while (n-- > 0 && p_ < end_) s.push_back(static_cast<char>(*p_++));
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

bool Exec(sqlite3* db, const std::string& sql) {
  return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
}

// Binds one value for `column` in row `row`, chosen by the next input byte.
void BindValue(sqlite3_stmt* stmt, int index, const Column& column, int64_t row, Input& in) {
  const uint8_t tag = in.Byte();
  const int64_t typical = column.base + column.step * row;
  switch (tag % 10) {
    case 0:
      sqlite3_bind_null(stmt, index);
      break;
    case 1:  // small integers: ids that point nowhere, negative sizes, unknown enums
      sqlite3_bind_int64(stmt, index, static_cast<int8_t>(in.Byte()));
      break;
    case 2:  // near the typical value
      sqlite3_bind_int64(stmt, index, typical + static_cast<int8_t>(in.Byte()));
      break;
    case 3:
      sqlite3_bind_int64(stmt, index, in.Int64());
      break;
    case 4: {
      const std::string text = in.Bytes(in.Byte() % 16);
      sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      break;
    }
    case 5: {
      const int64_t bits = in.Int64();
      double value;
      std::memcpy(&value, &bits, sizeof value);  // any double, NaN and infinities included
      sqlite3_bind_double(stmt, index, value);
      break;
    }
    case 6: {
      const std::string blob = in.Bytes(in.Byte() % 8);
      sqlite3_bind_blob(stmt, index, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
      break;
    }
    default:  // what a real export holds
      if (column.text != nullptr) {
        sqlite3_bind_text(stmt, index, column.text, -1, SQLITE_STATIC);
      } else {
        sqlite3_bind_int64(stmt, index, typical);
      }
  }
}

// The export's file and a connection that stays open on it: the schema is created once, and each
// input replaces the rows (creating the tables anew would cost more than the import itself).
struct Writer {
  std::string path;
  sqlite3* db = nullptr;
  std::vector<sqlite3_stmt*> inserts;
  std::string clear;  // deletes every table's rows
};

// Creates the export's tables once; aborts when SQLite cannot (the fuzzer would test nothing).
Writer& OpenWriter() {
  static Writer* writer = [] {
    auto* w = new Writer;
    w->path = sightline::fuzz::WriteInputFile({}, ".rows.sqlite");
    unlink(w->path.c_str());
    bool ok = sqlite3_open_v2(w->path.c_str(), &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                              nullptr) == SQLITE_OK &&
              Exec(w->db, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF") &&
              Exec(w->db,
                   "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
                   "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.16.1');"
                   "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                   "INSERT INTO StringIds VALUES (1, 'void gemm<float>(float const*, float*)'), "
                   "(2, 'gemm'), (3, 'cudaLaunchKernel_v7000'), (4, 'decode_step'), (5, 'poll'), "
                   "(6, '/usr/lib/x86_64-linux-gnu/libc.so.6')");
    for (const Table& table : Tables()) {
      std::string create = std::string("CREATE TABLE ") + table.name + " (";
      std::string insert = std::string("INSERT INTO ") + table.name + " VALUES (";
      for (size_t c = 0; c < table.columns.size(); ++c) {
        const Column& column = table.columns[c];
        create += (c ? ", " : "") + std::string(column.name) +
                  (column.text != nullptr ? " TEXT" : " INTEGER");
        insert += c ? ", ?" : "?";
      }
      ok = ok && Exec(w->db, create + ")");
      sqlite3_stmt* stmt = nullptr;
      ok = ok && sqlite3_prepare_v2(w->db, (insert + ")").c_str(), -1, &stmt, nullptr) == SQLITE_OK;
      w->inserts.push_back(stmt);
      w->clear += std::string("DELETE FROM ") + table.name + ";";
    }
    if (!ok) {
      std::fprintf(stderr, "fuzz_nsys_rows: cannot create %s: %s\n", w->path.c_str(),
                   sqlite3_errmsg(w->db));
      std::abort();
    }
    return w;
  }();
  return *writer;
}

// Writes this input's rows into the export; false when SQLite refuses a value (then the input is
// skipped).
bool WriteRows(Writer& w, const uint8_t* data, size_t size) {
  bool ok = Exec(w.db, "BEGIN") && Exec(w.db, w.clear);
  Input in(data, size);
  std::vector<int64_t> rows(Tables().size(), 0);
  for (int n = 0; ok && n < 64 && !in.empty(); ++n) {
    const size_t t = in.Byte() % Tables().size();
    const Table& table = Tables()[t];
    sqlite3_stmt* stmt = w.inserts[t];
    for (size_t c = 0; c < table.columns.size(); ++c) {
      BindValue(stmt, static_cast<int>(c) + 1, table.columns[c], rows[t], in);
    }
    ok = sqlite3_step(stmt) == SQLITE_DONE;
    ok = sqlite3_reset(stmt) == SQLITE_OK && ok;
    ++rows[t];
  }
  if (ok) return Exec(w.db, "COMMIT");
  Exec(w.db, "ROLLBACK");
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Writer& writer = OpenWriter();
  if (!WriteRows(writer, data, size)) return 0;
  sightline::fuzz::ChooseNsysThreads(data, size);
  sightline::StatusOr<sightline::Trace> trace = sightline::ImportNsysSqlite(writer.path);
  if (!trace.ok()) return 0;
  sightline::InputDocumentValue document = std::move(*trace);
  sightline::fuzz::RunWholeProgram(document);
  return 0;
}
