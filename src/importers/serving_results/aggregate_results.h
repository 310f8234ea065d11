// Results that hold a benchmark's aggregates only: trtllm-bench's --report_json, vLLM's
// `--save-result` without `--save-detailed`, SGLang's bench_serving without `--output-details`
// (the forms people publish most). Sightline shows their figures as written and says what
// per-request records would add; nothing is recomputed from them.
#pragma once

#include <simdjson.h>

#include <string>

#include "importers/serving_results/request_results.h"

namespace sightline {

// Appends every finite number of `o` (nested objects as "group.key") to r.aggregates. A key (or
// group) ending in "_ms", and trtllm-bench's TTFT/TPOT percentile groups, are durations: kept in
// ns.
void AddNumericAggregates(simdjson::dom::object o, const std::string& group, RequestResults& r);

// Whether a results object states serving aggregates of vLLM's or SGLang's naming
// ("mean_ttft_ms", "request_throughput", ...).
bool HasServingAggregates(simdjson::dom::object o);

// An aggregates-only RequestResults from the top-level numbers of `o` (the duration from
// "duration" where it is there), with one note saying what per-request records would add and how
// to get them (`how`: "run vllm bench serve with --save-detailed").
RequestResults AggregateResultsOf(simdjson::dom::object o, const std::string& path,
                                  const std::string& format, const std::string& producer,
                                  const std::string& how);

}  // namespace sightline
