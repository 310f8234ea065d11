#include "importers/serving_results/sglang_results.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <vector>

#include "base/lines.h"
#include "importers/serving_results/aggregate_results.h"

namespace sightline {
namespace {

Status SglangBad(const std::string& path, int64_t line, const std::string& what) {
  return InvalidInputError(fmt::format(
      "{}:{}: {}; expected the JSON lines that `python -m sglang.bench_serving --output-file F "
      "--output-details` writes (docs/formats/sglang-bench-serving.md)",
      path, line, what));
}

struct Line {
  int64_t number = 0;  // 1-based
  std::string_view text;
};

std::vector<Line> NonEmptyLines(std::string_view text) {
  std::vector<Line> lines;
  LineReader reader(text);
  std::string_view l;
  while (reader.Next(&l)) {
    if (!IsBlankLine(l)) lines.push_back({reader.number(), l});
  }
  return lines;
}

// The per-request list `key`; its length must be `n`.
StatusOr<simdjson::dom::array> List(simdjson::dom::object o, std::string_view key, size_t n,
                                    const std::string& path, int64_t line) {
  simdjson::dom::array a;
  if (o[key].get_array().get(a) != simdjson::SUCCESS) {
    return SglangBad(path, line, fmt::format("no per-request list \"{}\"", key));
  }
  if (a.size() != n) {
    return SglangBad(path, line,
                     fmt::format("\"{}\" has {} entries, \"ttfts\" {}", key, a.size(), n));
  }
  return a;
}

StatusOr<double> SglangSeconds(simdjson::dom::element e, std::string_view key, size_t i,
                               const std::string& path, int64_t line) {
  double v = 0;
  if (e.get_double().get(v) != simdjson::SUCCESS || !std::isfinite(v) || v < 0) {
    return SglangBad(path, line,
                     fmt::format("\"{}\"[{}] is not a non-negative number of seconds", key, i));
  }
  return v;
}

// Python's json.dumps writes Infinity, -Infinity and NaN (SGLang's default request rate is inf),
// which JSON has not: they become null outside strings.
std::string WithoutNonFinite(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  size_t i = 0;
  while (i < line.size()) {
    // Outside strings: copy up to the next quote or the first letter of a token.
    size_t j = line.find_first_of("\"IN-", i);
    out.append(line.substr(i, j == std::string_view::npos ? j : j - i));
    if (j == std::string_view::npos) break;
    i = j;
    if (line[i] == '"') {
      // A string, copied whole: up to its closing quote, escapes included.
      out += '"';
      ++i;
      while (i < line.size()) {
        j = line.find_first_of("\"\\", i);
        out.append(line.substr(i, j == std::string_view::npos ? j : j - i));
        if (j == std::string_view::npos) return out;
        if (line[j] == '"') {
          out += '"';
          i = j + 1;
          break;
        }
        out.append(line.substr(j, 2));  // the backslash and the character it escapes
        i = j + 2;
      }
      continue;
    }
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (line.substr(i, token.size()) == token) {
        out += "null";
        i += token.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += line[i++];
  }
  return out;
}

}  // namespace

StatusOr<RequestResults> ParseSglangResults(std::string_view text, const std::string& path) {
  const std::vector<Line> lines = NonEmptyLines(text);
  simdjson::dom::parser parser;
  // The last run with per-request lists: the file is appended to, one line per run.
  int64_t chosen = -1, runs = 0;
  std::vector<std::string> clean;
  for (const Line& l : lines) clean.push_back(WithoutNonFinite(l.text));
  for (size_t k = 0; k < lines.size(); ++k) {
    simdjson::dom::object o;
    if (parser.parse(clean[k]).get_object().get(o) != simdjson::SUCCESS) {
      return SglangBad(path, lines[k].number, "not a JSON object on one line");
    }
    ++runs;
    simdjson::dom::element e;
    if (o["ttfts"].get(e) == simdjson::SUCCESS) chosen = static_cast<int64_t>(k);
  }
  if (chosen < 0) {
    // bench_serving without --output-details: the last run's aggregates, shown as written.
    simdjson::dom::object last;
    if (!lines.empty() && parser.parse(clean.back()).get_object().get(last) == simdjson::SUCCESS &&
        HasServingAggregates(last)) {
      std::string_view backend = "?";
      if (last["backend"].get_string().get(backend) != simdjson::SUCCESS) backend = "?";
      RequestResults r = AggregateResultsOf(
          last, path, "sglang-bench-serving",
          fmt::format("SGLang bench_serving (backend {})", backend),
          "run `python -m sglang.bench_serving ... --output-details` to keep them");
      if (runs > 1) {
        r.diagnostics.Add(DiagCode::kServingRunsSkipped, runs - 1,
                          fmt::format("read the run on line {}", lines.back().number));
      }
      return r;
    }
    return SglangBad(path, lines.empty() ? 1 : lines.back().number,
                     "no run with per-request lists (\"ttfts\", \"itls\"): run bench_serving with "
                     "--output-details");
  }
  const int64_t ln = lines[static_cast<size_t>(chosen)].number;
  simdjson::dom::object o;
  if (parser.parse(clean[static_cast<size_t>(chosen)]).get_object().get(o) != simdjson::SUCCESS) {
    return SglangBad(path, ln, "not a JSON object");
  }
  RequestResults r;
  r.path = path;
  r.format = "sglang-bench-serving";
  r.ttft_from = "the client sending the request";
  r.has_start_times = false;
  r.latency_from_chunks = true;
  if (runs > 1) {
    r.diagnostics.Add(DiagCode::kServingRunsSkipped, runs - 1,
                      fmt::format("read the run on line {}", ln));
  }
  if (o["duration"].get_double().get(r.duration_s) != simdjson::SUCCESS ||
      !std::isfinite(r.duration_s) || r.duration_s <= 0) {
    return SglangBad(path, ln, "no positive \"duration\" (the benchmark's length in seconds)");
  }
  std::string_view backend = "?";
  if (o["backend"].get_string().get(backend) != simdjson::SUCCESS) backend = "?";
  double rate = 0;
  std::string rate_text = "inf";  // Infinity, read as null
  if (o["request_rate"].get_double().get(rate) == simdjson::SUCCESS) {
    rate_text = fmt::format("{:g}/s", rate);
  }
  r.producer = fmt::format("SGLang bench_serving (backend {}, request rate {}, run on line {})",
                           backend, rate_text, ln);

  simdjson::dom::array ttfts;
  if (o["ttfts"].get_array().get(ttfts) != simdjson::SUCCESS) {
    return SglangBad(path, ln, "\"ttfts\" is not a list");
  }
  const size_t n = ttfts.size();
  ASSIGN_OR_RETURN(simdjson::dom::array itls, List(o, "itls", n, path, ln));
  ASSIGN_OR_RETURN(simdjson::dom::array input_lens, List(o, "input_lens", n, path, ln));
  ASSIGN_OR_RETURN(simdjson::dom::array output_lens, List(o, "output_lens", n, path, ln));
  simdjson::dom::array errors;
  const bool has_errors =
      o["errors"].get_array().get(errors) == simdjson::SUCCESS && errors.size() == n;
  r.requests.resize(n);
  for (size_t i = 0; i < n; ++i) {
    RequestRecord& q = r.requests[i];
    ASSIGN_OR_RETURN(q.ttft_s, SglangSeconds(ttfts.at(i), "ttfts", i, path, ln));
    if (input_lens.at(i).get_int64().get(q.input_tokens) != simdjson::SUCCESS ||
        q.input_tokens < 0 ||
        output_lens.at(i).get_int64().get(q.output_tokens) != simdjson::SUCCESS ||
        q.output_tokens < 0) {
      return SglangBad(path, ln,
                       fmt::format("\"input_lens\"[{0}] or \"output_lens\"[{0}] is not a "
                                   "non-negative integer",
                                   i));
    }
    simdjson::dom::array gaps;
    if (itls.at(i).get_array().get(gaps) != simdjson::SUCCESS) {
      return SglangBad(path, ln, fmt::format("\"itls\"[{}] is not a list of seconds", i));
    }
    double sum = 0;
    for (simdjson::dom::element g : gaps) {
      ASSIGN_OR_RETURN(double s, SglangSeconds(g, "itls", i, path, ln));
      q.itl_s.push_back(s);
      sum += s;
    }
    if (has_errors) {
      std::string_view err;
      if (errors.at(i).get_string().get(err) == simdjson::SUCCESS) q.error = std::string(err);
    }
    // SGLang writes output_lens 0 for a failed request (its error text may be empty).
    q.success = q.error.empty() && q.output_tokens > 0;
    if (!q.success && q.error.empty()) q.error = "failed (no output tokens)";
    q.latency_s = q.ttft_s + sum;
  }
  for (auto [key, value] : o) {
    double v = 0;
    if (value.get_double().get(v) != simdjson::SUCCESS) continue;
    const bool ms = key.size() > 3 && key.substr(key.size() - 3) == "_ms";
    // E2E and TPOT need the per-request latency, which the file does not hold.
    if (ms && key.find("e2e") == std::string_view::npos &&
        key.find("tpot") == std::string_view::npos) {
      r.reported[std::string(key)] = v;
    }
    if (key == "request_throughput" || key == "output_throughput") {
      r.reported[std::string(key)] = v;
    }
  }
  r.not_derived.push_back(
      "SGLang's results hold no per-request latency and no send times: E2EL here is TTFT + the "
      "sum of the ITL gaps (the last content chunk; SGLang's own latency also counts a final "
      "empty chunk), TPOT follows from it, the client's E2E and TPOT figures are not checked, "
      "and there is no steady state and no join to a trace by time");
  return r;
}

}  // namespace sightline
