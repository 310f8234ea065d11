// The instrument library's state and C API (include/sightline/instrument.h): configuration read
// from the environment at load, the iteration window, and the per-iteration log.
#include "sightline/instrument.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "config.h"
#include "cuda_driver.h"
#include "log_writer.h"
#include "nvtx_ranges.h"
#include "shared/recorder_env.h"
#include "testing.h"

extern "C" {
SIGHTLINE_INSTRUMENT_API int sightline_nvtx_level_cache = -1;
}

namespace sightline::instrument {
namespace {

constexpr int kSchemaVersion = 1;
constexpr int kDefaultNvtxLevel = 1;

const char* const kFieldNames[SIGHTLINE_FIELD_COUNT] = {
    "active_requests",     "context_requests", "generation_requests", "context_tokens",
    "generated_tokens",    "kv_blocks_used",   "kv_blocks_free",      "kv_blocks_max",
    "kv_tokens_per_block", "gpu_memory_bytes", "cpu_memory_bytes",    "pinned_memory_bytes"};

int64_t NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct UserField {
  enum Kind { kInt, kDouble, kString } kind = kInt;
  std::string key;
  int64_t i = 0;
  double d = 0;
  std::string s;
};

class State {
 public:
  static State& Get() {
    static State* state = [] {
      State* s = new State();  // never destroyed: the atexit flush may run after static destructors
      s->Configure();
      std::atexit([] { State::Get().FlushAll(); });
      return s;
    }();
    return *state;
  }

  void Configure();
  void Begin(int64_t iteration);
  void End();
  bool open() const { return open_; }
  int64_t open_iteration() const { return iteration_; }
  void SetField(int field, int64_t value) {
    if (field < 0 || field >= SIGHTLINE_FIELD_COUNT) return;
    fields_[field] = value;
    set_mask_ |= 1u << field;
  }
  UserField& User(const char* key);
  void FlushAll() {
    {
      std::lock_guard<std::mutex> lock(writer_mutex_);
      writer_.Flush();
    }
    std::lock_guard<std::mutex> lock(request_mutex_);
    request_writer_.Flush();
  }
  bool profiler_active() const { return profiler_active_.load(std::memory_order_relaxed); }
  int rank() const { return rank_; }
  bool request_log_enabled() const { return request_log_enabled_.load(std::memory_order_acquire); }
  void RequestEvent(const char* request_id, int event, int64_t tokens);

 private:
  void Report(const std::string& message) {
    std::fprintf(stderr, "sightline: %s\n", message.c_str());
  }
  void WriteLine(int64_t end_monotonic_ns);
  bool ReadRss(int64_t* bytes);

