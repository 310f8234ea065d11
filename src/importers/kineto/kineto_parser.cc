#include "importers/kineto/kineto_parser.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "base/strings.h"
#include "importers/kineto/kineto_events_reader.h"
#include "importers/kineto/kineto_json.h"
#include "importers/kineto/kineto_mapper.h"
#include "importers/kineto/kineto_numbers.h"
#include "importers/kineto/kineto_read_metadata.h"

namespace sightline::kineto {
namespace {

using simdjson::error_code;
using simdjson::SUCCESS;

class TopLevelParser {
 public:
  TopLevelParser(JsonStream& stream, const std::string& path, int64_t base_guess_ns,
                 size_t window_bytes, TraceBuilder* builder)
      : stream_(stream),
        path_(path),
        base_guess_ns_(base_guess_ns),
        window_bytes_(window_bytes),
        builder_(builder) {}

  Status Run(ParseOutcome* outcome);

 private:
  Status Error(size_t at, std::string_view what);
  // Makes data()[i] available; false at the end of the file.
  StatusOr<bool> Have(size_t i);
  StatusOr<size_t> SkipSpace(size_t i);
  StatusOr<size_t> ScanString(size_t i);  // i at '"'; returns one past the closing quote
  StatusOr<size_t> ScanValue(size_t i);   // returns one past the value
  Status ReadField(std::string_view key_token, std::string_view value_text);
  Status ReadEvents();
  void Finish();

