// `sightline check-claims REPORT.json TEXT`: every number a text states about a run, matched to
// the run's report (and query results); exit 1 when one is contradicted (docs/check-claims.md).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/json_writer.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "query/claims.h"

namespace sightline::cli {
namespace {

struct CheckClaimsArgs {
  std::string report;
  std::string text;
  std::vector<std::string> evidence;  // query results (JSON)
  std::string format = "text";
  bool strict = false;
};

StatusOr<std::string> ReadTextInput(const std::string& path) {
  if (path == "-") {
    std::string text;
    char buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
      text.append(buf, n);
      if (text.size() > (64u << 20))
        return InvalidInputError("standard input: over 64 MiB of text");
    }
    return text;
  }
  return ReadInput(path);
}

int RunCheckClaims(const CheckClaimsArgs& args) {
  StatusOr<std::string> report = ReadInput(args.report);
  if (!report.ok()) return ReportError(report.status());
  StatusOr<std::vector<ReportNumber>> numbers = ReportNumbers(*report, args.report);
  if (!numbers.ok()) return ReportError(numbers.status());
  for (const std::string& path : args.evidence) {
    StatusOr<std::string> json = ReadInput(path);
    if (!json.ok()) return ReportError(json.status());
    StatusOr<std::vector<ReportNumber>> more = QueryResultNumbers(*json, path);
    if (!more.ok()) return ReportError(more.status());
    for (ReportNumber& n : *more) numbers->push_back(std::move(n));
  }
  StatusOr<std::string> text = ReadTextInput(args.text);
  if (!text.ok()) return ReportError(text.status());
  const std::vector<ClaimCheck> checks = CheckClaims(ExtractClaims(*text), *numbers);
  int counts[3] = {0, 0, 0};
  for (const ClaimCheck& c : checks) ++counts[static_cast<int>(c.verdict)];
  std::string out;
  if (args.format == "json") {
    JsonWriter w(0);
    w.BeginObject().Key("claims").BeginArray();
    for (const ClaimCheck& c : checks) {
      w.BeginObject().Key("text").String(c.claim.text).Key("line").Int(c.claim.line);
      w.Key("dimension").String(DimensionName(c.claim.q.dim));
      w.Key("verdict").String(VerdictName(c.verdict));
      const ReportNumber* n = c.match != nullptr ? c.match : c.closest;
      if (n != nullptr) {
        w.Key(c.match != nullptr ? "matched" : "closest").BeginObject();
        w.Key("source").String(n->source).Key("value").Double(n->q.value);
        w.Key("shown").String(FormatQuantity(n->q)).EndObject();
      }
      w.EndObject();
    }
    w.EndArray().Key("supported").Int(counts[0]).Key("contradicted").Int(counts[1]);
    w.Key("unsupported").Int(counts[2]).EndObject();
    out = w.Take() + "\n";
  } else {
    for (const ClaimCheck& c : checks) {
      out += fmt::format("line {}: \"{}\" {}", c.claim.line, PrintableText(c.claim.text),
                         VerdictName(c.verdict));
      if (c.match != nullptr) {
        out += fmt::format(": {} = {}\n", c.match->source, FormatQuantity(c.match->q));
      } else if (c.closest != nullptr) {
        out += fmt::format("; closest {}: {} = {}\n", DimensionName(c.claim.q.dim),
                           c.closest->source, FormatQuantity(c.closest->q));
      } else {
        out += fmt::format("; the report has no {} number\n", DimensionName(c.claim.q.dim));
      }
    }
    out += fmt::format("{} claims: {} supported, {} contradicted, {} unsupported\n", checks.size(),
                       counts[0], counts[1], counts[2]);
  }
  WriteToStdout(out);
  if (counts[1] > 0 || (args.strict && counts[2] > 0)) return kExitFailed;
  return kExitOk;
}

}  // namespace

void AddCheckClaimsCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<CheckClaimsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check-claims",
      "Check the numbers a text states about a run (an agent's answer, a write-up) against the "
      "run's report: each number with its unit (ns, us, ms, s, %, B..GiB, GB/s, x) is supported "
      "by a number of the report within the rounding it is written with, contradicted (a number "
      "about the same thing differs) or unsupported; the closest number of the report and where "
      "it is are shown. Exit 1 when a claim is contradicted (docs/check-claims.md).");
  cmd->add_option("report", args->report,
                  "The run's report: sightline analyze TRACE --format json -o REPORT.json")
      ->required();
  cmd->add_option("text", args->text, "The text to check (a file; - for standard input)")
      ->required();
  cmd->add_option("--evidence", args->evidence,
                  "Query results that also back numbers (sightline query ... --format json)")
      ->type_name("QUERY.json");
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag("--strict", args->strict, "Exit 1 also when a claim is unsupported");
  cmd->callback([&runner, args] { runner = [args] { return RunCheckClaims(*args); }; });
}

}  // namespace sightline::cli
