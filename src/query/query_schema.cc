#include "query/query_schema.h"

#include <fmt/format.h>

namespace sightline {
namespace {

constexpr const char* kInt = "INTEGER";
constexpr const char* kText = "TEXT";
constexpr const char* kReal = "REAL";
constexpr const char* kAny = "ANY";  // no affinity: an INTEGER, REAL or TEXT as stored

QueryColumnDef Input() { return {"input", kInt, "which input (0-based, as in `inputs`)"}; }

std::vector<QueryTableDef> MakeTables() {
  std::vector<QueryTableDef> t;
  t.push_back({"sightline_meta",
               "What the database is: schema_version, tool_version, built_from (the inputs)",
               {{"key", kText,
                 "schema_version, tool_version, built_from, left_out (the tables whose rows a "
                 "database built for one question left out, comma-separated)"},
                {"value", kText, "its value"}}});
  t.push_back({"inputs",
               "The traces the database was built from, one row each",
               {Input(),
                {"label", kText, "file name (and rank)"},
                {"path", kText, "the path as given"},
                {"format", kText, "nsys-sqlite, kineto-json, sightline-recording, ..."},
                {"format_version", kText, "the export's schema version"},
                {"producer", kText, "the program that wrote it"},
                {"rank", kInt, "distributed rank; NULL when unknown"}}});
  t.push_back(
      {"kernels",
       "GPU kernels, one row per execution (CUDA graph kernels included)",
       {Input(),
        {"id", kInt, "row of the kernel in its trace (start order)"},
        {"name", kText, "full demangled name"},
        {"short_name", kText, "display name"},
        {"category", kText, "GEMM, attention, communication, ... (docs/metrics.md)"},
        {"start_ns", kInt, "start on the trace's clock"},
        {"end_ns", kInt, "end"},
        {"dur_ns", kInt, "end_ns - start_ns"},
        {"device", kInt, "CUDA device id"},
        {"stream", kInt, "stream id"},
        {"pid", kInt, "launching process; -1 unknown"},
        {"launch_id", kInt, "the launching call's api_calls.id; NULL when not linked"},
        {"launch_tid", kInt, "the launching call's thread; NULL when not linked"},
        {"launch_ns", kInt, "the launching call's start; NULL when not linked"},
        {"correlation", kInt, "correlation id shared with the launch; -1 none"},
        {"grid_x", kInt, "grid size (0 unknown)"},
        {"grid_y", kInt, ""},
        {"grid_z", kInt, ""},
        {"block_x", kInt, "block size (0 unknown)"},
        {"block_y", kInt, ""},
        {"block_z", kInt, ""},
        {"registers_per_thread", kInt, "-1 unknown"},
        {"static_smem_bytes", kInt, "-1 unknown"},
        {"dynamic_smem_bytes", kInt, "-1 unknown"},
        {"graph_node", kInt, "CUDA graph node it ran from; 0 not from a graph or unknown"},
        {"capture_ns", kInt, "when its graph node was captured; NULL unknown"},
        {"capture_tid", kInt, "the capturing thread; NULL unknown"},
        {"capture_path", kText,
         "graph kernels: the ranges that say what it is, outermost first ('a > b'); NULL for "
         "other kernels"},
        {"capture_path_source", kText, "capture, aligned, reference or none (graph kernels)"}}});
  t.push_back({"api_calls",
               "Host CUDA runtime and driver calls (launches, synchronizations, copies, ...)",
               {Input(),
                {"id", kInt, "row in its trace (kernels.launch_id, memops.launch_id)"},
                {"name", kText, "without the version suffix: cudaLaunchKernel"},
                {"kind", kText, "runtime or driver"},
                {"class", kText, "launch, synchronize, memcpy, memset, alloc, graph, other"},
                {"start_ns", kInt, "start"},
                {"end_ns", kInt, "end"},
                {"dur_ns", kInt, "end_ns - start_ns"},
                {"pid", kInt, "process"},
                {"tid", kInt, "thread"},
                {"correlation", kInt, "-1 none"}}});
  t.push_back({"memops",
               "GPU memory operations: copies and sets",
               {Input(),
                {"id", kInt, "row in its trace"},
                {"kind", kText, "HtoD, DtoH, DtoD, HtoH, PtoP, memset, other"},
                {"start_ns", kInt, "start"},
                {"end_ns", kInt, "end"},
                {"dur_ns", kInt, "end_ns - start_ns"},
                {"device", kInt, "CUDA device id"},
                {"stream", kInt, "stream id"},
                {"pid", kInt, "process; -1 unknown"},
                {"size_bytes", kInt, "bytes copied or set"},
                {"src_kind", kText, "pageable, pinned, device, array, managed, unknown"},
                {"dst_kind", kText, "as src_kind (memset: the memory set)"},
                {"launch_id", kInt, "the launching call's api_calls.id; NULL when not linked"}}});
  t.push_back(
      {"ranges",
       "Host ranges: NVTX push/pop and start/end, PyTorch annotations, CPU ops, Python "
       "functions; with the GPU work each projects onto (docs/metrics.md, NVTX -> GPU projection)",
       {Input(),
        {"id", kInt, "row in its trace"},
        {"name", kText, "range name"},
        {"domain", kText, "NVTX domain; '' default"},
        {"kind", kText, "nvtx (push/pop), nvtx_startend, annotation, cpu_op, python"},
        {"start_ns", kInt, "start"},
        {"end_ns", kInt, "end"},
        {"dur_ns", kInt, "end_ns - start_ns (its CPU time)"},
        {"pid", kInt, "process"},
        {"tid", kInt, "thread"},
        {"depth", kInt, "nesting on its thread, 0 outermost"},
        {"parent_id", kInt, "enclosing range's id; NULL for an outermost range"},
        {"projected", kInt, "1: a range the NVTX projection considers (NVTX, annotations)"},
        {"projection_depth", kInt, "depth among projected ranges (the nvtx_projection's depth)"},
        {"gpu_kernels", kInt, "kernels launched (or captured) inside it, nested ranges included"},
        {"gpu_kernel_ns", kInt, "their summed durations"},
        {"gpu_memops", kInt, "memory operations launched inside it"},
        {"gpu_memop_ns", kInt, "their summed durations"},
        {"gpu_first_start_ns", kInt, "earliest GPU start of that work; NULL none"},
        {"gpu_last_end_ns", kInt, "latest GPU end of that work; NULL none"}}});
  t.push_back({"range_kernels",
               "Which kernels each projected range holds (its own and its nested ranges'), "
               "each kernel once per range",
               {Input(),
                {"range_id", kInt, "ranges.id"},
                {"kernel_id", kInt, "kernels.id"},
                {"point", kText,
                 "what put it there: launch (its launching call), capture (its graph node's "
                 "capture), aligned (its eager counterpart's launch)"}}});
  t.push_back({"iterations",
               "The steps of each loop found (docs/analyses/iterations.md); set_index 0 is the "
               "main set",
               {Input(),
                {"set_index", kInt, "0: the main set; then the other sets, then other loops"},
                {"id", kInt, "0-based step in its set"},
                {"number", kInt,
                 "the step's number from its name (iteration_14: 14), as iteration logs and "
                 "request logs count steps; NULL when the name has none"},
                {"name", kText, "the range's name (ProfilerStep#12)"},
                {"pid", kInt, "process"},
                {"tid", kInt, "thread of its ranges"},
                {"start_ns", kInt, "start"},
                {"end_ns", kInt, "end"},
                {"dur_ns", kInt, "wall time"},
                {"kernels", kInt, "kernels launched inside it"},
                {"kernel_ns", kInt, "their summed durations"},
                {"memops", kInt, "memory operations launched inside it"},
                {"gpu_busy_ns", kInt, "union of the launched work's intervals"},
                {"gpu_busy_in_window_ns", kInt, "union of all GPU work in [start, end)"},
                {"warmup", kInt, "1: a warm-up step"},
                {"outlier", kInt, "1: an outlier"},
                {"pattern", kText, "the set's name pattern"},
                {"method", kText, "how steps were found: ranges, graph replays, ..."}}});
  t.push_back(
      {"requests",
       "Serving requests, from serving results given as inputs (vLLM, SGLang, AIPerf, "
       "Sightline's request log; docs/analyses/serving.md); times on the client's clock",
       {{"file", kText, "the serving results file"},
        {"id", kText, "request id ('' when the source has none)"},
        {"success", kInt, "1: completed"},
        {"start_ns", kInt,
         "when it was sent, on the client's clock; NULL when the source has none"},
        {"ttft_ns", kInt, "time to first token"},
        {"latency_ns", kInt, "send to last token (E2EL)"},
        {"input_tokens", kInt, "prompt tokens"},
        {"output_tokens", kInt, "generated tokens"},
        {"queue_ns", kInt, "received to first scheduled; NULL unknown"},
        {"preemptions", kInt, "times it was preempted"},
        {"first_iteration", kInt, "the step it was first scheduled in (request log); NULL unknown"},
        {"first_token_iteration", kInt, "the step its first token came out of; NULL unknown"},
        {"last_iteration", kInt, "the last step it ran in; NULL unknown"},
        {"error", kText, "the error of a failed request"}}});
  t.push_back({"threads",
               "Host threads the trace names",
               {Input(),
                {"pid", kInt, "process"},
                {"tid", kInt, "thread"},
                {"name", kText, "thread name"},
                {"role", kText, "launching, profiler, other"}}});
  t.push_back({"processes",
               "Processes of the trace",
               {Input(), {"pid", kInt, "process id"}, {"name", kText, "process name"}}});
  t.push_back({"devices",
               "GPUs of the trace",
               {Input(),
                {"id", kInt, "CUDA device id"},
                {"name", kText, "NVIDIA H100 80GB HBM3, ..."},
                {"sm_count", kInt, "0 unknown"},
                {"cc_major", kInt, "compute capability"},
                {"cc_minor", kInt, ""},
                {"total_memory_bytes", kInt, "0 unknown"},
                {"l2_cache_bytes", kInt, "0 unknown"},
                {"memory_bandwidth_bytes_per_s", kInt, "0 unknown"},
                {"clock_rate_hz", kInt, "0 unknown"}}});
  t.push_back({"gpu_metrics",
               "Sampled GPU metrics (nsys --gpu-metrics-devices, sightline record "
               "--gpu-metrics); a sample holds until the next of its metric and device",
               {Input(),
                {"device", kInt, "CUDA device id"},
                {"metric", kText, "the metric with its unit: 'SMs Active [Throughput %]'"},
                {"time_ns", kInt, "sample time"},
                {"value", kReal, "value"}}});
  t.push_back({"memory_events",
               "GPU memory allocations (+) and frees (-)",
               {Input(),
                {"time_ns", kInt, "time"},
                {"device", kInt, "CUDA device id"},
                {"pid", kInt, "process"},
                {"tid", kInt, "allocating thread; -1 unknown"},
                {"bytes", kInt, "signed: + allocated, - freed"},
                {"address", kInt, "address (as a signed 64-bit integer)"},
                {"kind", kText, "device, pinned, managed, ..."},
                {"name", kText, "static allocation's symbol or call site; '' none"},
                {"total_allocated_bytes", kInt, "allocator's total after it; NULL unknown"},
                {"total_reserved_bytes", kInt, "allocator's reserved after it; NULL unknown"},
                {"source", kText, "library that asked for it; '' unknown"}}});
  t.push_back(
      {"report_facts",
       "Every fact of every report section (the numbers `sightline analyze` states)",
       {Input(),
        {"section", kText, "section key: overview, kernel_summary, ..."},
        {"key", kText, "fact key; the unit is in its suffix (_ns, _pct, _bytes)"},
        {"label", kText, "as the report shows it"},
        {"value", kAny, "the value (an INTEGER, REAL or TEXT)"},
        {"unit", kText, "ns, timestamp_ns, bytes, percent, count, GB/s, ratio, number, text"}}});
  t.push_back({"report_tables",
               "The report's tables, each an SQL table of its own named SECTION__TABLE",
               {Input(),
                {"section", kText, "section key"},
                {"table_key", kText, "table key in the report"},
                {"sql_table", kText, "the SQL table holding its rows (with input and row columns)"},
                {"title", kText, "as the report shows it"},
                {"rows", kInt, "rows kept"},
                {"total_rows", kInt, "rows before the report kept its top rows; NULL when all"}}});
  t.push_back({"report_columns",
               "The columns of each report table with their units",
               {{"sql_table", kText, "report_tables.sql_table"},
                {"column", kText, "column name"},
                {"title", kText, "as the report shows it"},
                {"unit", kText, "as in report_facts"}}});
  t.push_back({"findings",
               "The findings (ranked advice) of the report, in report order",
               {Input(),
                {"rank", kInt, "0-based position in the report (largest savings first)"},
                {"id", kText, "rule id: launch_bound, ..."},
                {"severity", kText, "low, medium, high"},
                {"title", kText, "one line"},
                {"location", kText, "where in the trace"},
                {"recommendation", kText, "the fix"},
                {"estimated_savings_ns", kInt, "the estimate the ranking uses"}}});
  t.push_back({"finding_evidence",
               "The evidence (numbers) of each finding",
               {{"rank", kInt, "findings.rank"},
                {"key", kText, "evidence key; the unit is in its suffix"},
                {"value", kAny, "the value (an INTEGER, REAL or TEXT)"}}});
  return t;
}

}  // namespace

const std::vector<QueryTableDef>& QueryTables() {
  static const std::vector<QueryTableDef> tables = MakeTables();
  return tables;
}

const QueryTableDef* FindQueryTable(std::string_view name) {
  for (const QueryTableDef& t : QueryTables()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

std::string QuerySchemaMarkdown() {
  std::string out;
  for (const QueryTableDef& t : QueryTables()) {
    out += fmt::format("### `{}`\n\n{}.\n\n| column | type | meaning |\n|---|---|---|\n", t.name,
                       t.doc);
    for (const QueryColumnDef& c : t.columns) {
      out += fmt::format("| `{}` | {} | {} |\n", c.name, c.type, c.doc);
    }
    out += "\n";
  }
  return out;
}

std::string QuoteSqlName(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string CreateTableSql(const QueryTableDef& table) {
  std::string sql = fmt::format("CREATE TABLE {} (", QuoteSqlName(table.name));
  for (size_t i = 0; i < table.columns.size(); ++i) {
    // ANY: declared without a type, so SQLite keeps each value as stored (no affinity).
    const std::string_view type = table.columns[i].type;
    sql += fmt::format("{}{}{}{}", i ? ", " : "", QuoteSqlName(table.columns[i].name),
                       type == kAny ? "" : " ", type == kAny ? "" : type);
  }
  sql += ")";
  return sql;
}

std::string InsertSql(const QueryTableDef& table) {
  std::string sql = fmt::format("INSERT INTO {} VALUES (", QuoteSqlName(table.name));
  for (size_t i = 0; i < table.columns.size(); ++i)
    sql += fmt::format("{}?{}", i ? ", " : "", i + 1);
  sql += ")";
  return sql;
}

}  // namespace sightline
