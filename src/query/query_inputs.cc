#include "query/query_inputs.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "analyses/common/analysis_context.h"
#include "base/output_temps.h"
#include "importers/importer.h"
#include "importers/inputs.h"
#include "pipeline/pipeline.h"
#include "pipeline/trace_sets.h"
#include "query/query_build.h"
#include "query/query_schema.h"

namespace sightline {
namespace {

// Builds the database of `traces` into the (empty) file `file`; with `fill`, only those tables'
// rows.
Status BuildInto(const std::string& file, const std::vector<std::string>& traces,
                 const AnalyzeOptions& options, std::optional<std::set<std::string>> fill) {
  ASSIGN_OR_RETURN(std::unique_ptr<QueryDbBuilder> builder, QueryDbBuilder::Create(file));
  if (fill) builder->FillOnly(std::move(*fill));
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
  // The multi-trace analyses of `analyze` (the ranks of one job side by side, the processes of one
  // run), each seeing every trace while it is loaded, as the pipeline's RunTraceSet does. The
  // serving results among the inputs go to the requests table, not to the run's inputs.
  std::vector<MultiTraceRun> multi =
      CreateMultiTraceAnalyses(TraceSetKind::kRanks, options, RunInputs{});
  TraceSet set;
  for (size_t i = 0; i < traces.size(); ++i) {
    const std::string& path = traces[i];
    ASSIGN_OR_RETURN(InputDocument doc, OpenInput(path));
    if (auto* requests = std::get_if<RequestResults>(&doc.value)) {
      if (requests->path.empty()) requests->path = path;
      RETURN_IF_ERROR(builder->AddRequests(*requests));
      continue;
    }
    Trace* trace = std::get_if<Trace>(&doc.value);
    if (trace == nullptr) {
      return InvalidInputError(fmt::format(
          "{}: is {}, not a trace or serving results; `sightline query` takes traces (and serving "
          "results, as the requests table)",
          path, doc.reader != nullptr ? doc.reader->description : "another kind of input"));
    }
    if (trace->source.path.empty()) trace->source.path = path;
    TraceSetMember& member = set.members.emplace_back();
    member.path = path;
    member.label = MemberLabel(path, *trace);
    member.index = static_cast<int>(set.members.size() - 1);
    auto context = std::make_shared<AnalysisContext>(
        std::make_unique<const Trace>(std::move(*trace)), options);
    member.input = static_cast<int>(report.inputs.size());
    RETURN_IF_ERROR(AnalyzeTrace(*context, member.label, report));
    RETURN_IF_ERROR(builder->AddTrace(*context, member.input));
    RETURN_IF_ERROR(AddToMultiTrace(multi, context, member));
  }
  // Their sections first, and the findings of their rules, as in `analyze`'s report.
  RETURN_IF_ERROR(FinishTraceSet(set, multi, options, report));
  RETURN_IF_ERROR(builder->AddReport(report));
  return builder->Finish(traces);
}

// A temporary in the system's temporary directory, removed when the database is open (SQLite
// keeps reading it through its descriptor).
std::string TempDir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

int CollectRead(void* context, int action, const char* table, const char* /*column*/,
                const char* /*db*/, const char* /*trigger*/) {
  if (action == SQLITE_READ && table != nullptr) {
    static_cast<std::set<std::string>*>(context)->insert(table);
  }
  return SQLITE_OK;
}

}  // namespace

std::optional<std::set<std::string>> TablesReadBy(std::string_view sql) {
  if (sql.empty() || sql.size() > 1'000'000) return std::nullopt;
  sqlite3* db = nullptr;
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> owner(nullptr, sqlite3_close_v2);
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(db);
    return std::nullopt;
  }
  owner.reset(db);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  for (const QueryTableDef& t : QueryTables()) {
    if (sqlite3_exec(db, CreateTableSql(t).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      return std::nullopt;
    }
  }
  std::set<std::string> read;
  sqlite3_set_authorizer(db, CollectRead, &read);
  sqlite3_stmt* st = nullptr;
  // Prepared only, never run.
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &st, nullptr);
  sqlite3_finalize(st);
  if (rc != SQLITE_OK || st == nullptr) return std::nullopt;
  std::set<std::string> tables;
  for (const std::string& name : read) {
    if (FindQueryTable(name) != nullptr) tables.insert(name);
  }
  return tables;
}

StatusOr<QueryDb> OpenQueryInputs(const std::vector<std::string>& paths,
                                  const AnalyzeOptions& options, const std::string& save,
                                  std::string_view question) {
  if (paths.empty()) {
    return InvalidArgumentError(
        "no input given; usage: sightline query TRACE...|DB 'SQL' (docs/query.md)");
  }
  for (const std::string& path : paths) {
    if (!QueryDb::LooksLikeQueryDb(path)) continue;
    if (paths.size() > 1) {
      return InvalidArgumentError(fmt::format(
          "{}: a saved query database is queried alone; build one database from all the traces "
          "(sightline query TRACE... --save DB)",
          path));
    }
    if (!save.empty()) {
      return InvalidArgumentError(fmt::format(
          "{}: is already a saved query database; --save builds one from traces", path));
    }
    return QueryDb::Open(path);
  }
  const std::string target =
      save.empty() ? (std::filesystem::path(TempDir()) / "sightline-query.db").string() : save;
  int fd = -1;
  ASSIGN_OR_RETURN(Temporary temp, CreateTemporary(target, /*directory=*/false, &fd));
  ::close(fd);
  Status built =
      BuildInto(temp.path, paths, options,
                save.empty() && !question.empty() ? TablesReadBy(question) : std::nullopt);
  if (!built.ok()) {
    RemoveTemporary(temp);
    return built;
  }
  if (save.empty()) {
    StatusOr<QueryDb> db = QueryDb::Open(temp.path);
    RemoveTemporary(temp);  // the open connection keeps the file's contents
    return db;
  }
  std::error_code ec;
  std::filesystem::rename(temp.path, save, ec);
  if (ec) {
    RemoveTemporary(temp);
    return OutputError(fmt::format("{}: cannot write the query database: {}", save, ec.message()));
  }
  UntrackTemporary(temp);
  return QueryDb::Open(save);
}

}  // namespace sightline