  int rank_ = -1;
  int64_t pid_ = 0;
  // Window.
  std::vector<WindowRange> window_;
  bool window_enabled_ = false;
  size_t next_range_ = 0;    // the first range not finished yet
  size_t active_range_ = 0;  // valid while profiler_active_
  std::atomic<bool> profiler_active_{false};
  bool in_window_this_iteration_ = false;
  // Log.
  bool log_enabled_ = false;
  std::mutex writer_mutex_;  // FlushAll may come from another thread (atexit)
  LogWriter writer_;
  JsonLine line_;
  int statm_fd_ = -1;
  // The open iteration.
  bool open_ = false;
  bool pushed_range_ = false;
  int64_t iteration_ = 0;
  int64_t begin_realtime_ns_ = 0, begin_monotonic_ns_ = 0;
  int64_t fields_[SIGHTLINE_FIELD_COUNT] = {};
  uint32_t set_mask_ = 0;
  std::vector<UserField> user_;
  size_t user_count_ = 0;  // entries of user_ in use (kept to reuse their strings)
  // Request log: written from any thread; the open iteration's counter is read without the
  // iteration's own state (which belongs to the loop's thread).
  std::atomic<bool> request_log_enabled_{false};
  std::atomic<int64_t> current_iteration_{-1};
  std::mutex request_mutex_;
  LogWriter request_writer_;
  JsonLine request_line_;
};

void State::RequestEvent(const char* request_id, int event, int64_t tokens) {
  static const char* const kEvents[SIGHTLINE_REQUEST_EVENT_COUNT] = {
      "arrived", "scheduled", "tokens", "preempted", "finished"};
  if (event < 0 || event >= SIGHTLINE_REQUEST_EVENT_COUNT) return;
  const int64_t now = NowNs(CLOCK_MONOTONIC);
  const int64_t iteration = current_iteration_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(request_mutex_);
  if (!request_writer_.is_open()) return;
  JsonLine& l = request_line_;
  l.Begin();
  l.Int("schema_version", kSchemaVersion);
  l.String("request", request_id != nullptr ? request_id : "");
  l.String("event", kEvents[event]);
  l.Int("monotonic_ns", now);
  if (iteration >= 0) l.Int("iteration", iteration);
  if (event == SIGHTLINE_REQUEST_TOKENS || (event == SIGHTLINE_REQUEST_ARRIVED && tokens > 0)) {
    l.Int("tokens", tokens);
  }
  if (event == SIGHTLINE_REQUEST_FINISHED && tokens != 0) l.Bool("error", true);
  if (rank_ >= 0) l.Int("rank", rank_);
  l.Int("pid", pid_);
  l.End();
  request_writer_.Write(l.text());
}

void State::Configure() {
  {
    std::lock_guard<std::mutex> lock(writer_mutex_);
    writer_.Close();
  }
  {
    std::lock_guard<std::mutex> lock(request_mutex_);
    request_writer_.Close();
    request_log_enabled_ = false;
  }
  current_iteration_ = -1;
  if (statm_fd_ >= 0) ::close(statm_fd_);
  statm_fd_ = -1;
  window_.clear();
  window_enabled_ = false;
  next_range_ = active_range_ = 0;
  profiler_active_ = false;
  log_enabled_ = false;
  open_ = pushed_range_ = false;
  set_mask_ = 0;
  user_count_ = 0;
  pid_ = static_cast<int64_t>(::getpid());
  rank_ = recenv::DetectRank();

  int level = kDefaultNvtxLevel;
  if (const char* text = std::getenv("SIGHTLINE_NVTX_LEVEL"); text != nullptr) {
    if (!ParseNvtxLevel(text, &level)) {
      Report(std::string("SIGHTLINE_NVTX_LEVEL=\"") + text +
             "\" is not 0, 1 or 2 (off, basic, verbose); using 1");
      level = kDefaultNvtxLevel;
    }
  }
  sightline_nvtx_level_cache = level;

  if (const char* spec = std::getenv("SIGHTLINE_PROFILE_START_STOP"); spec != nullptr) {
    std::string error;
    if (!ParseWindowSpec(spec, &window_, &error)) {
      Report(std::string("SIGHTLINE_PROFILE_START_STOP=\"") + spec + "\": " + error +
             "; expected ranges like \"10-20,100-110\"; the profiling window is off");
    } else {
      window_enabled_ = true;
    }
  }
  if (const char* ranks = std::getenv("SIGHTLINE_PROFILE_RANKS");
      ranks != nullptr && window_enabled_) {
    std::vector<int> list;
    bool all = false;
    std::string error;
    if (!ParseRankList(ranks, &list, &all, &error)) {
      Report(std::string("SIGHTLINE_PROFILE_RANKS=\"") + ranks + "\": " + error +
             "; expected ranks like \"0,3\"; the profiling window is off");
      window_enabled_ = false;
    } else if (!all) {
      // A process that no launcher gave a rank counts as rank 0.
      const int me = rank_ < 0 ? 0 : rank_;
      bool selected = false;
      for (int r : list) selected |= r == me;
      window_enabled_ = selected;
    }
  }

  if (const char* pattern = std::getenv("SIGHTLINE_ITERATION_LOG");
      pattern != nullptr && pattern[0] != '\0') {
    const std::string path = ExpandLogPath(pattern, pid_, rank_);
    std::lock_guard<std::mutex> lock(writer_mutex_);
    log_enabled_ = writer_.Open(path);
    if (log_enabled_) statm_fd_ = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  }
  if (const char* pattern = std::getenv("SIGHTLINE_REQUEST_LOG");
      pattern != nullptr && pattern[0] != '\0') {
    const std::string path = ExpandLogPath(pattern, pid_, rank_);
    std::lock_guard<std::mutex> lock(request_mutex_);
    request_log_enabled_ = request_writer_.Open(path);
  }
}

void State::Begin(int64_t iteration) {
  if (open_) End();
  open_ = true;
  iteration_ = iteration;
  current_iteration_.store(iteration, std::memory_order_relaxed);
  set_mask_ = 0;
  user_count_ = 0;
  if (window_enabled_ && !profiler_active()) {
    while (next_range_ < window_.size() && window_[next_range_].stop < iteration) ++next_range_;
    if (next_range_ < window_.size() && window_[next_range_].start <= iteration) {
      if (CudaDriver::Get().ProfilerStart()) {
        profiler_active_ = true;
        active_range_ = next_range_;
      }
    }
  }
  in_window_this_iteration_ = profiler_active();
  pushed_range_ = sightline_nvtx_enabled(SIGHTLINE_NVTX_BASIC);
  if (pushed_range_) {
    char name[40];
    std::snprintf(name, sizeof name, "iteration %lld", static_cast<long long>(iteration));
    NvtxPush(name);
  }
  if (log_enabled_) {
    begin_realtime_ns_ = NowNs(CLOCK_REALTIME);
    begin_monotonic_ns_ = NowNs(CLOCK_MONOTONIC);
  }
}

void State::End() {
  if (!open_) return;
  const int64_t end_monotonic_ns = log_enabled_ ? NowNs(CLOCK_MONOTONIC) : 0;
  if (pushed_range_) NvtxPop();
  pushed_range_ = false;
  // Stop before writing the line, so the log's own work stays outside the profiled window.
  if (profiler_active() && iteration_ >= window_[active_range_].stop) {
    CudaDriver::Get().ProfilerStop();
    profiler_active_ = false;
    next_range_ = active_range_ + 1;
  }
  if (log_enabled_) WriteLine(end_monotonic_ns);
  open_ = false;
  current_iteration_.store(-1, std::memory_order_relaxed);
}

bool State::ReadRss(int64_t* bytes) {
  if (statm_fd_ < 0) return false;
  char buf[128];
  const ssize_t n = ::pread(statm_fd_, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  long long size_pages = 0, resident_pages = 0;
  if (std::sscanf(buf, "%lld %lld", &size_pages, &resident_pages) != 2) return false;
  *bytes = resident_pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  return true;
}

void State::WriteLine(int64_t end_monotonic_ns) {
  JsonLine& l = line_;
  l.Begin();
  l.Int("schema_version", kSchemaVersion);
  l.Int("iteration", iteration_);
  if (rank_ >= 0) l.Int("rank", rank_);
  l.Int("pid", pid_);
  l.Int("timestamp_ns", begin_realtime_ns_);
  l.Int("begin_monotonic_ns", begin_monotonic_ns_);
  l.Int("end_monotonic_ns", end_monotonic_ns);
  l.Int("latency_ns", end_monotonic_ns - begin_monotonic_ns_);
  if (window_enabled_) l.Bool("profiled", in_window_this_iteration_);
  if (!(set_mask_ & (1u << SIGHTLINE_GPU_MEMORY_BYTES))) {
    int64_t used = 0;
    if (CudaDriver::Get().GpuMemoryUsed(&used)) SetField(SIGHTLINE_GPU_MEMORY_BYTES, used);
  }
  if (!(set_mask_ & (1u << SIGHTLINE_CPU_MEMORY_BYTES))) {
    int64_t rss = 0;
    if (ReadRss(&rss)) SetField(SIGHTLINE_CPU_MEMORY_BYTES, rss);
  }
  for (int f = 0; f < SIGHTLINE_FIELD_COUNT; ++f) {
    if (set_mask_ & (1u << f)) l.Int(kFieldNames[f], fields_[f]);
  }
  if (user_count_ > 0) {
    l.OpenObject("user");
    for (size_t i = 0; i < user_count_; ++i) {
      const UserField& u = user_[i];
      switch (u.kind) {
        case UserField::kInt:
          l.Int(u.key, u.i);
          break;
        case UserField::kDouble:
          l.Double(u.key, u.d);
          break;
        case UserField::kString:
          l.String(u.key, u.s);
          break;
      }
    }
    l.CloseObject();
  }
  l.End();
  std::lock_guard<std::mutex> lock(writer_mutex_);
  writer_.Write(l.text());
}

UserField& State::User(const char* key) {
  for (size_t i = 0; i < user_count_; ++i) {
    if (user_[i].key == key) return user_[i];
  }
  if (user_count_ == user_.size()) user_.emplace_back();
  UserField& u = user_[user_count_++];
  u.key = key;
  return u;
}

// Reads the environment when the library is loaded (shared) or the program starts (static), so the
// level is cached before main() and NvtxEnabled() never has to call in.
__attribute__((constructor)) void LoadAtStartup() { State::Get(); }

}  // namespace

void ReloadForTesting() { State::Get().Configure(); }

void SetDriverLibraryForTesting(const std::string& library) {
  CudaDriver::Get().ResetForTesting(library);
}

}  // namespace sightline::instrument

using sightline::instrument::State;

extern "C" {

int sightline_nvtx_level(void) {
  State::Get();
  return sightline_nvtx_level_cache;
}

void sightline_range_push(int level, const char* name) {
  if (level < 1) level = 1;
  if (sightline_nvtx_enabled(level)) sightline::instrument::NvtxPush(name);
}

void sightline_range_pop(int level) {
  if (level < 1) level = 1;
  if (sightline_nvtx_enabled(level)) sightline::instrument::NvtxPop();
}

void sightline_mark(int level, const char* name) {
  if (level < 1) level = 1;
  if (sightline_nvtx_enabled(level)) sightline::instrument::NvtxMark(name);
}

void sightline_iteration_begin(int64_t iteration) { State::Get().Begin(iteration); }

void sightline_iteration_end(int64_t /*iteration*/) { State::Get().End(); }

void sightline_step(int64_t iteration) { State::Get().Begin(iteration); }

void sightline_log_field(sightline_field field, int64_t value) {
  State& s = State::Get();
  if (s.open()) s.SetField(static_cast<int>(field), value);
}

void sightline_log_int(const char* key, int64_t value) {
  State& s = State::Get();
  if (!s.open() || key == nullptr) return;
  auto& u = s.User(key);
  u.kind = sightline::instrument::UserField::kInt;
  u.i = value;
}

void sightline_log_double(const char* key, double value) {
  State& s = State::Get();
  if (!s.open() || key == nullptr) return;
  auto& u = s.User(key);
  u.kind = sightline::instrument::UserField::kDouble;
  u.d = value;
}

void sightline_log_string(const char* key, const char* value) {
  State& s = State::Get();
  if (!s.open() || key == nullptr) return;
  auto& u = s.User(key);
  u.kind = sightline::instrument::UserField::kString;
  u.s = value ? value : "";
}

void sightline_flush(void) { State::Get().FlushAll(); }

void sightline_request_event(const char* request_id, sightline_request_event_kind event,
                             int64_t tokens) {
  State& s = State::Get();
  if (!s.request_log_enabled()) return;
  s.RequestEvent(request_id, static_cast<int>(event), tokens);
}

int sightline_profiler_active(void) { return State::Get().profiler_active() ? 1 : 0; }

int sightline_rank(void) { return State::Get().rank(); }

}  // extern "C"
