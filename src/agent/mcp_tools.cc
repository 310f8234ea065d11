#include "agent/mcp_tools.h"

#include <fmt/format.h>

#include "base/json_writer.h"
#include "pipeline/pipeline.h"
#include "query/named_queries.h"
#include "query/query_inputs.h"
#include "report/report_schema.h"
#include "report/value_format.h"

namespace sightline {
namespace {

constexpr size_t kMaxRuns = 16;

const char kTools[] = R"json([
{"name":"analyze","description":"Analyse a run: one or more traces (nsys SQLite export, PyTorch profiler JSON, sightline recording; several are ranks) or a database saved by `sightline query --save`. Returns the run id the other tools take, its inputs, its report's sections and tables, the overview's facts and how many findings there are.","inputSchema":{"type":"object","properties":{"inputs":{"type":"array","items":{"type":"string"},"description":"paths of the run's files"},"iterations":{"type":"string","description":"regex naming the iteration ranges (optional)"}},"required":["inputs"]}},
{"name":"findings","description":"The run's findings (ranked advice), largest estimated savings first, each with its evidence; every number carries its source.","inputSchema":{"type":"object","properties":{"run":{"type":"string","description":"run id from analyze (default: the last run)"},"max":{"type":"integer","description":"findings at most (default 20)"}}}},
{"name":"table","description":"Read a report section: without `table`, its facts and the list of its tables; with `table`, that table's rows (each with its source: section, table, row).","inputSchema":{"type":"object","properties":{"run":{"type":"string"},"section":{"type":"string","description":"section key: overview, kernel_summary, api_summary, iterations, nvtx_projection, idle_gaps, ..."},"table":{"type":"string","description":"table key within the section"},"max_rows":{"type":"integer","description":"rows at most (default 50)"}},"required":["section"]}},
{"name":"query","description":"Run read-only SQL over the run's query database: kernels, api_calls, memops, ranges, range_kernels, iterations, requests, threads, processes, devices, gpu_metrics, memory_events, report_facts, report_tables, findings and each report table as SECTION__TABLE (docs/query.md). Nanoseconds are integers. Bounded: 10 s, max_rows rows.","inputSchema":{"type":"object","properties":{"run":{"type":"string"},"sql":{"type":"string","description":"one SELECT/WITH statement, or @NAME for a saved question"},"params":{"type":"object","description":"values of the statement's :NAME parameters"},"max_rows":{"type":"integer","description":"rows at most (default 200)"}},"required":["sql"]}},
{"name":"diff","description":"Compare two runs (baseline and candidate traces): the diff report's sections (per-kernel and per-range deltas, the verdict) with sources.","inputSchema":{"type":"object","properties":{"baseline":{"type":"string"},"candidate":{"type":"string"},"max_rows":{"type":"integer","description":"rows per table at most (default 20)"}},"required":["baseline","candidate"]}},
{"name":"explain_finding","description":"One finding in full: what it found, where, its evidence with sources, the recommended fix and where the rule is documented.","inputSchema":{"type":"object","properties":{"run":{"type":"string"},"rank":{"type":"integer","description":"position in the findings list (0 = largest savings)"},"id":{"type":"string","description":"rule id (the first finding of that rule)"}}}}
])json";

std::string Text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  return "";
}

Status ArgError(std::string_view tool, std::string what) {
  return InvalidArgumentError(fmt::format("{}: {}", tool, what));
}

// Optional string argument; an error when present but not a string.
StatusOr<std::string> StringArg(simdjson::dom::element args, const char* key, std::string_view tool,
                                bool required) {
  simdjson::dom::element e;
  if (args[key].get(e) != simdjson::SUCCESS) {
    if (required) return ArgError(tool, fmt::format("argument `{}` is required", key));
    return std::string();
  }
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS)
    return ArgError(tool, fmt::format("`{}` must be a string", key));
  return std::string(s);
}

StatusOr<int64_t> IntArg(simdjson::dom::element args, const char* key, std::string_view tool,
                         int64_t fallback, int64_t lo, int64_t hi) {
  simdjson::dom::element e;
  if (args[key].get(e) != simdjson::SUCCESS) return fallback;
  int64_t v = 0;
  if (e.get(v) != simdjson::SUCCESS || v < lo || v > hi) {
    return ArgError(tool, fmt::format("`{}` must be an integer from {} to {}", key, lo, hi));
  }
  return v;
}

