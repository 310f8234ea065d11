#include "importers/nsys/nsys_parallel_scan.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <atomic>
#include <cassert>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "base/exceptions.h"
#include "base/threads.h"
#include "importers/nsys/sqlite_db.h"
#include "importers/nsys/sqlite_pages.h"

namespace sightline {
namespace {

// Chunks queued at most: bounds memory (about 140 KiB per kernel chunk) while keeping workers busy.
constexpr size_t kMaxQueuedChunks = 16;

constexpr char kAggregateName[] = "sightline_rows";

// Rows a new chunk has room for before it is given its full size.
constexpr size_t kFirstRows = 64;

}  // namespace

// Where a registered function finds the state of its scan (null once the scan ended).
struct NsysParallelScan::ScanSlot {
  ScanState* state;
};

// What the aggregate's step function needs: the scan, the chunk being filled, and where it goes.
struct NsysParallelScan::ScanState {
  NsysParallelScan* self;
  const Scan* spec;
  const Consumer* inline_consume;  // null: chunks go to the queue
  NsysChunk chunk;
  bool stopped = false;  // the step function stopped the statement (cancelled, or consume failed)
  Status consume_status;
  int64_t wrong_type_rows = 0;  // dropped since the last chunk was handed on

  // Makes room for the next row: a fresh chunk first for a few rows (most scans of a small export
  // end there), then for its full size, one size for every scan, so that a recycled buffer never
  // has to grow again (which, at this size, would mean a fresh mmap and its page faults).
  void BeginRow() {
    if (chunk.rows == 0) {
      chunk.tag = spec->tag;
      chunk.columns = spec->column_count;
      chunk.values.clear();
      chunk.texts.clear();
      chunk.values.reserve(kFirstRows * NsysChunk::kMaxColumns);
    } else if (chunk.rows == kFirstRows) {
      chunk.values.reserve(NsysChunk::kRowsPerChunk * NsysChunk::kMaxColumns);
    }
  }
  // Counts the row just appended; false when the chunk was full and the scan should stop.
  bool EndRow() {
    if (++chunk.rows < NsysChunk::kRowsPerChunk || Flush()) return true;
    stopped = true;
    return false;
  }

