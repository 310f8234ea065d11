#include "importers/iteration_log/trtllm_iteration_log.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "base/lines.h"

namespace sightline {
namespace {

constexpr char kTrtllmIterationDoc[] = "docs/formats/trtllm-iteration-stats.md";

using F = IterationLogField;

void Set(IterationLogEntry& e, F f, int64_t v) { e.fields[static_cast<int>(f)] = v; }

// A JSON number member as int64 (integers, or doubles rounded); false when absent or not a number.
bool Number(simdjson::dom::object o, std::string_view key, double* out) {
  simdjson::dom::element e;
  if (o[key].get(e) != simdjson::SUCCESS) return false;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) {
    *out = static_cast<double>(i);
    return true;
  }
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d)) {
    *out = d;
    return true;
  }
  return false;
}

void Field(simdjson::dom::object o, std::string_view key, IterationLogEntry& e, F f) {
  double v = 0;
  if (Number(o, key, &v)) Set(e, f, std::llround(v));
}

void User(simdjson::dom::object o, std::string_view key, IterationLogEntry& e) {
  double v = 0;
  if (Number(o, key, &v)) e.user.emplace_back(std::string(key), v);
}

// One IterationStats object (the C++ executor's JSON, also trtllm-serve's /metrics).
bool FromIterationStats(simdjson::dom::object o, IterationLogEntry& e) {
  double iter = 0;
  if (!Number(o, "iter", &iter)) return false;
  e.iteration = std::llround(iter);
  double ms = 0;
  if (Number(o, "iterLatencyMS", &ms)) e.latency_ns = std::llround(ms * 1e6);
  Field(o, "numActiveRequests", e, F::kActiveRequests);
  Field(o, "gpuMemUsage", e, F::kGpuMemoryBytes);
  Field(o, "cpuMemUsage", e, F::kCpuMemoryBytes);
  Field(o, "pinnedMemUsage", e, F::kPinnedMemoryBytes);
  User(o, "numQueuedRequests", e);
  User(o, "newActiveRequestsQueueLatencyMS", e);
  simdjson::dom::object ib, kv;
  if (o["inflightBatchingStats"].get_object().get(ib) == simdjson::SUCCESS) {
    Field(ib, "numContextRequests", e, F::kContextRequests);
    Field(ib, "numGenRequests", e, F::kGenerationRequests);
    Field(ib, "numCtxTokens", e, F::kContextTokens);
    User(ib, "numScheduledRequests", e);
    User(ib, "numPausedRequests", e);
    User(ib, "avgNumDecodedTokensPerIter", e);
  }
  if (o["kvCacheStats"].get_object().get(kv) == simdjson::SUCCESS) {
    Field(kv, "usedNumBlocks", e, F::kKvBlocksUsed);
    Field(kv, "freeNumBlocks", e, F::kKvBlocksFree);
    Field(kv, "maxNumBlocks", e, F::kKvBlocksMax);
    Field(kv, "tokensPerBlock", e, F::kKvTokensPerBlock);
    User(kv, "cacheHitRate", e);
  }
  return true;
}

// One --log_iteration_data object of the C++ runtime.
bool FromCppLog(simdjson::dom::object o, IterationLogEntry& e) {
  double iter = 0;
  if (!Number(o, "Iteration Counter", &iter)) return false;
  e.iteration = std::llround(iter);
  Field(o, "Active Request Count", e, F::kActiveRequests);
  Field(o, "Context Requests", e, F::kContextRequests);
  Field(o, "Generation Requests", e, F::kGenerationRequests);
  Field(o, "Total Context Tokens", e, F::kContextTokens);
  Field(o, "Used KV cache blocks", e, F::kKvBlocksUsed);
  Field(o, "Free KV cache blocks", e, F::kKvBlocksFree);
  Field(o, "Max KV cache blocks", e, F::kKvBlocksMax);
  Field(o, "Tokens per KV cache block", e, F::kKvTokensPerBlock);
  Field(o, "Runtime GPU Memory Usage", e, F::kGpuMemoryBytes);
  Field(o, "Runtime CPU Memory Usage", e, F::kCpuMemoryBytes);
  Field(o, "Runtime Pinned Memory Usage", e, F::kPinnedMemoryBytes);
  User(o, "Scheduled Requests", e);
  User(o, "Paused Requests", e);
  User(o, "MicroBatch ID", e);
  return true;
}

