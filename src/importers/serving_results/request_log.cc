#include "importers/serving_results/request_log.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "base/lines.h"

namespace sightline {
namespace {

constexpr char kRequestLogDoc[] = "docs/formats/request-log.md";

Status RequestLineError(const std::string& path, int64_t line, const std::string& what) {
  return InvalidInputError(
      fmt::format("{}:{}: {} (request log format: {})", path, line, what, kRequestLogDoc));
}

std::string_view FirstLine(std::string_view text) {
  LineReader lines(text);
  std::string_view l;
  while (lines.Next(&l)) {
    if (!IsBlankLine(l)) return l;
  }
  return {};
}

// One request's events, as read.
struct Events {
  int64_t arrived = -1, scheduled = -1, finished = -1;
  bool error = false;
  int64_t prompt_tokens = 0;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> chunks;  // (time, tokens, iteration)
  int64_t scheduled_iteration = -1;
  int64_t preemptions = 0;
  int64_t first_iteration = -1, last_iteration = -1;
  int64_t first_line = 0;
};

}  // namespace

bool LooksLikeRequestLog(std::string_view text) {
  const std::string_view line = FirstLine(text);
  if (line.empty() || line.find('{') == std::string_view::npos) return false;
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(line.data(), line.size()).get_object().get(o) != simdjson::SUCCESS) {
    return false;
  }
  simdjson::dom::element e;
  return o["schema_version"].get(e) == simdjson::SUCCESS &&
         o["request"].get(e) == simdjson::SUCCESS && o["event"].get(e) == simdjson::SUCCESS;
}

StatusOr<RequestResults> ParseRequestLog(std::string_view text, const std::string& path) {
  simdjson::dom::parser parser;
  // Requests by (pid, id) in first-seen order.
  std::map<std::pair<int64_t, std::string>, size_t> index;
  std::vector<std::pair<std::string, Events>> requests;
  int64_t line = 0, first_ns = std::numeric_limits<int64_t>::max(), last_ns = 0;
  LineReader lines(text);
  std::string_view l;
  while (lines.Next(&l)) {
    line = lines.number();
    if (IsBlankLine(l)) continue;
    simdjson::dom::object o;
    if (auto err = parser.parse(l.data(), l.size()).get_object().get(o); err != simdjson::SUCCESS) {
      return RequestLineError(path, line, "not a JSON object");
    }
    int64_t version = 0, t = 0, pid = -1, iteration = -1, tokens = 0;
    std::string_view id, event;
    if (o["schema_version"].get_int64().get(version) != simdjson::SUCCESS || version != 1) {
      return RequestLineError(path, line,
                              "no \"schema_version\": 1 (a newer log needs a newer sightline)");
    }
    if (o["request"].get_string().get(id) != simdjson::SUCCESS) {
      return RequestLineError(path, line, "no \"request\" string");
    }
    if (o["event"].get_string().get(event) != simdjson::SUCCESS) {
      return RequestLineError(path, line, "no \"event\" string");
    }
    if (o["monotonic_ns"].get_int64().get(t) != simdjson::SUCCESS || t < 0) {
      return RequestLineError(path, line, "no non-negative integer \"monotonic_ns\"");
    }
    if (o["pid"].get_int64().get(pid) != simdjson::SUCCESS) pid = -1;
    if (o["iteration"].get_int64().get(iteration) != simdjson::SUCCESS) iteration = -1;
    if (o["tokens"].get_int64().get(tokens) != simdjson::SUCCESS) tokens = 0;
    bool error = false;
    if (o["error"].get_bool().get(error) != simdjson::SUCCESS) error = false;
    auto [it, inserted] = index.try_emplace({pid, std::string(id)}, requests.size());
    if (inserted) {
      requests.emplace_back(std::string(id), Events());
      requests.back().second.first_line = line;
    }
    Events& e = requests[it->second].second;
    first_ns = std::min(first_ns, t);
    last_ns = std::max(last_ns, t);
    if (iteration >= 0) {
      if (e.first_iteration < 0) e.first_iteration = iteration;
      e.last_iteration = std::max(e.last_iteration, iteration);
    }
    if (event == "arrived") {
      if (e.arrived < 0) e.arrived = t;
      e.prompt_tokens = std::max<int64_t>(e.prompt_tokens, tokens);
    } else if (event == "scheduled") {
      if (e.scheduled < 0) {
        e.scheduled = t;
        e.scheduled_iteration = iteration;
      }
    } else if (event == "tokens") {
      if (tokens < 0) return RequestLineError(path, line, "negative \"tokens\"");
      e.chunks.push_back({t, tokens, iteration});
    } else if (event == "preempted") {
      ++e.preemptions;
    } else if (event == "finished") {
      e.finished = t;
      e.error = error;
    } else {
      return RequestLineError(
          path, line,
          fmt::format("unknown event \"{}\" (arrived, scheduled, tokens, preempted, "
                      "finished)",
                      event));
    }
  }
  if (requests.empty()) {
    return InvalidInputError(fmt::format("{}: no request events ({})", path, kRequestLogDoc));
  }
  RequestResults r;
  r.path = path;
  r.format = "sightline-request-log";
  r.producer = "Sightline instrument library (SIGHTLINE_REQUEST_LOG)";
  r.ttft_from = "the server receiving the request";
  r.duration_s = static_cast<double>(last_ns - first_ns) / 1e9;
  if (!(r.duration_s > 0)) r.duration_s = 1e-9;
  for (auto& [id, e] : requests) {
    RequestRecord& q = r.requests.emplace_back();
    q.id = id;
    q.preemptions = e.preemptions;
    q.first_iteration = e.first_iteration;
    q.last_iteration = e.last_iteration;
    q.input_tokens = e.prompt_tokens;
    std::sort(e.chunks.begin(), e.chunks.end());
    for (const auto& c : e.chunks) q.output_tokens += std::get<1>(c);
    if (e.scheduled_iteration >= 0) r.prefill_iterations.push_back(e.scheduled_iteration);
    if (e.arrived < 0 || e.finished < 0 || e.error || e.chunks.empty()) {
      q.success = false;
      q.error = e.arrived < 0    ? "no arrived event"
                : e.finished < 0 ? "not finished in the log"
                : e.error        ? "finished with an error"
                                 : "finished without emitting tokens";
      continue;
    }
    q.start_s = static_cast<double>(e.arrived) / 1e9;
    const int64_t first_chunk = std::get<0>(e.chunks.front());
    const int64_t last_chunk = std::get<0>(e.chunks.back());
    q.ttft_s = static_cast<double>(first_chunk - e.arrived) / 1e9;
    q.latency_s = static_cast<double>(std::max(e.finished, last_chunk) - e.arrived) / 1e9;
    bool iterations_known = true;
    for (const auto& c : e.chunks) iterations_known &= std::get<2>(c) >= 0;
    for (size_t i = 0; i < e.chunks.size(); ++i) {
      if (iterations_known) q.chunk_iterations.push_back(std::get<2>(e.chunks[i]));
      if (i == 0) continue;
      q.itl_s.push_back(
          static_cast<double>(std::get<0>(e.chunks[i]) - std::get<0>(e.chunks[i - 1])) / 1e9);
    }
    if (e.scheduled >= 0) q.queue_s = static_cast<double>(e.scheduled - e.arrived) / 1e9;
  }
  std::sort(r.prefill_iterations.begin(), r.prefill_iterations.end());
  r.prefill_iterations.erase(std::unique(r.prefill_iterations.begin(), r.prefill_iterations.end()),
                             r.prefill_iterations.end());
  return r;
}

}  // namespace sightline
