#include "diff/baseline_file.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>

#include "base/json_writer.h"

namespace sightline {
namespace {

// Values are written to 0.001 ns: enough for any sum of parts to match its wall time, and a
// short file.
double Rounded(double v) { return std::round(v * 1000) / 1000; }

Status Bad(const std::string& path, const std::string& what) {
  return InvalidInputError(
      fmt::format("{}: not a usable sightline baseline: {}; write it again with `sightline "
                  "baseline save` (docs/formats/baseline.md)",
                  path, what));
}

StatusOr<std::vector<double>> Numbers(simdjson::dom::element e, const std::string& path,
                                      const std::string& where) {
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) return Bad(path, where + " is not an array");
  std::vector<double> out;
  out.reserve(a.size());
  size_t i = 0;
  for (simdjson::dom::element x : a) {
    double v = 0;
    if (x.get_double().get(v) != simdjson::SUCCESS || !std::isfinite(v) || v < 0) {
      return Bad(path, fmt::format("{}[{}] is not a non-negative number", where, i));
    }
    out.push_back(v);
    ++i;
  }
  return out;
}

StatusOr<std::string> Text(simdjson::dom::object o, const char* key, const std::string& path,
                           const std::string& where) {
  std::string_view s;
  if (o[key].get_string().get(s) != simdjson::SUCCESS) {
    return Bad(path, fmt::format("{} has no string \"{}\"", where, key));
  }
  return std::string(s);
}

}  // namespace

std::string SerializeBaseline(const SavedBaseline& baseline) {
  JsonWriter w(1);
  w.BeginObject();
  w.Key("format").String(kBaselineFormat);
  w.Key("format_version").Int(kBaselineFormatVersion);
  w.Key("tool_version").String(baseline.tool_version);
  w.Key("iterations_regex").String(baseline.iterations_regex);
  w.Key("runs").BeginArray();
  for (const RunSamples& run : baseline.runs) {
    w.BeginObject();
    w.Key("source").String(run.source);
    w.Key("iteration_pattern").String(run.pattern);
    w.Key("iterations").Int(static_cast<int64_t>(run.iterations()));
    w.Key("wall_ns").BeginArray();
    for (double v : run.wall_ns) w.Double(Rounded(v));
    w.EndArray();
    w.Key("launched_ns").BeginArray();
    for (double v : run.launched_ns) w.Double(Rounded(v));
    w.EndArray();
    w.Key("parts").BeginArray();
    for (size_t p = 0; p < run.parts.size(); ++p) {
      const StepPart& part = run.parts[p];
      w.BeginObject();
      w.Key("kind").String(StepPart::KindName(part.kind));
      w.Key("range").String(part.range);
      w.Key("what").String(part.what);
      w.Key("ns").BeginArray();
      for (double v : run.part_ns[p]) w.Double(Rounded(v));
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::string out = w.Take();
  out += '\n';
  return out;
}

bool LooksLikeBaseline(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  // The writer puts "format" first.
  const size_t key = text.find("\"format\"", first);
  return key != std::string::npos && key < first + 64 &&
         text.find(kBaselineFormat, key) != std::string::npos;
}

StatusOr<SavedBaseline> ParseBaseline(const std::string& text, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(text.data(), text.size()).get(doc); err != simdjson::SUCCESS) {
    return Bad(path, fmt::format("not valid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) return Bad(path, "not a JSON object");
  std::string_view format;
  if (o["format"].get_string().get(format) != simdjson::SUCCESS || format != kBaselineFormat) {
    return Bad(path, fmt::format("\"format\" is not \"{}\"", kBaselineFormat));
  }
  int64_t version = 0;
  if (o["format_version"].get_int64().get(version) != simdjson::SUCCESS || version < 1) {
    return Bad(path, "\"format_version\" is not a positive integer");
  }
  if (version > kBaselineFormatVersion) {
    return InvalidInputError(fmt::format(
        "{}: baseline format version {} is newer than this sightline reads ({}); save the "
        "baseline again with this version, or use a newer sightline",
        path, version, kBaselineFormatVersion));
  }
  SavedBaseline b;
  std::string_view s;
  if (o["tool_version"].get_string().get(s) == simdjson::SUCCESS) b.tool_version = s;
  if (o["iterations_regex"].get_string().get(s) == simdjson::SUCCESS) b.iterations_regex = s;
  simdjson::dom::array runs;
  if (o["runs"].get_array().get(runs) != simdjson::SUCCESS || runs.size() == 0) {
    return Bad(path, "\"runs\" is not a non-empty array");
  }
  size_t r = 0;
  for (simdjson::dom::element e : runs) {
    const std::string where = fmt::format("runs[{}]", r++);
    simdjson::dom::object ro;
    if (e.get_object().get(ro) != simdjson::SUCCESS) return Bad(path, where + " is not an object");
    RunSamples run;
    ASSIGN_OR_RETURN(run.source, Text(ro, "source", path, where));
    ASSIGN_OR_RETURN(run.pattern, Text(ro, "iteration_pattern", path, where));
    simdjson::dom::element wall;
    if (ro["wall_ns"].get(wall) != simdjson::SUCCESS) return Bad(path, where + " has no wall_ns");
    ASSIGN_OR_RETURN(run.wall_ns, Numbers(wall, path, where + ".wall_ns"));
    simdjson::dom::element launched;
    if (ro["launched_ns"].get(launched) != simdjson::SUCCESS) {
      return Bad(path, where + " has no launched_ns");
    }
    ASSIGN_OR_RETURN(run.launched_ns, Numbers(launched, path, where + ".launched_ns"));
    int64_t count = -1;
    if (ro["iterations"].get_int64().get(count) != simdjson::SUCCESS ||
        count != static_cast<int64_t>(run.wall_ns.size())) {
      return Bad(path, fmt::format("{}.iterations is not the length of its wall_ns", where));
    }
    simdjson::dom::array parts;
    if (ro["parts"].get_array().get(parts) != simdjson::SUCCESS) {
      return Bad(path, where + ".parts is not an array");
    }
    size_t p = 0;
    for (simdjson::dom::element pe : parts) {
      const std::string pwhere = fmt::format("{}.parts[{}]", where, p++);
      simdjson::dom::object po;
      if (pe.get_object().get(po) != simdjson::SUCCESS) {
        return Bad(path, pwhere + " is not an object");
      }
      StepPart part;
      ASSIGN_OR_RETURN(std::string kind, Text(po, "kind", path, pwhere));
      if (kind == "gpu") {
        part.kind = StepPart::Kind::kGpu;
      } else if (kind == "idle") {
        part.kind = StepPart::Kind::kIdle;
      } else {
        return Bad(path, fmt::format("{}.kind is \"{}\", not \"gpu\" or \"idle\"", pwhere, kind));
      }
      ASSIGN_OR_RETURN(part.range, Text(po, "range", path, pwhere));
      ASSIGN_OR_RETURN(part.what, Text(po, "what", path, pwhere));
      simdjson::dom::element ns;
      if (po["ns"].get(ns) != simdjson::SUCCESS) return Bad(path, pwhere + " has no \"ns\"");
      ASSIGN_OR_RETURN(std::vector<double> values, Numbers(ns, path, pwhere + ".ns"));
      const size_t before = run.parts.size();
      const size_t index = run.PartIndex(part);
      if (index != before) return Bad(path, pwhere + " repeats an earlier part");
      run.part_ns[index] = std::move(values);
    }
    RETURN_IF_ERROR(run.Validate(fmt::format("{}: {}", path, where)));
    b.runs.push_back(std::move(run));
  }
  return b;
}

}  // namespace sightline