  // Hands the chunk on; false when the scan should stop.
  bool Flush() {
    if (chunk.rows == 0 && wrong_type_rows == 0) return true;
    chunk.tag = spec->tag;
    chunk.columns = spec->column_count;
    chunk.wrong_type_rows = wrong_type_rows;
    wrong_type_rows = 0;
    if (inline_consume != nullptr) {
      consume_status = (*inline_consume)(chunk);
      chunk.rows = 0;
      return consume_status.ok();
    }
    if (!self->Push(std::move(chunk))) return false;
    chunk = self->TakeFreeChunk();
    return true;
  }
};

NsysParallelScan::~NsysParallelScan() { StopThreads(); }

void NsysParallelScan::Add(int worker, int tag, std::string columns, std::string from,
                           int column_count, uint64_t text_columns,
                           std::optional<NsysPageRequest> pages) {
  assert(column_count > 0 && column_count <= NsysChunk::kMaxColumns);
  assert(!pages || (text_columns == 0 && static_cast<int>(pages->chosen.size()) == column_count &&
                    pages->null_as.size() == pages->chosen.size()));
  if (worker >= static_cast<int>(workers_.size())) workers_.resize(worker + 1);
  workers_[worker].push_back(
      Scan{tag, std::move(columns), std::move(from), column_count, text_columns, std::move(pages)});
}

Status NsysParallelScan::Run(const Consumer& consume) {
  if (!WantThreads() || !StartThreads()) {
    // One scan after the other on this thread, each chunk consumed as soon as it is full.
    for (const std::vector<Scan>& scans : workers_) {
      for (const Scan& scan : scans) RETURN_IF_ERROR(RunScan(db_, scan, &consume));
    }
    return Status::Ok();
  }
  NsysChunk chunk;
  while (Pop(&chunk)) {
    Status s = consume(chunk);
    if (!s.ok()) {
      StopThreads();
      return s;
    }
  }
  StopThreads();
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool NsysParallelScan::WantThreads() const {
  // Without thread-safe SQLite, two connections may not be used from two threads at once.
  if (sqlite3_threadsafe() == 0) return false;
  Threads mode = threads_mode_;
  if (mode == Threads::kAuto) {
    if (const char* env = std::getenv("SIGHTLINE_NSYS_THREADS"); env != nullptr && *env != '\0') {
      mode = env[0] == '0' ? Threads::kNever : Threads::kAlways;
    }
  }
  if (mode != Threads::kAuto) return mode == Threads::kAlways;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(db_.path(), ec);
  return !ec && bytes >= static_cast<std::uintmax_t>(kThreadsFromBytes);
}

bool NsysParallelScan::StartThreads() {
  for (const std::vector<Scan>& scans : workers_) {
    if (scans.empty()) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++running_;
    }
    if (!TryStartThread(threads_, [this, &scans] { RunWorker(scans); })) {
      // No thread to be had: stop the ones started (nothing was consumed yet) and run inline.
      {
        std::lock_guard<std::mutex> lock(mu_);
        --running_;
      }
      StopThreads();
      std::lock_guard<std::mutex> lock(mu_);
      queue_.clear();
      cancelled_ = false;
      status_ = Status::Ok();
      return false;
    }
  }
  return true;
}

void NsysParallelScan::StopThreads() {
  Cancel();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void NsysParallelScan::RunWorker(const std::vector<Scan>& scans) {
  try {
    StatusOr<SqliteDb> db = db_.OpenAgain();
    if (!db.ok()) Fail(db.status());
    for (const Scan& scan : scans) {
      if (!db.ok()) break;
      Status s = RunScan(*db, scan, nullptr);
      if (!s.ok()) {
        Fail(s);
        break;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_) break;
    }
  } catch (...) {
    Fail(StatusOfException(std::current_exception()));  // out of memory: an error, not an abort
  }
  std::lock_guard<std::mutex> lock(mu_);
  --running_;
  ready_.notify_all();
}

// The page reader's rows into the scan's chunks.
class NsysParallelScan::PageRows : public SqlitePageSink {
 public:
  explicit PageRows(ScanState& state) : state_(state) {}
  int64_t* NextRow() override {
    state_.BeginRow();
    std::vector<int64_t>& values = state_.chunk.values;
    const size_t at = values.size();
    values.resize(at + state_.spec->column_count);  // within the reserved size: no reallocation
    return values.data() + at;
  }
  bool Commit() override { return state_.EndRow(); }
  void WrongType() override {
    state_.chunk.values.resize(state_.chunk.rows * state_.spec->column_count);
    ++state_.wrong_type_rows;
  }

 private:
  ScanState& state_;
};

StatusOr<bool> NsysParallelScan::RunPageScan(SqliteDb& db, const Scan& scan,
                                             const Consumer* inline_consume) {
  const NsysPageRequest& request = *scan.pages;
  StatusOr<SqlitePagePlan> plan =
      PlanSqlitePageScan(db, request.table, request.chosen, request.null_as);
  if (!plan.ok()) {
    if (plan.status().code() == StatusCode::kUnimplemented) return false;
    return plan.status();
  }
  StatusOr<std::unique_ptr<SqlitePages>> pages = SqlitePages::Open(db);
  if (!pages.ok()) {
    if (pages.status().code() == StatusCode::kUnimplemented) return false;
    return pages.status();
  }
  ScanState state{this, &scan, inline_consume, TakeFreeChunk(), false, Status::Ok()};
  PageRows rows(state);
  Status status;
  try {
    status = ScanSqlitePages(**pages, *plan, rows);
  } catch (...) {
    status = StatusOfException(std::current_exception());  // out of memory: an error, not an abort
  }
  if (state.stopped) return state.consume_status;  // cancelled, or consume failed
  RETURN_IF_ERROR(status);
  state.Flush();
  RETURN_IF_ERROR(state.consume_status);
  return true;
}

Status NsysParallelScan::RunScan(SqliteDb& db, const Scan& scan, const Consumer* inline_consume) {
  if (scan.pages && SqlitePageScansEnabled()) {
    StatusOr<bool> read = RunPageScan(db, scan, inline_consume);
    if (!read.ok()) return read.status();
    if (*read) return Status::Ok();
  }
  ScanState state{this, &scan, inline_consume, TakeFreeChunk(), false, Status::Ok()};
  // Each scan registers a function of its own name: SQLite refuses to replace or remove one while
  // another statement of the connection is active (the connection may be the importer's). The
  // function reaches the state through a slot that SQLite frees with the connection; the slot is
  // emptied when the scan ends, so that a later call finds no state rather than a dead one.
  static std::atomic<uint64_t> next_name{0};
  const std::string name = fmt::format("{}_{}", kAggregateName, next_name++);
  auto* slot = new ScanSlot{&state};
  const int rc = sqlite3_create_function_v2(
      db.handle(), name.c_str(), -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, slot, nullptr,
      &AggregateStep, &AggregateFinal, [](void* p) { delete static_cast<ScanSlot*>(p); });
  // (On failure SQLite has already called the destructor.)
  if (rc != SQLITE_OK) return db.ErrorFor(rc, "registering the row reader");
  struct Empty {
    ScanSlot* slot;
    ~Empty() { slot->state = nullptr; }
  } empty{slot};
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db.Prepare(fmt::format("SELECT {}({}){}", name, scan.columns, scan.from)));
  while (stmt.Step()) {
  }
  // A stop raised by the step function surfaces as an SQL error; report its cause instead.
  if (state.stopped) return state.consume_status;
  RETURN_IF_ERROR(stmt.status());
  state.Flush();
  return state.consume_status;
}

void NsysParallelScan::AggregateStep(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  ScanState* current = static_cast<ScanSlot*>(sqlite3_user_data(ctx))->state;
  if (current == nullptr) {
    sqlite3_result_error(ctx, "sightline_rows called outside its scan", -1);
    return;
  }
  ScanState& state = *current;
  if (state.stopped) return;
  // No exception may cross SQLite's C frames: out of memory here (a chunk, the consumer's tables)
  // stops the scan with its Status.
  try {
    AggregateRow(ctx, state, argc, argv);
  } catch (...) {
    state.stopped = true;
    state.consume_status = StatusOfException(std::current_exception());
    sqlite3_result_error(ctx, "stopped", -1);
  }
}

void NsysParallelScan::AggregateRow(sqlite3_context* ctx, ScanState& state, int argc,
                                    sqlite3_value** argv) {
  NsysChunk& chunk = state.chunk;
  const Scan& spec = *state.spec;
  state.BeginRow();
  // An integer column of another type drops the row: what was appended of it is taken back.
  const size_t row_begin = chunk.values.size();
  const size_t texts_begin = chunk.texts.size();
  auto drop_row = [&] {
    chunk.values.resize(row_begin);
    chunk.texts.resize(texts_begin);
    ++state.wrong_type_rows;
  };
  if (spec.text_columns == 0) {
    for (int c = 0; c < argc; ++c) {
      if (sqlite3_value_type(argv[c]) != SQLITE_INTEGER) return drop_row();
      chunk.values.push_back(sqlite3_value_int64(argv[c]));
    }
  } else {
    for (int c = 0; c < argc; ++c) {
      if ((spec.text_columns >> c & 1) == 0) {
        if (sqlite3_value_type(argv[c]) != SQLITE_INTEGER) return drop_row();
        chunk.values.push_back(sqlite3_value_int64(argv[c]));
      } else if (sqlite3_value_type(argv[c]) == SQLITE_NULL) {
        chunk.values.push_back(-1);
      } else {
        const unsigned char* text = sqlite3_value_text(argv[c]);
        const int bytes = sqlite3_value_bytes(argv[c]);
        chunk.values.push_back(static_cast<int64_t>(chunk.texts.size()));
        chunk.texts.emplace_back(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
      }
    }
  }
  if (!state.EndRow()) sqlite3_result_error(ctx, "stopped", -1);  // ends the statement
}

void NsysParallelScan::AggregateFinal(sqlite3_context* ctx) { sqlite3_result_null(ctx); }

NsysChunk NsysParallelScan::TakeFreeChunk() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) return NsysChunk();
  NsysChunk chunk = std::move(free_.back());
  free_.pop_back();
  chunk.rows = 0;
  return chunk;
}

bool NsysParallelScan::Push(NsysChunk&& chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [&] { return cancelled_ || queue_.size() < kMaxQueuedChunks; });
  if (cancelled_) return false;
  queue_.push_back(std::move(chunk));
  ready_.notify_one();
  return true;
}

bool NsysParallelScan::Pop(NsysChunk* chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  if (chunk->values.capacity() > 0) free_.push_back(std::move(*chunk));  // recycle its buffers
  *chunk = NsysChunk();
  while (true) {
    if (!status_.ok() || cancelled_) return false;
    if (!queue_.empty()) {
      *chunk = std::move(queue_.front());
      queue_.pop_front();
      space_.notify_one();
      return true;
    }
    if (running_ == 0) return false;
    ready_.wait(lock);
  }
}

void NsysParallelScan::Fail(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = status;
  }
  Cancel();
}

void NsysParallelScan::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  space_.notify_all();
  ready_.notify_all();
}

}  // namespace sightline
