/* Sightline instrument library: NVTX ranges with levels, an iteration window that starts and stops
 * the CUDA profiler, and a per-iteration JSON-lines log, for inference runtimes to link
 * (libsightline_instrument, CMake target sightline::instrument; see docs/instrument.md).
 *
 * The C API below is the whole library; under C++ a header-only layer (namespace sightline) wraps
 * it. Configuration comes from the environment, read once when the library loads:
 *   SIGHTLINE_NVTX_LEVEL=0|1|2          ranges off / basic (default) / verbose
 *   SIGHTLINE_PROFILE_START_STOP=A-B,.. profiler start at the beginning of iteration A, stop at the
 * end of iteration B (inclusive, like TLLM_PROFILE_START_STOP) SIGHTLINE_PROFILE_RANKS=0,3 only
 * these ranks open the window SIGHTLINE_ITERATION_LOG=path|stderr one JSON line per iteration; %p =
 * pid, %r = rank in the path Threads: call the iteration and log functions from one thread (the
 * loop's); ranges may be used from any thread (NVTX ranges are per thread). No function throws, and
 * none fails when CUDA or a GPU is absent: problems are reported once on stderr and the feature
 * turns itself off.
 */
#ifndef SIGHTLINE_INSTRUMENT_H_
#define SIGHTLINE_INSTRUMENT_H_

#include <stdint.h>

#if defined(_WIN32)
#define SIGHTLINE_INSTRUMENT_API
#else
#define SIGHTLINE_INSTRUMENT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* NVTX levels. A range of level L is emitted when SIGHTLINE_NVTX_LEVEL >= L. */
#define SIGHTLINE_NVTX_OFF 0
#define SIGHTLINE_NVTX_BASIC 1
#define SIGHTLINE_NVTX_VERBOSE 2

/* The level in effect, cached when the library loads (-1 before that). Read it only through
 * sightline_nvtx_enabled() or sightline::NvtxEnabled(): a load and a compare, no call. */
extern SIGHTLINE_INSTRUMENT_API int sightline_nvtx_level_cache;

static inline int sightline_nvtx_enabled(int level) { return sightline_nvtx_level_cache >= level; }

/* The level in effect (reads the environment if the library has not loaded it yet). */
SIGHTLINE_INSTRUMENT_API int sightline_nvtx_level(void);

/* Push/pop a range in the "sightline" NVTX domain when `level` is enabled. Pushes and pops pair up
 * per thread; pass the same level to both. */
SIGHTLINE_INSTRUMENT_API void sightline_range_push(int level, const char* name);
SIGHTLINE_INSTRUMENT_API void sightline_range_pop(int level);
/* An instantaneous NVTX marker when `level` is enabled. */
SIGHTLINE_INSTRUMENT_API void sightline_mark(int level, const char* name);

/* Iterations. Begin pushes the range "iteration N" (level basic), may start the profiler (window),
 * and records the begin time; End pops the range, writes the log line, and may stop the profiler.
 * Step(N) ends the open iteration (if any) and begins N. */
SIGHTLINE_INSTRUMENT_API void sightline_iteration_begin(int64_t iteration);
SIGHTLINE_INSTRUMENT_API void sightline_iteration_end(int64_t iteration);
SIGHTLINE_INSTRUMENT_API void sightline_step(int64_t iteration);

/* Well-known per-iteration fields. Set them between Begin and End; a field not set in an iteration
 * is left out of its log line. Names in the log: docs/formats/iteration-log.md. */
typedef enum sightline_field {
  SIGHTLINE_ACTIVE_REQUESTS = 0,
  SIGHTLINE_CONTEXT_REQUESTS,
  SIGHTLINE_GENERATION_REQUESTS,
  SIGHTLINE_CONTEXT_TOKENS,
  SIGHTLINE_GENERATED_TOKENS,
  SIGHTLINE_KV_BLOCKS_USED,
  SIGHTLINE_KV_BLOCKS_FREE,
  SIGHTLINE_KV_BLOCKS_MAX,
  SIGHTLINE_KV_TOKENS_PER_BLOCK,
  SIGHTLINE_GPU_MEMORY_BYTES,    /* overrides the library's own cuMemGetInfo reading */
  SIGHTLINE_CPU_MEMORY_BYTES,    /* overrides the library's own RSS reading */
  SIGHTLINE_PINNED_MEMORY_BYTES, /* only the app knows this one */
  SIGHTLINE_FIELD_COUNT
} sightline_field;

SIGHTLINE_INSTRUMENT_API void sightline_log_field(sightline_field field, int64_t value);
/* User fields, written under "user" in the line. Keys and string values are copied. A key set twice
 * in one iteration keeps the last value. */