StatusOr<McpRun*> RunArg(McpRuns& runs, simdjson::dom::element args, std::string_view tool) {
  ASSIGN_OR_RETURN(std::string id, StringArg(args, "run", tool, false));
  if (runs.runs.empty()) {
    return InvalidInputError("no run analysed yet: call `analyze` with the run's files first");
  }
  if (id.empty()) return runs.runs.back().get();
  for (auto& r : runs.runs) {
    if (r->id == id) return r.get();
  }
  std::string ids;
  for (auto& r : runs.runs) ids += (ids.empty() ? "" : ", ") + r->id;
  return NotFoundError(fmt::format("no run {}; the runs are: {}", id, ids));
}

StatusOr<QueryResult> Sql(const McpRun& run, const std::string& sql, int64_t max_rows = 100000,
                          const QueryParams& params = {}) {
  QueryLimits limits;
  limits.max_rows = max_rows;
  return run.db.Run(sql, limits, params);
}

// Rows as objects; `source(row)` names where each row is.
template <typename SourceFn>
void WriteRows(JsonWriter& w, const QueryResult& r, SourceFn source) {
  w.BeginArray();
  for (size_t i = 0; i < r.rows.size(); ++i) {
    w.BeginObject();
    for (size_t c = 0; c < r.columns.size(); ++c) {
      w.Key(r.columns[c]);
      WriteJsonValue(w, r.rows[i][c]);
    }
    w.Key("source").String(source(i));
    w.EndObject();
  }
  w.EndArray();
}

std::string FactSource(const std::string& section, const Value& input, const std::string& key) {
  return std::holds_alternative<int64_t>(input)
             ? fmt::format("section {} (input {}), fact {}", section, Text(input), key)
             : fmt::format("section {}, fact {}", section, key);
}

StatusOr<std::string> Analyze(McpRuns& runs, simdjson::dom::element args) {
  simdjson::dom::array inputs;
  if (args["inputs"].get(inputs) != simdjson::SUCCESS) {
    return ArgError("analyze", "argument `inputs` (an array of paths) is required");
  }
  std::vector<std::string> paths;
  for (simdjson::dom::element e : inputs) {
    std::string_view s;
    if (e.get(s) != simdjson::SUCCESS) return ArgError("analyze", "`inputs` must hold strings");
    paths.emplace_back(s);
  }
  ASSIGN_OR_RETURN(std::string iterations, StringArg(args, "iterations", "analyze", false));
  AnalyzeOptions options;
  options.top_n = 1000;
  options.iterations_regex = iterations;
  auto run = std::make_unique<McpRun>();
  run->paths = paths;
  ASSIGN_OR_RETURN(run->db, OpenQueryInputs(paths, options, ""));
  if (runs.runs.size() >= kMaxRuns) runs.runs.erase(runs.runs.begin());
  static int next = 0;
  run->id = fmt::format("run{}", ++next);
  McpRun& r = *runs.runs.emplace_back(std::move(run));
  JsonWriter w(0);
  w.BeginObject().Key("run").String(r.id).Key("inputs");
  ASSIGN_OR_RETURN(QueryResult in,
                   Sql(r, "SELECT input, label, format, producer, rank FROM inputs"));
  WriteRows(w, in, [](size_t i) { return fmt::format("inputs, row {}", i); });
  ASSIGN_OR_RETURN(QueryResult tables,
                   Sql(r,
                       "SELECT section, group_concat(table_key, ', ') FROM report_tables "
                       "GROUP BY section ORDER BY min(rowid)"));
  w.Key("sections").BeginArray();
  for (const auto& row : tables.rows) {
    w.BeginObject().Key("section").String(Text(row[0])).Key("tables").String(Text(row[1]));
    w.EndObject();
  }
  w.EndArray().Key("overview").BeginArray();
  ASSIGN_OR_RETURN(QueryResult facts,
                   Sql(r,
                       "SELECT section, input, key, label, value, unit FROM report_facts "
                       "WHERE section = 'overview'"));
  for (const auto& row : facts.rows) {
    w.BeginObject().Key("key").String(Text(row[2])).Key("label").String(Text(row[3]));
    w.Key("value");
    WriteJsonValue(w, row[4]);
    w.Key("unit").String(Text(row[5]));
    w.Key("source").String(FactSource(Text(row[0]), row[1], Text(row[2]))).EndObject();
  }
  ASSIGN_OR_RETURN(QueryResult count, Sql(r, "SELECT count(*) FROM findings"));
  w.EndArray().Key("findings").Int(std::get<int64_t>(count.rows[0][0]));
  w.Key("next").String(
      "call `findings` for the ranked advice, `table` with a section for its facts and tables, "
      "`query` for questions the report does not answer");
  w.EndObject();
  return w.Take();
}

