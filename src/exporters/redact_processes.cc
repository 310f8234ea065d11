#include "exporters/redact_processes.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <functional>

#include "base/json_writer.h"

namespace sightline {
namespace {

StatusOr<simdjson::dom::element> Parse(simdjson::dom::parser& parser, std::string_view json,
                                       const std::string& path) {
  simdjson::dom::element doc;
  int64_t version = 0;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS ||
      doc["sightline_processes"].get(version) != simdjson::SUCCESS || version != 1) {
    return InvalidInputError(fmt::format(
        "{}: not a readable processes document (sightline_processes 1, written by `sightline "
        "record`)",
        path));
  }
  return doc;
}

// Calls `visit` on every string value (not keys) of the document, with its JSON path.
void ForEachString(simdjson::dom::element e, const std::string& where,
                   const std::function<void(std::string_view, const std::string&)>& visit) {
  switch (e.type()) {
    case simdjson::dom::element_type::STRING:
      visit(std::string_view(e), where);
      break;
    case simdjson::dom::element_type::ARRAY: {
      size_t i = 0;
      for (simdjson::dom::element v : e.get_array()) {
        ForEachString(v, fmt::format("{}[{}]", where, i++), visit);
      }
      break;
    }
    case simdjson::dom::element_type::OBJECT:
      for (auto field : e.get_object()) {
        ForEachString(field.value, where + "." + std::string(field.key), visit);
      }
      break;
    default:
      break;
  }
}

// The document again, each string value through `fn`, numbers and keys as they were.
void Rewrite(simdjson::dom::element e, JsonWriter& w,
             const std::function<std::string(std::string_view)>& fn) {
  switch (e.type()) {
    case simdjson::dom::element_type::STRING:
      w.String(fn(std::string_view(e)));
      break;
    case simdjson::dom::element_type::ARRAY:
      w.BeginArray();
      for (simdjson::dom::element v : e.get_array()) Rewrite(v, w, fn);
      w.EndArray();
      break;
    case simdjson::dom::element_type::OBJECT:
      w.BeginObject();
      for (auto field : e.get_object()) {
        w.Key(field.key);
        Rewrite(field.value, w, fn);
      }
      w.EndObject();
      break;
    case simdjson::dom::element_type::INT64:
      w.Int(int64_t(e));
      break;
    case simdjson::dom::element_type::UINT64:
      w.Double(static_cast<double>(uint64_t(e)));
      break;
    case simdjson::dom::element_type::DOUBLE:
      w.Double(double(e));
      break;
    case simdjson::dom::element_type::BOOL:
      w.Bool(bool(e));
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      w.Null();
      break;
  }
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const size_t j = s.find(' ', i);
    const size_t end = j == std::string_view::npos ? s.size() : j;
    if (end > i) out.emplace_back(s.substr(i, end - i));
    i = end;
  }
  return out;
}

}  // namespace

bool LooksLikeProcessesDocument(std::string_view head) {
  const size_t brace = head.find_first_not_of(" \t\r\n");
  return brace != std::string_view::npos && head[brace] == '{' &&
         head.find("\"sightline_processes\"") != std::string_view::npos;
}

Status LearnProcessesIdentity(std::string_view json, const std::string& path, Redactor& redactor) {
  simdjson::dom::parser parser;
  ASSIGN_OR_RETURN(simdjson::dom::element doc, Parse(parser, json, path));
  ForEachString(doc, "", [&](std::string_view s, const std::string&) { redactor.LearnPaths(s); });
  simdjson::dom::array program;
  if (doc["program"].get(program) == simdjson::SUCCESS) {
    std::vector<std::string> args;
    for (simdjson::dom::element a : program) {
      std::string_view v;
      if (a.get(v) == simdjson::SUCCESS) args.emplace_back(v);
    }
    if (!args.empty()) args.erase(args.begin());  // argv[0]
    redactor.AddCommandLine(args);
  }
  simdjson::dom::array processes;
  if (doc["processes"].get(processes) == simdjson::SUCCESS) {
    for (simdjson::dom::element p : processes) {
      std::string_view command;
      if (p["command"].get(command) != simdjson::SUCCESS) continue;
      std::vector<std::string> args = Words(command);
      if (!args.empty()) args.erase(args.begin());
      redactor.AddCommandLine(args);
    }
  }
  return Status::Ok();
}

StatusOr<std::string> RedactProcessesDocument(std::string_view json, const std::string& path,
                                              const Redactor& redactor, RedactSummary& summary) {
  simdjson::dom::parser parser;
  ASSIGN_OR_RETURN(simdjson::dom::element doc, Parse(parser, json, path));
  RedactCounts counts;
  JsonWriter w(1);
  Rewrite(doc, w, [&](std::string_view s) { return redactor.Redact(s, &counts); });
  summary.user_names += counts.user;
  summary.host_names += counts.host;
  summary.environment_values += counts.environment;
  summary.secrets += counts.secret;
  std::string out = w.Take();
  out += '\n';
  return out;
}

Status ScanProcessesDocument(std::string_view json, const std::string& path,
                             const Redactor& redactor, RedactCheckResult& result) {
  simdjson::dom::parser parser;
  ASSIGN_OR_RETURN(simdjson::dom::element doc, Parse(parser, json, path));
  ForEachString(doc, "", [&](std::string_view s, const std::string& where) {
    ++result.strings;
    for (int needle : redactor.Find(s)) {
      result.findings.push_back(fmt::format("{}: {}", where, redactor.What(needle)));
    }
  });
  return Status::Ok();
}

}  // namespace sightline
