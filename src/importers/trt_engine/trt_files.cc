#include <fmt/format.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/input_data.h"
#include "base/strings.h"
#include "importers/trt_engine/trt_engine.h"

namespace sightline {
namespace {

constexpr size_t kSniffBytes = 4096;

struct Suffix {
  const char* text;
  TrtFileKind kind;
};
// Longest first: ".profile.metadata.json" before ".metadata.json" and ".profile.json".
constexpr std::array<Suffix, 6> kSuffixes = {{
    {".profile.metadata.json", TrtFileKind::kProfileMetadata},
    {".build.metadata.json", TrtFileKind::kBuildMetadata},
    {".metadata.json", TrtFileKind::kDeviceMetadata},
    {".graph.json", TrtFileKind::kGraph},
    {".profile.json", TrtFileKind::kProfile},
    {".timing.json", TrtFileKind::kTiming},
}};

// The first key of the first object in `head` (after an optional '['), or "".
std::string_view FirstKey(std::string_view head, bool* in_array) {
  size_t i = head.find_first_not_of(" \t\r\n");
  *in_array = false;
  if (i == std::string_view::npos) return {};
  if (head[i] == '[') {
    *in_array = true;
    i = head.find_first_not_of(" \t\r\n", i + 1);
    if (i == std::string_view::npos) return {};
  }
  if (head[i] != '{') return {};
  i = head.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos || head[i] != '"') return {};
  const size_t end = head.find('"', i + 1);
  if (end == std::string_view::npos) return {};
  return head.substr(i + 1, end - i - 1);
}

TrtFileKind KindOfHead(std::string_view head) {
  bool array = false;
  const std::string_view key = FirstKey(head, &array);
  if (key.empty()) return TrtFileKind::kNone;
  if (array) {
    if (key == "count") return TrtFileKind::kProfile;
    if (key == "name" && head.find("\"averageMs\"") != std::string_view::npos) {
      return TrtFileKind::kProfile;
    }
    if (key == "startEnqMs" || key == "startH2dMs" || key == "startComputeMs") {
      return TrtFileKind::kTiming;
    }
    if (key == "Name" && head.find("\"ComputeCapability\"") != std::string_view::npos) {
      return TrtFileKind::kDeviceMetadata;
    }
    return TrtFileKind::kNone;
  }
  if (key == "Layers" || key == "Bindings") return TrtFileKind::kGraph;
  if (key == "performance_summary" || key == "inference_options" || key == "device_information") {
    return TrtFileKind::kProfileMetadata;
  }
  if (key == "model_options" || key == "build_options") return TrtFileKind::kBuildMetadata;
  return TrtFileKind::kNone;
}

}  // namespace

TrtFileKind TrtFileKindOf(const std::string& path) {
  StatusOr<InputHead> head = ReadInputHead(path, kSniffBytes);
  if (!head.ok()) return TrtFileKind::kNone;
  return KindOfHead(head->bytes);
}

TrtFileKind TrtFileKindOfHead(std::string_view head) {
  return KindOfHead(head.substr(0, kSniffBytes));
}

std::string TrtEnginePrefix(const std::string& path) {
  std::string_view p = path;
  if (EndsWith(p, ".gz")) {
    p.remove_suffix(3);
  } else if (EndsWith(p, ".zst")) {
    p.remove_suffix(4);
  }
  for (const Suffix& s : kSuffixes) {
    if (EndsWith(p, s.text)) return std::string(p.substr(0, p.size() - strlen(s.text)));
  }
  return "";
}
StatusOr<TrtEngine> ReadTrtEngine(const std::string& path) {
  namespace fs = std::filesystem;
  const TrtFileKind given = TrtFileKindOf(path);
  if (given == TrtFileKind::kNone) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return NotFoundError(fmt::format("{}: no such file", path));
    return InvalidInputError(fmt::format(
        "{}: not a TensorRT export (trtexec --exportLayerInfo, --exportProfile, --exportTimes or "
        "Trex metadata); see docs/analyses/trt_engine.md",
        path));
  }
  TrtEngine engine;
  engine.prefix = TrtEnginePrefix(path);
  std::vector<std::pair<TrtFileKind, std::string>> files;
  if (engine.prefix.empty()) {
    // Not named like an export: the file alone.
    engine.prefix = path;
    files.push_back({given, path});
  } else {
    for (const Suffix& s : kSuffixes) {
      for (const char* gz : {"", ".gz", ".zst"}) {
        const std::string candidate = engine.prefix + s.text + gz;
        std::error_code ec;
        if (!fs::is_regular_file(candidate, ec)) continue;
        const TrtFileKind kind = candidate == path ? given : TrtFileKindOf(candidate);
        if (kind != s.kind) {
          return InvalidInputError(fmt::format(
              "{}: named like a TensorRT {} export but its content is {}; rename or move it so "
              "that the engine's files (prefix {}) are its exports only",
              candidate, TrtFileKindName(s.kind),
              kind == TrtFileKind::kNone ? std::string("something else")
                                         : fmt::format("a {} export", TrtFileKindName(kind)),
              engine.prefix));
        }
        files.push_back({kind, candidate});
        break;  // E.timing.json before E.timing.json.gz
      }
    }
  }
  engine.name = fs::path(engine.prefix).filename().string();
  for (const auto& [kind, file] : files) {
    ASSIGN_OR_RETURN(std::string text, ReadInput(file));
    engine.files[kind] = file;
    switch (kind) {
      case TrtFileKind::kGraph: {
        ASSIGN_OR_RETURN(engine.graph, ParseTrtGraph(text, file, engine.diagnostics));
        break;
      }
      case TrtFileKind::kProfile: {
        ASSIGN_OR_RETURN(engine.profile, ParseTrtProfile(text, file, engine.diagnostics));
        break;
      }
      case TrtFileKind::kTiming: {
        ASSIGN_OR_RETURN(engine.timing, ParseTrtTiming(text, file, engine.diagnostics));
        break;
      }
      case TrtFileKind::kDeviceMetadata:
      case TrtFileKind::kBuildMetadata:
      case TrtFileKind::kProfileMetadata: {
        if (!engine.metadata) engine.metadata.emplace();
        RETURN_IF_ERROR(ParseTrtMetadata(text, kind, file, *engine.metadata, engine.diagnostics));
        break;
      }
      case TrtFileKind::kNone:
        break;
    }
  }
  if (engine.graph && engine.profile && !engine.graph->layers.empty()) {
    std::unordered_set<std::string> names;
    for (const TrtLayer& l : engine.graph->layers) names.insert(l.name);
    int64_t missing = 0;
    for (const TrtProfileRow& r : engine.profile->rows) missing += names.count(r.name) == 0;
    engine.diagnostics.Add(DiagCode::kTrtProfileLayerNotInGraph, missing);
  }
  return engine;
}

}  // namespace sightline