void WriteFinding(JsonWriter& w, const McpRun& run, const std::vector<Value>& row,
                  const QueryResult& evidence, bool full) {
  // row: rank, id, severity, title, location, recommendation, estimated_savings_ns, input
  const std::string rank = Text(row[0]), id = Text(row[1]);
  const std::string where = fmt::format("finding {} ({})", rank, id);
  w.BeginObject().Key("rank");
  WriteJsonValue(w, row[0]);
  w.Key("id").String(id).Key("severity").String(Text(row[2])).Key("title").String(Text(row[3]));
  w.Key("where").String(Text(row[4]));
  w.Key("estimated_savings_ns");
  WriteJsonValue(w, row[6]);
  w.Key("estimated_savings_source").String(where + ", estimated_savings_ns");
  if (full) {
    w.Key("recommendation").String(Text(row[5]));
    w.Key("documented").String(fmt::format("docs/analyses/findings.md (rule {})", id));
  }
  w.Key("evidence").BeginArray();
  for (const auto& e : evidence.rows) {
    if (Text(e[0]) != rank) continue;
    w.BeginObject().Key("key").String(Text(e[1])).Key("value");
    WriteJsonValue(w, e[2]);
    w.Key("source").String(fmt::format("{}, evidence {}", where, Text(e[1]))).EndObject();
  }
  w.EndArray().EndObject();
  (void)run;
}

StatusOr<std::string> Findings(McpRuns& runs, simdjson::dom::element args, bool explain) {
  const char* tool = explain ? "explain_finding" : "findings";
  ASSIGN_OR_RETURN(McpRun * run, RunArg(runs, args, tool));
  ASSIGN_OR_RETURN(int64_t max, IntArg(args, "max", tool, 20, 1, 1000));
  ASSIGN_OR_RETURN(int64_t rank, IntArg(args, "rank", tool, -1, 0, 1 << 30));
  ASSIGN_OR_RETURN(std::string id, StringArg(args, "id", tool, false));
  std::string sql =
      "SELECT rank, id, severity, title, location, recommendation, estimated_savings_ns, input "
      "FROM findings";
  QueryParams params;
  if (explain) {
    if (rank < 0 && id.empty()) return ArgError(tool, "give `rank` or `id`");
    sql += rank >= 0 ? " WHERE rank = :rank" : " WHERE id = :id";
    params.emplace_back(rank >= 0 ? "rank" : "id", rank >= 0 ? std::to_string(rank) : id);
    max = 1;
  }
  sql += " ORDER BY rank";
  ASSIGN_OR_RETURN(QueryResult found, Sql(*run, sql, max, params));
  ASSIGN_OR_RETURN(QueryResult evidence,
                   Sql(*run, "SELECT rank, key, value FROM finding_evidence ORDER BY rowid"));
  if (explain && found.rows.empty()) {
    return NotFoundError(rank >= 0 ? fmt::format("no finding at rank {}", rank)
                                   : fmt::format("no finding of rule {}", id));
  }
  JsonWriter w(0);
  w.BeginObject().Key("run").String(run->id);
  if (explain) {
    w.Key("finding");
    WriteFinding(w, *run, found.rows[0], evidence, true);
  } else {
    w.Key("findings").BeginArray();
    for (const auto& row : found.rows) WriteFinding(w, *run, row, evidence, false);
    w.EndArray().Key("truncated").Bool(found.truncated);
  }
  w.EndObject();
  return w.Take();
}