// "key = 12.5ms" / "key = 3" / "key = None" in a py_executor line (older versions also write
// "key: 10"); false when absent or None. `unit`, when given, receives what follows the number
// ("ms", "s", "").
bool PyValue(std::string_view line, std::string_view key, double* out,
             std::string* unit = nullptr) {
  for (const char* separator : {" = ", ": "}) {
    const std::string pattern = std::string(key) + separator;
    size_t at = line.find(pattern);
    while (at != std::string_view::npos && at > 0 && line[at - 1] != ' ' && line[at - 1] != ',') {
      at = line.find(pattern, at + 1);  // "rank = " inside "global_rank = "
    }
    if (at == std::string_view::npos) continue;
    const std::string rest(line.substr(at + pattern.size(), 40));
    char* end = nullptr;
    const double v = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str() || !std::isfinite(v)) return false;
    *out = v;
    if (unit != nullptr) {
      const char* u = end;
      while (std::isalpha(static_cast<unsigned char>(*u))) ++u;
      *unit = std::string(static_cast<const char*>(end), u);
    }
    return true;
  }
  return false;
}

// "'key': 12" inside the states dict of a py_executor line.
bool PyState(std::string_view line, std::string_view key, int64_t* out) {
  const std::string pattern = "'" + std::string(key) + "': ";
  const size_t at = line.find(pattern);
  if (at == std::string_view::npos) return false;
  const std::string rest(line.substr(at + pattern.size(), 24));
  char* end = nullptr;
  const long long v = std::strtoll(rest.c_str(), &end, 10);
  if (end == rest.c_str()) return false;
  *out = v;
  return true;
}

bool FromPyExecutorLine(std::string_view line, IterationLogEntry& e) {
  if (line.find("iter = ") == std::string_view::npos ||
      (line.find("host_step_time") == std::string_view::npos &&
       line.find("elapsed_time") == std::string_view::npos &&
       line.find("states = ") == std::string_view::npos)) {
    return false;
  }
  double v = 0;
  if (!PyValue(line, "iter", &v)) return false;
  e.iteration = std::llround(v);
  if (PyValue(line, "rank", &v)) e.rank = std::llround(v);
  std::string unit;
  if (PyValue(line, "host_step_time", &v)) {
    e.latency_ns = std::llround(v * 1e6);  // the host's wall time for the step, ms
    e.user.emplace_back("host_step_time_ms", v);
  } else if (PyValue(line, "elapsed_time", &v, &unit) && v >= 0 && (unit == "s" || unit == "ms")) {
    // Older py_executor (about v0.19): "elapsed_time = 0.00506s", the step's wall time.
    const double ms = unit == "s" ? v * 1e3 : v;
    e.latency_ns = std::llround(ms * 1e6);
    e.user.emplace_back("elapsed_time_ms", ms);
  }
  if (PyValue(line, "prev_device_step_time", &v))
    e.user.emplace_back("prev_device_step_time_ms", v);
  if (PyValue(line, "num_scheduled_requests", &v)) {
    e.user.emplace_back("num_scheduled_requests", static_cast<int64_t>(std::llround(v)));
  }
  int64_t n = 0;
  if (PyState(line, "num_ctx_requests", &n)) Set(e, F::kContextRequests, n);
  if (PyState(line, "num_ctx_tokens", &n)) Set(e, F::kContextTokens, n);
  if (PyState(line, "num_generation_tokens", &n)) Set(e, F::kGeneratedTokens, n);
  return true;
}

