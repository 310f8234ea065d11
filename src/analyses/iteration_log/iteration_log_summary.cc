#include "analyses/iteration_log/iteration_log_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "analyses/iteration_log/iteration_log_join.h"
#include "base/stats.h"

namespace sightline {

void AddIterationLogSummary(const IterationLog& log, Report& report) {
  ReportInput& input = report.inputs.emplace_back();
  input.label = std::filesystem::path(log.path).filename().string();
  input.path = log.path;
  input.format = log.format;

  Section& s = report.AddSection("iteration_log", "Iteration log",
                                 static_cast<int>(report.inputs.size()) - 1);
  if (log.format != "sightline")
    s.AddFact("iteration_log_format", "Iteration log format", log.format);
  s.AddFact("iteration_log_lines", "Iteration log lines", static_cast<int64_t>(log.entries.size()),
            Unit::kCount);
  if (log.skipped_lines > 0) {
    s.AddFact("iteration_log_other_lines", "Other lines in the log (skipped)", log.skipped_lines,
              Unit::kCount);
  }
  if (!log.entries.empty()) {
    const auto [lo, hi] =
        std::minmax_element(log.entries.begin(), log.entries.end(),
                            [](const IterationLogEntry& a, const IterationLogEntry& b) {
                              return a.iteration < b.iteration;
                            });
    s.AddFact("iterations_first", "First iteration", lo->iteration, Unit::kNumber);
    s.AddFact("iterations_last", "Last iteration", hi->iteration, Unit::kNumber);
  }
  std::set<std::pair<int64_t, int64_t>> processes;
  for (const IterationLogEntry& e : log.entries) processes.insert({e.rank, e.pid});
  if (processes.size() > 1) {
    s.AddFact("iteration_log_processes", "Processes (rank, pid) in the log",
              static_cast<int64_t>(processes.size()), Unit::kCount);
  }

  // Latency: the log's own per-iteration figure; a line without one is counted, not guessed.
  std::vector<int64_t> latency, prefill, decode;
  int64_t tokens = 0, token_latency = 0;
  bool have_tokens = false, tokens_overflow = false;
  for (const IterationLogEntry& e : log.entries) {
    if (e.latency_ns <= 0) continue;
    latency.push_back(e.latency_ns);
    const auto& ctx = e.field(IterationLogField::kContextRequests);
    if (ctx) (*ctx > 0 ? prefill : decode).push_back(e.latency_ns);
    const auto& t = e.field(IterationLogField::kGeneratedTokens);
    if (t && *t >= 0) {
      have_tokens = true;
      if (tokens > std::numeric_limits<int64_t>::max() - *t ||
          token_latency > std::numeric_limits<int64_t>::max() - e.latency_ns) {
        tokens_overflow = true;
      } else {
        tokens += *t;
        token_latency += e.latency_ns;
      }
    }
  }
  const int64_t without_latency = static_cast<int64_t>(log.entries.size() - latency.size());
  if (!latency.empty()) {
    const DurationStats st = ComputeDurationStats(latency);
    s.AddFact("latency_median_ns", "Iteration latency median", st.median, Unit::kDurationNs);
    s.AddFact("latency_p90_ns", "Iteration latency p90", st.p90, Unit::kDurationNs);
    s.AddFact("latency_p99_ns", "Iteration latency p99", st.p99, Unit::kDurationNs);
    s.AddFact("latency_max_ns", "Iteration latency max", st.max, Unit::kDurationNs);
  }
  if (without_latency > 0) {
    s.AddFact("lines_without_latency", "Lines without a latency", without_latency, Unit::kCount);
  }
  if (have_tokens && !tokens_overflow && token_latency > 0) {
    s.AddFact("generated_tokens_per_s", "Generated tokens/s (log, over iteration latency)",
              static_cast<double>(tokens) * 1e9 / static_cast<double>(token_latency),
              Unit::kNumber);
  } else if (tokens_overflow) {
    s.notes.push_back(
        "generated tokens/s left out: the log's token counts or latencies overflow a 64-bit sum");
  }
  if (!prefill.empty() || !decode.empty()) {
    s.AddFact("iterations_with_context", "Iterations with context (prefill) work",
              static_cast<int64_t>(prefill.size()), Unit::kCount);
    Table& t = s.AddTable("prefill_vs_decode", "Iterations with prefill work against decode-only",
                          {{"kind", "iterations", Unit::kText},
                           {"count", "count", Unit::kCount},
                           {"latency_median_ns", "latency median", Unit::kDurationNs}});
    for (const auto& [name, g] :
         {std::pair<const char*, const std::vector<int64_t>*>{"with context", &prefill},
          {"decode only", &decode}}) {
      if (g->empty()) continue;
      t.rows.push_back({std::string(name), static_cast<int64_t>(g->size()), Median(*g)});
    }
    t.note = "from the log's context-request count and latency per iteration";
  }

  // Each well-known counter over the lines that state it: counts, then memory (in bytes).
  for (const auto& [unit, key, title] :
       {std::tuple<Unit, const char*, const char*>{Unit::kCount, "iteration_log_counters",
                                                   "Counters in the log"},
        {Unit::kBytes, "iteration_log_memory", "Memory in the log"}}) {
    Table& t = s.AddTable(key, title,
                          {{"field", "field", Unit::kText},
                           {"title", "as column", Unit::kText},
                           {"lines", "lines", Unit::kCount},
                           {"median", "median", unit},
                           {"max", "max", unit}});
    for (const IterationLogFieldColumn& c : IterationLogFieldColumns()) {
      if (c.unit != unit) continue;
      std::vector<int64_t> values;
      for (const IterationLogEntry& e : log.entries) {
        if (const auto& v = e.field(c.field)) values.push_back(*v);
      }
      if (values.empty()) continue;
      const int64_t max = *std::max_element(values.begin(), values.end());
      t.rows.push_back({std::string(IterationLogFieldKey(c.field)), std::string(c.title),
                        static_cast<int64_t>(values.size()), Median(values), max});
    }
    if (t.rows.empty()) s.tables.pop_back();
  }

  s.notes.push_back(fmt::format(
      "only the log was given: these are its own figures. Give the trace of the same run too "
      "(`sightline analyze TRACE {}`) to join each iteration to the GPU's work: wall and GPU busy "
      "time, kernels, launch overhead and idle gaps per iteration",
      input.label));
}

}  // namespace sightline