StatusOr<std::string> ReadTable(McpRuns& runs, simdjson::dom::element args) {
  ASSIGN_OR_RETURN(McpRun * run, RunArg(runs, args, "table"));
  ASSIGN_OR_RETURN(std::string section, StringArg(args, "section", "table", true));
  ASSIGN_OR_RETURN(std::string table, StringArg(args, "table", "table", false));
  ASSIGN_OR_RETURN(int64_t max_rows, IntArg(args, "max_rows", "table", 50, 1, 100000));
  JsonWriter w(0);
  w.BeginObject().Key("run").String(run->id).Key("section").String(section);
  if (table.empty()) {
    ASSIGN_OR_RETURN(QueryResult facts, Sql(*run,
                                            "SELECT input, key, label, value, unit FROM "
                                            "report_facts WHERE section = :s ORDER BY rowid",
                                            100000, {{"s", section}}));
    ASSIGN_OR_RETURN(QueryResult tables, Sql(*run,
                                             "SELECT input, table_key, title, rows, total_rows "
                                             "FROM report_tables WHERE section = :s",
                                             100000, {{"s", section}}));
    if (facts.rows.empty() && tables.rows.empty()) {
      ASSIGN_OR_RETURN(QueryResult all, Sql(*run, "SELECT DISTINCT section FROM report_facts"));
      std::string names;
      for (const auto& row : all.rows) names += (names.empty() ? "" : ", ") + Text(row[0]);
      return NotFoundError(fmt::format("no section {}; the sections are: {}", section, names));
    }
    w.Key("facts").BeginArray();
    for (const auto& row : facts.rows) {
      w.BeginObject().Key("key").String(Text(row[1])).Key("label").String(Text(row[2]));
      w.Key("value");
      WriteJsonValue(w, row[3]);
      w.Key("unit").String(Text(row[4]));
      w.Key("source").String(FactSource(section, row[0], Text(row[1]))).EndObject();
    }
    w.EndArray().Key("tables");
    WriteRows(w, tables, [](size_t) { return std::string("report_tables"); });
  } else {
    ASSIGN_OR_RETURN(QueryResult where, Sql(*run,
                                            "SELECT sql_table FROM report_tables WHERE section = "
                                            ":s AND table_key = :t LIMIT 1",
                                            1, {{"s", section}, {"t", table}}));
    if (where.rows.empty()) {
      return NotFoundError(fmt::format(
          "no table {} in section {}; call `table` with the section alone for its tables", table,
          section));
    }
    const std::string sql_table = Text(where.rows[0][0]);
    ASSIGN_OR_RETURN(QueryResult units, Sql(*run,
                                            "SELECT column, unit FROM report_columns WHERE "
                                            "sql_table = :t",
                                            100000, {{"t", sql_table}}));
    w.Key("units").BeginObject();
    for (const auto& row : units.rows) w.Key(Text(row[0])).String(Text(row[1]));
    w.EndObject();
    ASSIGN_OR_RETURN(
        QueryResult rows,
        Sql(*run, fmt::format("SELECT * FROM \"{}\" ORDER BY input, row", sql_table), max_rows));
    w.Key("rows");
    WriteRows(w, rows, [&](size_t i) {
      return fmt::format("section {} (input {}), table {}, row {}", section, Text(rows.rows[i][0]),
                         table, Text(rows.rows[i][1]));
    });
    w.Key("truncated").Bool(rows.truncated);
  }
  w.EndObject();
  return w.Take();
}

StatusOr<std::string> Query(McpRuns& runs, simdjson::dom::element args) {
  ASSIGN_OR_RETURN(McpRun * run, RunArg(runs, args, "query"));
  ASSIGN_OR_RETURN(std::string sql, StringArg(args, "sql", "query", true));
  ASSIGN_OR_RETURN(int64_t max_rows, IntArg(args, "max_rows", "query", 200, 1, 100000));
  QueryParams params;
  simdjson::dom::element p;
  if (args["params"].get(p) == simdjson::SUCCESS) {
    simdjson::dom::object obj;
    if (p.get(obj) != simdjson::SUCCESS) return ArgError("query", "`params` must be an object");
    for (auto field : obj) {
      std::string_view sv;
      int64_t iv = 0;
      double dv = 0;
      if (field.value.get(sv) == simdjson::SUCCESS) {
        params.emplace_back(std::string(field.key), std::string(sv));
      } else if (field.value.get(iv) == simdjson::SUCCESS) {
        params.emplace_back(std::string(field.key), std::to_string(iv));
      } else if (field.value.get(dv) == simdjson::SUCCESS) {
        params.emplace_back(std::string(field.key), fmt::format("{}", dv));
      } else {
        return ArgError("query", "`params` values must be strings or numbers");
      }
    }
  }
  std::string text = sql;
  if (!sql.empty() && sql[0] == '@') {
    const NamedQuery* named = FindNamedQuery(std::string_view(sql).substr(1));
    if (named == nullptr) return NotFoundError(fmt::format("no saved question {}", sql));
    text = named->sql;
  }
  ASSIGN_OR_RETURN(QueryResult r, Sql(*run, text, max_rows, params));
  JsonWriter w(0);
  w.BeginObject().Key("run").String(run->id).Key("columns").BeginArray();
  for (const std::string& c : r.columns) w.String(c);
  w.EndArray().Key("rows").BeginArray();
  for (const auto& row : r.rows) {
    w.BeginArray();
    for (const Value& v : row) WriteJsonValue(w, v);
    w.EndArray();
  }
  w.EndArray().Key("truncated").Bool(r.truncated);
  w.Key("source").String(fmt::format("query over {}: {} (row i, column c)", run->id, sql));
  w.EndObject();
  return w.Take();
}