enum class Shape { kNone, kStatsJsonLines, kCppLog, kPyExecutor };

std::string_view Trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// trtllm-serve's /metrics answer: a JSON array of IterationStats objects.
StatusOr<IterationLog> ParseStatsArray(simdjson::dom::array a, const std::string& path) {
  IterationLog log;
  log.path = path;
  int64_t index = 0;
  for (simdjson::dom::element item : a) {
    ++index;
    simdjson::dom::object o;
    IterationLogEntry e;
    e.line = index;
    if (item.get_object().get(o) != simdjson::SUCCESS || !FromIterationStats(o, e)) {
      return InvalidInputError(fmt::format(
          "{}: element {} of the JSON array is not an IterationStats object with \"iter\" ({})",
          path, index, kTrtllmIterationDoc));
    }
    log.entries.push_back(std::move(e));
  }
  log.format = "trtllm-iteration-stats";
  if (log.entries.empty()) {
    return InvalidInputError(fmt::format("{}: an empty JSON array: no iterations", path));
  }
  return log;
}

}  // namespace

std::optional<StatusOr<IterationLog>> ParseTrtllmIterationLog(std::string_view text,
                                                              const std::string& path) {
  IterationLog log;
  log.path = path;
  simdjson::dom::parser parser;
  const std::string_view body = Trim(text);
  if (!body.empty() && body.front() == '[') {  // trtllm-serve /metrics: one JSON array
    simdjson::dom::element doc;
    simdjson::dom::array a;
    const bool array = parser.parse(body.data(), body.size()).get(doc) == simdjson::SUCCESS &&
                       doc.get_array().get(a) == simdjson::SUCCESS;
    if (array) return ParseStatsArray(a, path);
    // Not one JSON array: a log whose lines start with "[" ("[TensorRT-LLM][INFO] ...").
  }

  Shape shape = Shape::kNone;
  LineReader lines(text);
  std::string_view raw;
  while (lines.Next(&raw)) {
    const int64_t line_no = lines.number();
    const std::string_view line = Trim(raw);
    if (line.empty()) continue;
    IterationLogEntry e;
    e.line = line_no;
    bool used = false;
    const size_t brace = line.find('{');
    if ((shape == Shape::kNone || shape == Shape::kStatsJsonLines || shape == Shape::kCppLog) &&
        brace != std::string_view::npos) {
      const std::string_view json = line.substr(brace);
      simdjson::dom::element doc;
      simdjson::dom::object o;
      if (parser.parse(json.data(), json.size()).get(doc) == simdjson::SUCCESS &&
          doc.get_object().get(o) == simdjson::SUCCESS) {
        simdjson::dom::element probe;
        if (o["schema_version"].get(probe) == simdjson::SUCCESS) return std::nullopt;  // ours
        if (shape != Shape::kCppLog && brace == 0 && FromIterationStats(o, e)) {
          shape = Shape::kStatsJsonLines;
          used = true;
        } else if (shape != Shape::kStatsJsonLines && FromCppLog(o, e)) {
          shape = Shape::kCppLog;
          used = true;
        }
      }
    }
    if (!used && (shape == Shape::kNone || shape == Shape::kPyExecutor) &&
        FromPyExecutorLine(line, e)) {
      shape = Shape::kPyExecutor;
      used = true;
    }
    if (used) {
      log.entries.push_back(std::move(e));
    } else {
      ++log.skipped_lines;
    }
  }
  if (shape == Shape::kNone) return std::nullopt;
  log.format = shape == Shape::kStatsJsonLines ? "trtllm-iteration-stats"
               : shape == Shape::kCppLog       ? "trtllm-cpp-log"
                                               : "trtllm-py-executor-log";
  return StatusOr<IterationLog>(std::move(log));
}

}  // namespace sightline
