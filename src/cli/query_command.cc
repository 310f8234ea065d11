// `sightline query INPUT... 'SQL'`: read-only SQL over the trace model, the facts of the analysis
// and the report (docs/query.md); `--list` names the saved questions, run as `@NAME`.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "base/file_io.h"
#include "cli/commands.h"
#include "query/named_queries.h"
#include "query/query_inputs.h"
#include "query/query_output.h"
#include "query/query_schema.h"

namespace sightline::cli {
namespace {

struct QueryArgs {
  std::vector<std::string> positional;  // INPUT... then the SQL (or @NAME)
  std::string format = "table";
  std::string save;
  std::vector<std::string> params;  // KEY=VALUE
  double timeout_s = 10.0;
  int64_t max_rows = 1000;
  bool list = false;
  bool schema = false;
  std::string iterations_regex;
};

int RunQuery(const QueryArgs& args) {
  if (args.list) {
    std::string out;
    for (const NamedQuery& q : NamedQueries()) {
      out += fmt::format("@{}\n    {}\n", q.name, q.summary);
      if (*q.params != '\0') out += fmt::format("    parameters: {}\n", q.params);
    }
    WriteToStdout(out);
    return kExitOk;
  }
  if (args.schema) {
    WriteToStdout(QuerySchemaMarkdown());
    return kExitOk;
  }
  std::vector<std::string> inputs = args.positional;
  std::string sql;
  std::error_code ec;
  const bool build_only =
      !args.save.empty() && !inputs.empty() && std::filesystem::exists(inputs.back(), ec);
  if (!build_only) {
    if (inputs.size() < 2) {
      return ReportError(InvalidArgumentError(
          "usage: sightline query INPUT... 'SQL' (or @NAME: `sightline query --list`); INPUT is "
          "a trace or a database saved with --save (docs/query.md)"));
    }
    sql = inputs.back();
    inputs.pop_back();
    if (sql.find_first_of(" \t\n") == std::string::npos && sql[0] != '@' &&
        std::filesystem::exists(sql, ec)) {
      return ReportError(InvalidArgumentError(fmt::format(
          "'{}' is a file, and the last argument is the SQL: sightline query INPUT... 'SQL' (or "
          "@NAME; --save FILE without SQL only builds the database)",
          sql)));
    }
  }
  QueryParams params;
  for (const std::string& p : args.params) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ReportError(InvalidArgumentError(
          fmt::format("--param {}: expected KEY=VALUE (e.g. --param n=10)", p)));
    }
    params.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  if (!sql.empty() && sql[0] == '@') {
    const NamedQuery* named = FindNamedQuery(std::string_view(sql).substr(1));
    if (named == nullptr) {
      std::string names;
      for (const NamedQuery& q : NamedQueries()) names += fmt::format(" @{}", q.name);
      return ReportError(
          InvalidArgumentError(fmt::format("no saved question {}; there are:{}", sql, names)));
    }
    sql = named->sql;
  }
  if (Status s = CheckOutputIsNotAnInput(args.save, inputs); !s.ok()) return ReportError(s);
  AnalyzeOptions options;
  options.iterations_regex = args.iterations_regex;
  options.top_n = 1000;  // the report's tables as complete as JSON would want them
  StatusOr<QueryDb> db = OpenQueryInputs(inputs, options, args.save, sql);
  if (!db.ok()) return ReportError(db.status());
  if (build_only) {
    std::fprintf(stderr, "sightline: wrote %s (%zu tables)\n", args.save.c_str(),
                 db->catalogue().size());
    return kExitOk;
  }
  QueryLimits limits;
  limits.seconds = args.timeout_s;
  limits.max_rows = args.max_rows;
  StatusOr<QueryResult> result = db->Run(sql, limits, params);
  if (!result.ok()) return ReportError(result.status());
  const std::string out = args.format == "csv"    ? RenderQueryCsv(*result)
                          : args.format == "json" ? RenderQueryJson(*result)
                                                  : RenderQueryTable(*result);
  WriteToStdout(out);
  if (result->truncated && args.format != "table") {
    std::fprintf(stderr,
                 "sightline: note: more than %lld rows; the rest were left out (--max-rows N)\n",
                 static_cast<long long>(args.max_rows));
  }
  return kExitOk;
}

}  // namespace

void AddQueryCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* cmd = app.add_subcommand(
      "query",
      "Ask a trace a question in SQL: read-only SQL over its kernels, API calls, memory "
      "operations, ranges (with the GPU work each projects onto), iterations, threads, devices, "
      "GPU metrics, memory events and the report's facts, tables and findings "
      "(docs/query.md). `sightline query run.sqlite 'SELECT name, sum(dur_ns) FROM kernels "
      "GROUP BY name'`; `@NAME` runs a saved question (--list).");
  cmd->add_option("args", args->positional,
                  "INPUT... then the SQL: traces (analysed as `sightline analyze` does) or one "
                  "database saved with --save; the SQL, or @NAME for a saved question");
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--save", args->save,
                  "Keep the database built from the traces in FILE, to query again without "
                  "analysing them (give FILE as the INPUT); without SQL, only build it")
      ->type_name("FILE");
  cmd->add_option("--param", args->params,
                  "KEY=VALUE for a :KEY parameter of the query (numbers bind as numbers)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--timeout", args->timeout_s, "Seconds a query may run")
      ->check(NumberIn(0.001, 86400, "0.001 to 86400", "SECONDS"))
      ->capture_default_str();
  cmd->add_option("--max-rows", args->max_rows, "Rows shown at most")
      ->check(PositiveCount<int64_t>())
      ->capture_default_str();
  AddIterationsOption(cmd, args->iterations_regex, "the `iterations` table's steps");
  cmd->add_flag("--list", args->list, "List the saved questions (@NAME) and exit");
  cmd->add_flag("--schema", args->schema,
                "Print the tables and columns (Markdown, as in docs/query.md) and exit");
  cmd->callback([&runner, args] { runner = [args] { return RunQuery(*args); }; });
}

}  // namespace sightline::cli