StatusOr<std::string> Diff(simdjson::dom::element args) {
  ASSIGN_OR_RETURN(std::string baseline, StringArg(args, "baseline", "diff", true));
  ASSIGN_OR_RETURN(std::string candidate, StringArg(args, "candidate", "diff", true));
  ASSIGN_OR_RETURN(int64_t max_rows, IntArg(args, "max_rows", "diff", 20, 1, 10000));
  AnalyzeOptions options;
  options.top_n = static_cast<int>(max_rows);
  ASSIGN_OR_RETURN(Report report, DiffFiles(baseline, candidate, options));
  const auto units = EnumNames<Unit>::Names();
  auto unit_name = [&](Unit u) { return std::string(units[static_cast<size_t>(u)]); };
  JsonWriter w(0);
  w.BeginObject().Key("baseline").String(baseline).Key("candidate").String(candidate);
  w.Key("sections").BeginArray();
  for (const Section& s : report.sections) {
    const std::string where = s.input >= 0
                                  ? fmt::format("diff section {} (input {})", s.key, s.input)
                                  : fmt::format("diff section {}", s.key);
    w.BeginObject().Key("section").String(s.key).Key("title").String(s.title);
    w.Key("facts").BeginArray();
    for (const Fact& f : s.facts) {
      w.BeginObject().Key("key").String(f.key).Key("label").String(f.label).Key("value");
      WriteJsonValue(w, f.value);
      w.Key("unit").String(unit_name(f.unit));
      w.Key("source").String(fmt::format("{}, fact {}", where, f.key)).EndObject();
    }
    w.EndArray().Key("tables").BeginArray();
    for (const Table& t : s.tables) {
      w.BeginObject().Key("table").String(t.key).Key("title").String(t.title);
      w.Key("rows").BeginArray();
      for (size_t r = 0; r < t.rows.size() && static_cast<int64_t>(r) < max_rows; ++r) {
        w.BeginObject();
        for (size_t c = 0; c < t.columns.size() && c < t.rows[r].size(); ++c) {
          w.Key(t.columns[c].key);
          WriteJsonValue(w, t.rows[r][c]);
        }
        w.Key("source").String(fmt::format("{}, table {}, row {}", where, t.key, r));
        w.EndObject();
      }
      w.EndArray().EndObject();
    }
    w.EndArray().Key("notes").BeginArray();
    for (const std::string& n : s.notes) w.String(n);
    w.EndArray().EndObject();
  }
  w.EndArray().Key("gate").BeginObject().Key("failed").Bool(report.gate.failed);
  w.Key("undecided").Bool(report.gate.undecided).Key("message").String(report.gate.message);
  w.EndObject().EndObject();
  return w.Take();
}

}  // namespace

std::string McpToolList() {
  // One message a line: the list without the line breaks it is written with here.
  std::string list = kTools;
  std::erase(list, '\n');
  return list;
}

StatusOr<std::string> CallMcpTool(McpRuns& runs, std::string_view name, simdjson::dom::element args,
                                  bool* tool_error) {
  StatusOr<std::string> r = InvalidArgumentError("");
  if (name == "analyze") {
    r = Analyze(runs, args);
  } else if (name == "findings") {
    r = Findings(runs, args, false);
  } else if (name == "explain_finding") {
    r = Findings(runs, args, true);
  } else if (name == "table") {
    r = ReadTable(runs, args);
  } else if (name == "query") {
    r = Query(runs, args);
  } else if (name == "diff") {
    r = Diff(args);
  } else {
    return InvalidArgumentError(fmt::format(
        "no tool {}; the tools are: analyze, findings, table, query, diff, explain_finding", name));
  }
  // Arguments that do not fit the schema (ArgError: "TOOL: ...") are the caller's error, a
  // JSON-RPC error; the rest (an input that cannot be read, a query that fails) the tool's own.
  if (!r.ok() && r.status().message().rfind(fmt::format("{}: ", name), 0) == 0) return r;
  *tool_error = !r.ok();
  if (!r.ok()) return r.status().message();
  return r;
}

}  // namespace sightline
