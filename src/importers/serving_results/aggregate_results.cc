#include "importers/serving_results/aggregate_results.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "base/strings.h"

namespace sightline {
namespace {

// How a key's figure reads: the tools name units in the key ("_ms", "_tok_s", "_req_s").
Unit UnitOfKey(std::string_view group, std::string_view key) {
  if (EndsWith(key, "_ms") || EndsWith(group, "_ms") ||
      group.find("ttft_percentiles") != group.npos ||
      group.find("tpot_percentiles") != group.npos) {
    return Unit::kDurationNs;
  }
  return Unit::kNumber;
}

}  // namespace

namespace {

// Appends the finite numbers of `o`; nested objects as "group.key" when `nested`, else skipped.
void AddNumbers(simdjson::dom::object o, const std::string& group, bool nested, RequestResults& r) {
  for (auto [key, value] : o) {
    simdjson::dom::object inner;
    if (value.get_object().get(inner) == simdjson::SUCCESS) {
      if (nested) {
        AddNumbers(inner, group.empty() ? std::string(key) : group + "." + std::string(key), nested,
                   r);
      }
      continue;
    }
    double v = 0;
    if (value.type() == simdjson::dom::element_type::BOOL) continue;
    if (value.get_double().get(v) != simdjson::SUCCESS || !std::isfinite(v)) continue;
    RequestResults::Aggregate& a = r.aggregates.emplace_back();
    a.group = group;
    a.name = std::string(key);
    a.unit = UnitOfKey(group, key);
    a.value = a.unit == Unit::kDurationNs ? v * 1e6 : v;  // ms -> ns
  }
}

}  // namespace

void AddNumericAggregates(simdjson::dom::object o, const std::string& group, RequestResults& r) {
  AddNumbers(o, group, /*nested=*/true, r);
}

bool HasServingAggregates(simdjson::dom::object o) {
  for (const char* key : {"mean_ttft_ms", "median_ttft_ms", "mean_e2e_latency_ms",
                          "request_throughput", "output_throughput", "mean_tpot_ms"}) {
    double v = 0;
    if (o[key].get_double().get(v) == simdjson::SUCCESS) return true;
  }
  return false;
}

RequestResults AggregateResultsOf(simdjson::dom::object o, const std::string& path,
                                  const std::string& format, const std::string& producer,
                                  const std::string& how) {
  RequestResults r;
  r.path = path;
  r.format = format;
  r.producer = producer;
  r.aggregates_only = true;
  r.has_start_times = false;
  double duration = 0;
  if (o["duration"].get_double().get(duration) == simdjson::SUCCESS && std::isfinite(duration) &&
      duration > 0) {
    r.duration_s = duration;
  }
  // Top-level numbers only: nested objects (SGLang's server_info) are configuration, not figures.
  AddNumbers(o, "", /*nested=*/false, r);
  r.not_derived.push_back(fmt::format(
      "this file holds the benchmark's aggregates only, shown as written: per-request records "
      "would add every percentile and the spread of TTFT, TPOT, ITL and E2E latency, goodput "
      "under any SLO, the steady state, the CDFs, a check of each figure and the join to a "
      "trace; {}",
      how));
  return r;
}

}  // namespace sightline