  JsonStream& stream_;
  const std::string& path_;
  int64_t base_guess_ns_;
  size_t window_bytes_;
  TraceBuilder* builder_;
  TopLevelInfo info_;
  sj::parser small_parser_;
  std::optional<EventMapper> mapper_;
  bool events_used_file_base_ = false;
  int64_t events_base_ns_ = 0;
};

Status TopLevelParser::Error(size_t at, std::string_view what) {
  return InvalidInputError(fmt::format(
      "{}: malformed JSON near byte {}{}: {}; the trace is truncated or corrupt: let the "
      "profiler finish writing it, or re-copy / re-export it",
      path_, stream_.offset() + at, stream_.gzip() ? " of the inflated JSON" : "", what));
}

StatusOr<bool> TopLevelParser::Have(size_t i) {
  if (i < stream_.size()) return true;
  RETURN_IF_ERROR(stream_.Fill(std::max(i + 1, 2 * stream_.size() + (size_t{1} << 16))));
  return i < stream_.size();
}

StatusOr<size_t> TopLevelParser::SkipSpace(size_t i) {
  for (;;) {
    ASSIGN_OR_RETURN(bool have, Have(i));
    if (!have || !IsJsonSpace(stream_.data()[i])) return i;
    ++i;
  }
}

StatusOr<size_t> TopLevelParser::ScanString(size_t i) {
  for (++i;; ++i) {
    ASSIGN_OR_RETURN(bool have, Have(i));
    if (!have) return Error(i, "the file ends inside a string");
    const char c = stream_.data()[i];
    if (c == '\\') {
      ++i;
    } else if (c == '"') {
      return i + 1;
    }
  }
}

StatusOr<size_t> TopLevelParser::ScanValue(size_t i) {
  ASSIGN_OR_RETURN(bool have, Have(i));
  if (!have) return Error(i, "the file ends before a value");
  char c = stream_.data()[i];
  if (c == '"') return ScanString(i);
  if (c != '{' && c != '[') {
    for (;; ++i) {
      ASSIGN_OR_RETURN(have, Have(i));
      if (!have) return i;
      c = stream_.data()[i];
      if (c == ',' || c == '}' || c == ']' || IsJsonSpace(c)) return i;
    }
  }
  int depth = 0;
  for (;;) {
    ASSIGN_OR_RETURN(have, Have(i));
    if (!have) return Error(i, "the file ends inside a value");
    c = stream_.data()[i];
    if (c == '"') {
      ASSIGN_OR_RETURN(i, ScanString(i));
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
}

Status TopLevelParser::ReadField(std::string_view key_token, std::string_view value_text) {
  // One small document per field: {"key": value}.
  std::string text;
  text.reserve(key_token.size() + value_text.size() + 3);
  text.append("{").append(key_token).append(":").append(value_text).append("}");
  const simdjson::padded_string padded(text);
  sj::document doc;
  sj::object object;
  error_code e = small_parser_.iterate(padded).get(doc);
  if (e == SUCCESS) e = doc.get_object().get(object);
  if (e == SUCCESS) {
    for (auto field_result : object) {
      sj::field field;
      if ((e = std::move(field_result).get(field)) != SUCCESS) break;
      if ((e = ReadTopLevelField(field.key(), field.value(), &info_)) != SUCCESS) break;
    }
  }
  if (e != SUCCESS) {
    return InvalidInputError(fmt::format("{}: malformed JSON in the top-level field {} ({})", path_,
                                         key_token, simdjson::error_message(e)));
  }
  return Status::Ok();
}

Status TopLevelParser::ReadEvents() {
  if (mapper_) return InvalidInputError(fmt::format("{}: traceEvents appears twice", path_));
  // Newer Kineto writes ts relative to baseTimeNanoseconds and puts it first; older versions
  // write it after traceEvents, where the caller's guess (read from the end of the file) stands
  // in until it is verified in Run().
  events_used_file_base_ = info_.has_base_time;
  events_base_ns_ = info_.has_base_time ? info_.base_time_ns : base_guess_ns_;
  if (stream_.size_hint() >= (size_t{64} << 20)) {
    // Rough densities of real traces (a kernel comes with its launch, ops and flows in about
    // 2 KB); capacity that is never written costs address space, not memory.
    const size_t bytes = stream_.size_hint();
    builder_->Reserve(bytes / 1500, bytes / 50000, bytes / 1500, bytes / 700);
  }
  mapper_.emplace(builder_, events_base_ns_);
  EventsReader reader(path_, window_bytes_);
  return reader.Read(stream_, *mapper_);
}

Status TopLevelParser::Run(ParseOutcome* outcome) {
  ASSIGN_OR_RETURN(size_t i, SkipSpace(0));
  if (stream_.size() >= i + 3 && std::string_view(stream_.data() + i, 3) == "\xEF\xBB\xBF") {
    ASSIGN_OR_RETURN(i, SkipSpace(i + 3));
  }
  ASSIGN_OR_RETURN(bool have, Have(i));
  if (have && stream_.data()[i] == '[') {
    // Chrome's JSON Array Format: the events alone, no metadata (early Kineto, other tracers).
    stream_.Consume(i + 1);
    ASSIGN_OR_RETURN(i, SkipSpace(0));
    ASSIGN_OR_RETURN(have, Have(i));
    if (have && stream_.data()[i] != '{' && stream_.data()[i] != ']') {
      return InvalidInputError(fmt::format(
          "{}: a JSON array, but its first item is not an event object: not a Chrome trace or "
          "PyTorch profiler file",
          path_));
    }
    RETURN_IF_ERROR(ReadEvents());
    ASSIGN_OR_RETURN(i, SkipSpace(0));
    ASSIGN_OR_RETURN(have, Have(i));
    if (have) {
      return Error(i,
                   "unexpected content after the end of the JSON array (two traces "
                   "concatenated?)");
    }
    if (!events_used_file_base_ && events_base_ns_ != 0) {
      outcome->retry = true;
      outcome->base_time_ns = 0;
    }
    return Status::Ok();
  }
  if (!have || stream_.data()[i] != '{') {
    return InvalidInputError(
        fmt::format("{}: {}not a JSON object; expected a PyTorch profiler (Kineto) trace such as "
                    "torch.profiler's export_chrome_trace() writes",
                    path_, stream_.gzip() ? "the gzip'd content is " : ""));
  }
  ++i;
  bool first = true;
  for (;;) {
    ASSIGN_OR_RETURN(i, SkipSpace(i));
    ASSIGN_OR_RETURN(have, Have(i));
    if (!have) return Error(i, "the file ends inside the top-level object");
    char c = stream_.data()[i];
    if (c == '}' && first) {
      ++i;
      break;
    }
    if (c != '"') return Error(i, "expected a key");
    const size_t key_begin = i;
    ASSIGN_OR_RETURN(i, ScanString(i));
    const size_t key_end = i;
    ASSIGN_OR_RETURN(i, SkipSpace(i));
    ASSIGN_OR_RETURN(have, Have(i));
    if (!have || stream_.data()[i] != ':') return Error(i, "expected ':' after a key");
    ASSIGN_OR_RETURN(i, SkipSpace(i + 1));
    const std::string key(stream_.data() + key_begin, key_end - key_begin);
    if (key == "\"traceEvents\"") {
      ASSIGN_OR_RETURN(have, Have(i));
      if (!have || stream_.data()[i] != '[') {
        return InvalidInputError(fmt::format(
            "{}: traceEvents is not an array; not a Chrome-trace / PyTorch profiler file", path_));
      }
      stream_.Consume(i + 1);
      RETURN_IF_ERROR(ReadEvents());
      i = 0;
    } else {
      const size_t value_begin = i;
      ASSIGN_OR_RETURN(i, ScanValue(i));
      RETURN_IF_ERROR(
          ReadField(key, std::string_view(stream_.data() + value_begin, i - value_begin)));
      stream_.Consume(i);
      i = 0;
    }
    first = false;
    ASSIGN_OR_RETURN(i, SkipSpace(i));
    ASSIGN_OR_RETURN(have, Have(i));
    if (!have) return Error(i, "the file ends inside the top-level object");
    c = stream_.data()[i];
    ++i;
    if (c == '}') break;
    if (c != ',') return Error(i - 1, "expected ',' or '}' between top-level fields");
  }
  ASSIGN_OR_RETURN(i, SkipSpace(i));
  ASSIGN_OR_RETURN(have, Have(i));
  if (have) {
    return Error(i,
                 "unexpected content after the end of the JSON object (two traces "
                 "concatenated?)");
  }
  if (!mapper_) {
    return InvalidInputError(fmt::format(
        "{}: JSON without a traceEvents array: not a Chrome trace. Expected a PyTorch profiler "
        "(Kineto) trace, e.g. from torch.profiler's export_chrome_trace() or "
        "tensorboard_trace_handler",
        path_));
  }
  const int64_t file_base = info_.has_base_time ? info_.base_time_ns : 0;
  if (!events_used_file_base_ && events_base_ns_ != file_base) {
    outcome->retry = true;
    outcome->base_time_ns = file_base;
    return Status::Ok();
  }
  Finish();
  return Status::Ok();
}

void TopLevelParser::Finish() {
  mapper_->Finish();
  TraceSource& source = builder_->source();
  source.path = path_;
  source.format = "kineto-json";
  source.format_version = info_.schema_version;
  source.producer = ProducerText(info_);
  source.rank = info_.rank >= 0 ? info_.rank : mapper_->rank_from_labels();
  source.world_size = info_.world_size;
  for (const DeviceInfo& device : info_.devices) builder_->AddDevice(device);
  builder_->diagnostics().Add(DiagCode::kKinetoInvalidDevice, info_.invalid_devices);
}

}  // namespace

Status ParseKinetoStream(JsonStream& stream, const std::string& path, int64_t base_guess_ns,
                         size_t window_bytes, TraceBuilder* builder, ParseOutcome* outcome) {
  *outcome = ParseOutcome{};
  TopLevelParser parser(stream, path, base_guess_ns, window_bytes, builder);
  return parser.Run(outcome);
}

std::optional<int64_t> FindBaseTimeGuess(std::string_view tail) {
  constexpr std::string_view kKey = "\"baseTimeNanoseconds\"";
  const size_t at = tail.rfind(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + kKey.size();
  while (i < tail.size() && IsJsonSpace(tail[i])) ++i;
  if (i >= tail.size() || tail[i] != ':') return std::nullopt;
  ++i;
  while (i < tail.size() && IsJsonSpace(tail[i])) ++i;
  size_t j = i;
  while (j < tail.size() && tail[j] >= '0' && tail[j] <= '9') ++j;
  int64_t value;
  if (!ParseInt64(tail.substr(i, j - i), &value)) return std::nullopt;
  return value;
}

StatusOr<Trace> ImportKinetoJsonWithWindow(const std::string& path, size_t window_bytes) {
  ASSIGN_OR_RETURN(std::unique_ptr<JsonStream> stream, JsonStream::Open(path));
  ASSIGN_OR_RETURN(std::string tail, stream->Tail(size_t{1} << 20));
  int64_t base_guess = FindBaseTimeGuess(tail).value_or(0);
  tail = std::string();
  // At most two passes: the second only when baseTimeNanoseconds follows traceEvents and the
  // guess from the end of the file was wrong.
  for (int pass = 0; pass < 2; ++pass) {
    TraceBuilder builder;
    ParseOutcome outcome;
    RETURN_IF_ERROR(ParseKinetoStream(*stream, path, base_guess, window_bytes, &builder, &outcome));
    if (!outcome.retry) {
      stream.reset();  // the input buffers go before Finish() sorts the tables
      return builder.Finish();
    }
    base_guess = outcome.base_time_ns;
    RETURN_IF_ERROR(stream->Rewind());
  }
  return InternalError(path + ": baseTimeNanoseconds could not be settled in two passes");
}

}  // namespace sightline::kineto
