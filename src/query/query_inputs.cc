#include "query/query_inputs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "analyses/common/analysis_context.h"
#include "analyses/findings/findings.h"
#include "base/output_temps.h"
#include "importers/importer.h"
#include "importers/inputs.h"
#include "pipeline/pipeline.h"
#include "query/query_build.h"

namespace sightline {
namespace {

// Builds the database of `traces` into the (empty) file `file`.
Status BuildInto(const std::string& file, const std::vector<std::string>& traces,
                 const AnalyzeOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<QueryDbBuilder> builder, QueryDbBuilder::Create(file));
  Report report;
  report.tool_version = SIGHTLINE_VERSION;
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
    std::string label = std::filesystem::path(path).filename().string();
    if (trace->source.rank >= 0) label += fmt::format(" (rank {})", trace->source.rank);
    AnalysisContext context(std::make_unique<const Trace>(std::move(*trace)), options);
    const int input = static_cast<int>(report.inputs.size());
    RETURN_IF_ERROR(AnalyzeTrace(context, label, report));
    RETURN_IF_ERROR(builder->AddTrace(context, input));
  }
  SortFindings(report.findings);
  RETURN_IF_ERROR(builder->AddReport(report));
  return builder->Finish(traces);
}

// A temporary in the system's temporary directory, removed when the database is open (SQLite
// keeps reading it through its descriptor).
std::string TempDir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

}  // namespace

StatusOr<QueryDb> OpenQueryInputs(const std::vector<std::string>& paths,
                                  const AnalyzeOptions& options, const std::string& save) {
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
  Status built = BuildInto(temp.path, paths, options);
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
