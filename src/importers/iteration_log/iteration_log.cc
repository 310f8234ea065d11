#include "importers/iteration_log/iteration_log.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/lines.h"
#include "importers/iteration_log/trtllm_iteration_log.h"

namespace sightline {
namespace {

constexpr std::string_view kFieldKeys[kIterationLogFieldCount] = {
    "active_requests",     "context_requests", "generation_requests", "context_tokens",
    "generated_tokens",    "kv_blocks_used",   "kv_blocks_free",      "kv_blocks_max",
    "kv_tokens_per_block", "gpu_memory_bytes", "cpu_memory_bytes",    "pinned_memory_bytes"};

constexpr char kFormatDoc[] = "docs/formats/iteration-log.md";

Status LineError(const std::string& path, int64_t line, const std::string& what) {
  return InvalidInputError(
      fmt::format("{}:{}: {} (iteration log formats: {}; TensorRT-LLM's: "
                  "docs/formats/trtllm-iteration-stats.md)",
                  path, line, what, kFormatDoc));
}

// An integer member; `required` ones must be present.
Status ReadInt(simdjson::dom::object o, std::string_view key, bool required, int64_t* out,
               bool* present, const std::string& path, int64_t line) {
  simdjson::dom::element e;
  if (o[key].get(e) != simdjson::SUCCESS) {
    if (required) return LineError(path, line, fmt::format("no \"{}\" member", key));
    *present = false;
    return Status::Ok();
  }
  int64_t v = 0;
  if (e.get_int64().get(v) != simdjson::SUCCESS) {
    return LineError(path, line, fmt::format("\"{}\" is not an integer", key));
  }
  *out = v;
  *present = true;
  return Status::Ok();
}

Status ParseLine(simdjson::dom::parser& parser, std::string_view text, const std::string& path,
                 int64_t line, IterationLogEntry* entry) {
  simdjson::dom::element doc;
  if (auto err = parser.parse(text.data(), text.size()).get(doc); err != simdjson::SUCCESS) {
    return LineError(path, line, fmt::format("not valid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) {
    return LineError(path, line, "not a JSON object");
  }
  entry->line = line;
  int64_t version = 0;
  bool present = false;
  RETURN_IF_ERROR(ReadInt(o, "schema_version", true, &version, &present, path, line));
  if (version < 1 || version > kIterationLogSchemaVersion) {
    return LineError(path, line,
                     fmt::format("schema_version {} is not one this sightline reads (1 to {}); "
                                 "use a sightline as new as the instrument library",
                                 version, kIterationLogSchemaVersion));
  }
  RETURN_IF_ERROR(ReadInt(o, "iteration", true, &entry->iteration, &present, path, line));
  struct Optional {
    std::string_view key;
    int64_t* out;
  } optionals[] = {{"rank", &entry->rank},
                   {"pid", &entry->pid},
                   {"timestamp_ns", &entry->timestamp_ns},
                   {"begin_monotonic_ns", &entry->begin_monotonic_ns},
                   {"end_monotonic_ns", &entry->end_monotonic_ns},
                   {"latency_ns", &entry->latency_ns}};
  for (const Optional& f : optionals) {
    RETURN_IF_ERROR(ReadInt(o, f.key, false, f.out, &present, path, line));
  }
  for (int i = 0; i < kIterationLogFieldCount; ++i) {
    int64_t v = 0;
    RETURN_IF_ERROR(ReadInt(o, kFieldKeys[i], false, &v, &present, path, line));
    if (present) entry->fields[i] = v;
  }
  simdjson::dom::element e;
  if (o["profiled"].get(e) == simdjson::SUCCESS) {
    bool b = false;
    if (e.get_bool().get(b) != simdjson::SUCCESS) {
      return LineError(path, line, "\"profiled\" is not true or false");
    }
    entry->profiled = b;
  }
  if (o["user"].get(e) == simdjson::SUCCESS) {
    simdjson::dom::object user;
    if (e.get_object().get(user) != simdjson::SUCCESS) {
      return LineError(path, line, "\"user\" is not an object");
    }
    for (auto member : user) {
      const std::string key(member.key);
      int64_t i = 0;
      double d = 0;
      std::string_view s;
      if (member.value.get_int64().get(i) == simdjson::SUCCESS) {
        entry->user.emplace_back(key, i);
      } else if (member.value.get_double().get(d) == simdjson::SUCCESS) {
        entry->user.emplace_back(key, d);
      } else if (member.value.get_string().get(s) == simdjson::SUCCESS) {
        entry->user.emplace_back(key, std::string(s));
      } else if (member.value.is_null()) {
        entry->user.emplace_back(key, std::string());  // a non-finite number the library wrote
      } else {
        return LineError(path, line,
                         fmt::format("user field \"{}\" is not a number or a string", key));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view IterationLogFieldKey(IterationLogField field) {
  return kFieldKeys[static_cast<int>(field)];
}

StatusOr<IterationLog> ParseIterationLog(std::string_view text, const std::string& path) {
  if (std::optional<StatusOr<IterationLog>> trtllm = ParseTrtllmIterationLog(text, path)) {
    return std::move(*trtllm);
  }
  IterationLog log;
  log.path = path;
  simdjson::dom::parser parser;
  LineReader lines(text);
  std::string_view l;
  while (lines.Next(&l)) {
    if (IsBlankLine(l)) continue;
    IterationLogEntry entry;
    RETURN_IF_ERROR(ParseLine(parser, l, path, lines.number(), &entry));
    log.entries.push_back(std::move(entry));
  }
  if (log.entries.empty()) {
    return InvalidInputError(fmt::format(
        "{}: no iteration lines; is this a SIGHTLINE_ITERATION_LOG file ({}) or TensorRT-LLM "
        "iteration statistics (docs/formats/trtllm-iteration-stats.md)?",
        path, kFormatDoc));
  }
  return log;
}

StatusOr<IterationLog> ReadIterationLog(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadInput(path));
  return ParseIterationLog(text, path);
}

}  // namespace sightline
