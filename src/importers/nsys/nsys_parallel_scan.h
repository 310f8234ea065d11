// Reads whole export tables on worker threads, each with its own read-only SQLite connection, and
// hands their rows to the importing thread in chunks. SQLite's row decoding is most of an import's
// CPU time; this lets it run beside the TraceBuilder's work, and the kernel table beside the API
// table. Rows of one table arrive in table order, so the builder finds them already sorted.
//
// A scan of integer columns of a plain table with no WHERE reads the table's pages itself
// (sqlite_pages.h), without SQLite's virtual machine. Other scans, and tables whose values SQLite
// would change on the way, go through SQLite, and do not step through result rows: they run `SELECT
// sightline_rows(cols...) FROM t`, an aggregate whose step function copies each row's values into
// the current chunk. That skips SQLite's per-row result handoff and per-column API checks (about a
// third of the decoding cost of a kernel row).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

struct sqlite3_context;
struct sqlite3_value;

namespace sightline {

class SqliteDb;

// Up to kRowsPerChunk rows of one scan: `columns` integers each, row-major. A text column holds
// an index into `texts`, or -1 for NULL. An integer column must hold an integer: a row where one
// holds text, a real, a blob or NULL (select optional columns through ifnull()) is not coerced
// (SQLite would read 'abc' as 0) but dropped, and counted in `wrong_type_rows`.
struct NsysChunk {
  static constexpr size_t kRowsPerChunk = 1024;
  static constexpr int kMaxColumns = 32;  // buffers are sized for this, so any scan can reuse them

  int tag = -1;  // which scan, as passed to Add()
  int columns = 0;
  size_t rows = 0;
  // Rows of this scan dropped since its previous chunk for a value of the wrong type in an
  // integer column (a chunk may carry only these, with rows == 0).
  int64_t wrong_type_rows = 0;
  std::vector<int64_t> values;
  std::vector<std::string> texts;

  const int64_t* row(size_t i) const { return values.data() + i * columns; }
  std::string_view text(int64_t index) const {
    return index < 0 ? std::string_view() : std::string_view(texts[index]);
  }
};

// What the page reader needs to read a scan's rows itself: the table, and per column the name
// (empty: a constant) and what NULL reads as (an SQL integer literal, or null: the row is dropped).
struct NsysPageRequest {
  std::string table;
  std::vector<std::string> chosen;
  std::vector<const char*> null_as;
};

class NsysParallelScan {
 public:
  using Consumer = std::function<Status(const NsysChunk&)>;

  // Scans of `db`'s file (the importer's connection, which must outlive the scan). Scans on the
  // calling thread use `db`; worker threads open connections of their own to the same file.
  explicit NsysParallelScan(SqliteDb& db) : db_(db) {}
  ~NsysParallelScan();  // stops the workers and waits for them
  NsysParallelScan(const NsysParallelScan&) = delete;
  NsysParallelScan& operator=(const NsysParallelScan&) = delete;

  // Queues a scan of `SELECT <columns> <from>` (`column_count` result columns, at most
  // NsysChunk::kMaxColumns; bit c of
  // text_columns marks column c as text) on worker `worker`. Scans on one worker run one after
  // the other, in the order added. With `pages` (integer columns only, no WHERE) the rows are read
  // from the table's pages where the page reader takes the table (SIGHTLINE_NSYS_PAGES=0: never).
  void Add(int worker, int tag, std::string columns, std::string from, int column_count,
           uint64_t text_columns = 0, std::optional<NsysPageRequest> pages = std::nullopt);

  // Where the scans run. kAuto: on worker threads for a file of at least kThreadsFromBytes, on
  // the calling thread below that (a small export is read before two threads and their
  // connections would have started). SIGHTLINE_NSYS_THREADS=0 or 1 sets kNever or kAlways for
  // scans left at kAuto (the fuzz targets reach both paths with it).
  enum class Threads { kAuto, kAlways, kNever };
  static constexpr int64_t kThreadsFromBytes = int64_t{4} << 20;
  void set_threads(Threads threads) { threads_mode_ = threads; }

  // Runs every scan, calling consume(chunk) on this thread for each chunk. Workers run on their
  // own threads when chosen (above), SQLite is thread-safe and threads can be started; otherwise
  // the scans run here, one after the other, over one connection. Stops at the first error of a
  // scan (naming the file) or of consume.
  Status Run(const Consumer& consume);

 private:
  struct Scan {
    int tag;
    std::string columns, from;
    int column_count;
    uint64_t text_columns;
    std::optional<NsysPageRequest> pages;
  };
  struct ScanState;
  struct ScanSlot;
  class PageRows;

  bool WantThreads() const;
  bool StartThreads();
  void StopThreads();
  void RunWorker(const std::vector<Scan>& scans);
  Status RunScan(SqliteDb& db, const Scan& scan, const Consumer* inline_consume);
  // The scan through the page reader; false, with nothing read, when the table is left to SQLite.
  StatusOr<bool> RunPageScan(SqliteDb& db, const Scan& scan, const Consumer* inline_consume);
  static void AggregateStep(sqlite3_context* ctx, int argc, sqlite3_value** argv);
  static void AggregateRow(sqlite3_context* ctx, ScanState& state, int argc, sqlite3_value** argv);
  static void AggregateFinal(sqlite3_context* ctx);
  bool Push(NsysChunk&& chunk);  // false when cancelled
  bool Pop(NsysChunk* chunk);    // false when every worker is done or cancelled
  NsysChunk TakeFreeChunk();
  void Fail(const Status& status);
  void Cancel();

  SqliteDb& db_;
  std::vector<std::vector<Scan>> workers_;
  std::vector<std::thread> threads_;
  Threads threads_mode_ = Threads::kAuto;

  std::mutex mu_;
  std::condition_variable ready_;  // a chunk was queued, or a worker finished
  std::condition_variable space_;  // the queue has room, or cancelled
  std::deque<NsysChunk> queue_;
  std::vector<NsysChunk> free_;
  int running_ = 0;
  bool cancelled_ = false;
  Status status_;
};

}  // namespace sightline