SIGHTLINE_INSTRUMENT_API void sightline_log_int(const char* key, int64_t value);
SIGHTLINE_INSTRUMENT_API void sightline_log_double(const char* key, double value);
SIGHTLINE_INSTRUMENT_API void sightline_log_string(const char* key, const char* value);

/* Request events (the serving side): what happened to a request and when, for TTFT, ITL, TPOT,
 * queue time and the iterations a request spanned. Each call writes one JSON line to the file
 * SIGHTLINE_REQUEST_LOG names (%p and %r expand as in SIGHTLINE_ITERATION_LOG; "stderr" works too),
 * stamped with CLOCK_MONOTONIC and the open iteration's counter; without the variable nothing is
 * measured and the call returns at once. Thread-safe: call it from any thread. `request_id` is
 * copied (the client's X-Request-Id works). Format: docs/formats/request-log.md. */
typedef enum sightline_request_event_kind {
  SIGHTLINE_REQUEST_ARRIVED = 0, /* the server received it; `tokens` = its prompt tokens if known */
  SIGHTLINE_REQUEST_SCHEDULED,   /* first scheduled: its prefill starts */
  SIGHTLINE_REQUEST_TOKENS,      /* `tokens` output tokens were emitted (one streamed chunk) */
  SIGHTLINE_REQUEST_PREEMPTED,   /* evicted (e.g. KV cache full); may be scheduled again */
  SIGHTLINE_REQUEST_FINISHED,    /* done; `tokens` = 1 when it ended with an error, else 0 */
  SIGHTLINE_REQUEST_EVENT_COUNT
} sightline_request_event_kind;
SIGHTLINE_INSTRUMENT_API void sightline_request_event(const char* request_id,
                                                      sightline_request_event_kind event,
                                                      int64_t tokens);

/* Writes buffered log lines out (also done at exit). */
SIGHTLINE_INSTRUMENT_API void sightline_flush(void);

/* 1 while this process has the profiler started by the window, else 0. */
SIGHTLINE_INSTRUMENT_API int sightline_profiler_active(void);
/* This process's rank from the launcher's environment, -1 when none is set. */
SIGHTLINE_INSTRUMENT_API int sightline_rank(void);

#ifdef __cplusplus
} /* extern "C" */

namespace sightline {

enum NvtxLevel : int { kNvtxOff = 0, kNvtxBasic = 1, kNvtxVerbose = 2 };

// True when ranges of `level` are emitted: one load of a cached int and a compare.
inline bool NvtxEnabled(int level) noexcept { return sightline_nvtx_level_cache >= level; }

// An NVTX range for the enclosing scope, emitted only when its level is enabled. When it is not,
// the constructor is a compare and the destructor a test of a bool. `name` is not copied before the
// push.
class ScopedRange {
 public:
  explicit ScopedRange(const char* name, int level = kNvtxBasic) noexcept
      : level_(NvtxEnabled(level) ? level : 0) {
    if (level_) sightline_range_push(level_, name);
  }
  ~ScopedRange() {
    if (level_) sightline_range_pop(level_);
  }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  int level_;  // 0: nothing pushed
};

inline void IterationBegin(int64_t iteration) noexcept { sightline_iteration_begin(iteration); }
inline void IterationEnd(int64_t iteration) noexcept { sightline_iteration_end(iteration); }
inline void Step(int64_t iteration) noexcept { sightline_step(iteration); }

// Begins an iteration now and ends it when the scope ends.
class ScopedIteration {
 public:
  explicit ScopedIteration(int64_t iteration) noexcept : iteration_(iteration) {
    sightline_iteration_begin(iteration);
  }
  ~ScopedIteration() { sightline_iteration_end(iteration_); }
  ScopedIteration(const ScopedIteration&) = delete;
  ScopedIteration& operator=(const ScopedIteration&) = delete;

 private:
  int64_t iteration_;
};

inline void LogField(sightline_field field, int64_t value) noexcept {
  sightline_log_field(field, value);
}
inline void LogUser(const char* key, int64_t value) noexcept { sightline_log_int(key, value); }
inline void LogUser(const char* key, int value) noexcept { sightline_log_int(key, value); }
inline void LogUser(const char* key, double value) noexcept { sightline_log_double(key, value); }
inline void LogUser(const char* key, const char* value) noexcept {
  sightline_log_string(key, value);
}
inline void Flush() noexcept { sightline_flush(); }
// A request event (see sightline_request_event above).
inline void RequestEvent(const char* request_id, sightline_request_event_kind event,
                         int64_t tokens = 0) noexcept {
  sightline_request_event(request_id, event, tokens);
}

}  // namespace sightline
#endif /* __cplusplus */

#endif /* SIGHTLINE_INSTRUMENT_H_ */
