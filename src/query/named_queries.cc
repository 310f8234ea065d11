#include "query/named_queries.h"

namespace sightline {

const std::vector<NamedQuery>& NamedQueries() {
  static const std::vector<NamedQuery> queries = {
      {"kernel_summary",
       "Kernel time per name, as nsys's cuda_gpu_kern_sum and the report's kernel table count it",
       "input: which input (all)",
       R"(SELECT short_name AS name, category, count(*) AS instances, sum(dur_ns) AS total_ns,
       round(100.0 * sum(dur_ns) / sum(sum(dur_ns)) OVER (), 2) AS time_pct,
       CAST(round(avg(dur_ns)) AS INTEGER) AS avg_ns, min(dur_ns) AS min_ns, max(dur_ns) AS max_ns
FROM kernels
WHERE :input IS NULL OR input = :input
GROUP BY name, category
ORDER BY total_ns DESC)"},
      {"layer_category_share",
       "Per range (layer) name: the kernel time launched inside it by kernel category and each "
       "category's share",
       "range: a GLOB pattern of range names (all); input: which input (all)",
       R"(SELECT r.name AS range, k.category, count(*) AS kernels, sum(k.dur_ns) AS kernel_ns,
       round(100.0 * sum(k.dur_ns) / sum(sum(k.dur_ns)) OVER (PARTITION BY r.name), 2)
         AS share_pct
FROM range_kernels rk
JOIN ranges r ON r.input = rk.input AND r.id = rk.range_id
JOIN kernels k ON k.input = rk.input AND k.id = rk.kernel_id
WHERE (:range IS NULL OR r.name GLOB :range) AND (:input IS NULL OR rk.input = :input)
GROUP BY r.name, k.category
ORDER BY r.name, kernel_ns DESC)"},
      {"slowest_iterations",
       "The N slowest steps of the main loop (warm-up left out) and the GPU's idle gaps in each, "
       "with the host calls that ran during each gap",
       "n: how many steps (5); min_gap_ns: the shortest gap shown (10000)",
       R"(WITH slow AS (
  SELECT input, id, name, start_ns, end_ns, dur_ns FROM iterations
  WHERE set_index = 0 AND warmup = 0 ORDER BY dur_ns DESC LIMIT coalesce(:n, 5)),
work AS (
  SELECT s.input, s.id AS iteration, k.device, max(k.start_ns, s.start_ns) AS start_ns,
         min(k.end_ns, s.end_ns) AS end_ns
  FROM slow s JOIN kernels k ON k.input = s.input AND k.start_ns < s.end_ns
   AND k.start_ns >= s.start_ns - (SELECT max(dur_ns) FROM kernels) AND k.end_ns > s.start_ns
  UNION ALL
  SELECT s.input, s.id, m.device, max(m.start_ns, s.start_ns), min(m.end_ns, s.end_ns)
  FROM slow s JOIN memops m ON m.input = s.input AND m.start_ns < s.end_ns
   AND m.end_ns > s.start_ns),
ordered AS (
  SELECT *, max(end_ns) OVER (PARTITION BY input, iteration, device ORDER BY start_ns
                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM work),
gaps AS (
  SELECT input, iteration, device, prev_end AS gap_start_ns, start_ns AS gap_end_ns
  FROM ordered WHERE start_ns - prev_end >= coalesce(:min_gap_ns, 10000)),
calls AS (
  SELECT g.input, g.iteration, g.device, g.gap_start_ns, a.name, count(*) AS n,
         sum(min(a.end_ns, g.gap_end_ns) - max(a.start_ns, g.gap_start_ns)) AS t
  FROM gaps g JOIN api_calls a ON a.input = g.input AND a.start_ns < g.gap_end_ns
   AND a.start_ns >= g.gap_start_ns - (SELECT max(dur_ns) FROM api_calls)
   AND a.end_ns > g.gap_start_ns
  GROUP BY g.input, g.iteration, g.device, g.gap_start_ns, a.name),
ranked AS (
  SELECT *, row_number() OVER (PARTITION BY input, iteration, device, gap_start_ns
                               ORDER BY t DESC, name) AS place
  FROM calls)
SELECT s.id AS iteration, s.name, s.dur_ns, g.device, g.gap_start_ns,
       g.gap_end_ns - g.gap_start_ns AS gap_ns,
       (SELECT group_concat(c.name || ' x' || c.n, ', ') FROM ranked c
        WHERE c.input = g.input AND c.iteration = g.iteration AND c.device = g.device
          AND c.gap_start_ns = g.gap_start_ns AND c.place <= 3) AS host_calls_in_gap
FROM slow s JOIN gaps g ON g.input = s.input AND g.iteration = s.id
ORDER BY s.dur_ns DESC, s.id, gap_ns DESC)"},
      {"graph_kernels_by_capture_range",
       "Kernels replayed from CUDA graphs grouped by the ranges open when they were captured "
       "(their capture path), with their time and share",
       "input: which input (all)",
       R"(SELECT coalesce(capture_path, '(none)') AS capture_path,
       capture_path_source AS source, count(*) AS kernels, count(DISTINCT short_name) AS names,
       sum(dur_ns) AS kernel_ns,
       round(100.0 * sum(dur_ns) / sum(sum(dur_ns)) OVER (), 2) AS share_pct
FROM kernels
WHERE capture_path_source IS NOT NULL AND (:input IS NULL OR input = :input)
GROUP BY capture_path, capture_path_source
ORDER BY kernel_ns DESC)"},
      {"slow_ttft_requests",
       "Serving requests whose time to first token exceeded an SLO, slowest first, with the "
       "steps of the trace they ran in from their first scheduling to their first token (joined "
       "by step number: a request log and iterations named with their number)",
       "slo_ms: the TTFT objective in ms (1000)",
       R"(SELECT q.id AS request, q.ttft_ns, q.queue_ns, q.input_tokens,
       q.first_iteration AS scheduled_in, q.first_token_iteration AS first_token_in,
       count(i.number) AS steps, sum(i.dur_ns) AS steps_wall_ns,
       sum(i.kernel_ns) AS steps_kernel_ns, group_concat(i.number, ' ') AS step_numbers
FROM requests q
LEFT JOIN iterations i ON i.set_index = 0
  AND i.number BETWEEN q.first_iteration AND q.first_token_iteration
WHERE q.ttft_ns > coalesce(:slo_ms, 1000) * 1000000
GROUP BY q.rowid
ORDER BY q.ttft_ns DESC)"},
      {"kernels_between_iterations",
       "The kernels that started between the start of step FROM and the end of step TO of the "
       "main loop",
       "from: first step (0); to: last step (from); input: which input (0)",
       R"(WITH w AS (
  SELECT input, min(start_ns) AS a, max(end_ns) AS b FROM iterations
  WHERE set_index = 0 AND input = coalesce(:input, 0)
    AND id BETWEEN coalesce(:from, 0) AND coalesce(:to, :from, 0))
SELECT k.id, k.short_name AS name, k.category, k.device, k.stream, k.start_ns, k.dur_ns
FROM w JOIN kernels k ON k.input = w.input AND k.start_ns >= w.a AND k.start_ns < w.b
ORDER BY k.start_ns)"},
  };
  return queries;
}

const NamedQuery* FindNamedQuery(std::string_view name) {
  for (const NamedQuery& q : NamedQueries()) {
    if (name == q.name) return &q;
  }
  return nullptr;
}

}  // namespace sightline
