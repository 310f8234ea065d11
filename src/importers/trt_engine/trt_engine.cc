#include "importers/trt_engine/trt_engine.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_set>

#include "base/file_io.h"
#include "base/input_data.h"

namespace sightline {
namespace {

using simdjson::SUCCESS;
namespace dom = simdjson::dom;

const char* DocOf(TrtFileKind kind) {
  switch (kind) {
    case TrtFileKind::kGraph:
      return "docs/formats/trt-graph-json.md";
    case TrtFileKind::kProfile:
      return "docs/formats/trt-profile-json.md";
    case TrtFileKind::kTiming:
      return "docs/formats/trt-timing-json.md";
    default:
      return "docs/analyses/trt_engine.md";
  }
}

const char* ProducerOf(TrtFileKind kind) {
  switch (kind) {
    case TrtFileKind::kGraph:
      return "trtexec --exportLayerInfo=E.graph.json --profilingVerbosity=detailed";
    case TrtFileKind::kProfile:
      return "trtexec --exportProfile=E.profile.json";
    case TrtFileKind::kTiming:
      return "trtexec --exportTimes=E.timing.json";
    default:
      return "Trex's engine-building scripts";
  }
}

Status Bad(TrtFileKind kind, const std::string& path, const std::string& what) {
  return InvalidInputError(fmt::format("{}: {}; expected what `{}` writes (see {})", path, what,
                                       ProducerOf(kind), DocOf(kind)));
}

// Typed access to one object's members. A member of another type is counted and dropped.
class Fields {
 public:
  Fields(Diagnostics& diagnostics, const char* file) : diagnostics_(diagnostics), file_(file) {}

  // Each returns true when the member is present with the right type (and sets *out).
  bool Str(dom::object o, std::string_view key, std::string* out) {
    dom::element e;
    if (o[key].get(e) != SUCCESS) return false;
    std::string_view v;
    if (e.get_string().get(v) != SUCCESS) return Wrong(key);
    *out = std::string(v);
    return true;
  }
  bool Num(dom::object o, std::string_view key, double* out) {
    dom::element e;
    if (o[key].get(e) != SUCCESS) return false;
    if (!e.is_number() || e.get_double().get(*out) != SUCCESS) return Wrong(key);
    return true;
  }
  bool Int(dom::object o, std::string_view key, int64_t* out) {
    dom::element e;
    if (o[key].get(e) != SUCCESS) return false;
    if (e.get_int64().get(*out) != SUCCESS) return Wrong(key);
    return true;
  }
  bool Obj(dom::object o, std::string_view key, dom::object* out) {
    dom::element e;
    if (o[key].get(e) != SUCCESS) return false;
    if (e.get_object().get(*out) != SUCCESS) return Wrong(key);
    return true;
  }
  bool Arr(dom::object o, std::string_view key, dom::array* out) {
    dom::element e;
    if (o[key].get(e) != SUCCESS) return false;
    if (e.get_array().get(*out) != SUCCESS) return Wrong(key);
    return true;
  }
  bool Wrong(std::string_view key) {
    diagnostics_.Add(DiagCode::kTrtFieldWrongType, 1, fmt::format("{}: {}", file_, key));
    return false;
  }
  void Incomplete(std::string_view what) {
    diagnostics_.Add(DiagCode::kTrtRecordIncomplete, 1, fmt::format("{}: {}", file_, what));
  }

 private:
  Diagnostics& diagnostics_;
  const char* file_;
};

StatusOr<dom::element> Parse(dom::parser& parser, std::string_view json, TrtFileKind kind,
                             const std::string& path) {
  dom::element doc;
  if (auto err = parser.parse(json.data(), json.size()).get(doc); err != SUCCESS) {
    return Bad(kind, path, fmt::format("not valid JSON ({})", simdjson::error_message(err)));
  }
  return doc;
}

int64_t BytesPerElement(std::string_view type) {
  if (type == "Float" || type == "Int32" || type == "FP32") return 4;
  if (type == "Half" || type == "BFloat16" || type == "BF16" || type == "FP16") return 2;
  if (type == "Int8" || type == "FP8" || type == "UInt8" || type == "Bool") return 1;
  if (type == "Int64") return 8;
  return 0;
}

void ReadTensors(Fields& f, dom::object layer, std::string_view key, std::vector<TrtTensor>* out) {
  dom::array a;
  if (!f.Arr(layer, key, &a)) return;
  for (dom::element e : a) {
    dom::object t;
    if (e.get_object().get(t) != SUCCESS) {
      f.Wrong(fmt::format("{}[]", key));
      continue;
    }
    TrtTensor& x = out->emplace_back();
    f.Str(t, "Name", &x.name);
    f.Str(t, "Location", &x.location);
    if (f.Str(t, "Format/Datatype", &x.format)) x.precision = TrtPrecisionOfFormat(x.format);
    dom::array dims;
    if (f.Arr(t, "Dimensions", &dims)) {
      for (dom::element d : dims) {
        int64_t v = 0;
        if (d.get_int64().get(v) != SUCCESS) {
          f.Wrong("Dimensions[]");
          x.dims.clear();
          break;
        }
        x.dims.push_back(v);
      }
    }
  }
}

void AddWeights(Fields& f, dom::object layer, std::string_view key, TrtLayer& l) {
  dom::object w;
  if (!f.Obj(layer, key, &w)) return;
  int64_t count = 0;
  std::string type;
  if (!f.Int(w, "Count", &count) || count < 0) return;
  f.Str(w, "Type", &type);
  l.weights_count += count;
  l.weights_bytes += count * BytesPerElement(type);
}

std::map<std::string, std::string> StringMap(Fields& f, dom::object o) {
  std::map<std::string, std::string> out;
  for (auto [key, value] : o) {
    std::string_view s;
    if (value.get_string().get(s) == SUCCESS) {
      out[std::string(key)] = std::string(s);
    } else if (double v = 0; value.is_number() && value.get_double().get(v) == SUCCESS) {
      out[std::string(key)] = fmt::format("{}", v);  // shown, never computed with
    } else {
      f.Wrong(key);
    }
  }
  return out;
}

}  // namespace

const char* TrtFileKindName(TrtFileKind kind) {
  switch (kind) {
    case TrtFileKind::kNone:
      return "none";
    case TrtFileKind::kGraph:
      return "graph";
    case TrtFileKind::kProfile:
      return "profile";
    case TrtFileKind::kTiming:
      return "timing";
    case TrtFileKind::kDeviceMetadata:
      return "metadata";
    case TrtFileKind::kBuildMetadata:
      return "build metadata";
    case TrtFileKind::kProfileMetadata:
      return "profile metadata";
  }
  return "?";
}

std::string TrtPrecisionOfFormat(std::string_view format) {
  // The data type is one word of the format's description; TensorRT spells Int8 and FP16.
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"FP32", "FP32"},   {"FP16", "FP16"},   {"BF16", "BF16"}, {"FP8", "FP8"},
      {"FP4", "FP4"},     {"Int8", "INT8"},   {"INT8", "INT8"}, {"Int32", "INT32"},
      {"Int64", "INT64"}, {"UInt8", "UINT8"}, {"Int4", "INT4"}, {"INT4", "INT4"},
      {"Bool", "BOOL"}};
  size_t pos = 0;
  while (pos < format.size()) {
    const size_t end = std::min(format.find(' ', pos), format.size());
    const std::string_view word = format.substr(pos, end - pos);
    for (const auto& [name, precision] : kTypes) {
      if (word == name) return std::string(precision);
    }
    pos = end + 1;
  }
  return "";
}

StatusOr<TrtGraph> ParseTrtGraph(std::string_view json, const std::string& path,
                                 Diagnostics& diagnostics) {
  constexpr TrtFileKind kKind = TrtFileKind::kGraph;
  dom::parser parser;
  ASSIGN_OR_RETURN(dom::element doc, Parse(parser, json, kKind, path));
  dom::object o;
  if (doc.get_object().get(o) != SUCCESS) return Bad(kKind, path, "not a JSON object");
  dom::array layers;
  if (o["Layers"].get_array().get(layers) != SUCCESS) {
    return Bad(kKind, path, "no \"Layers\" array");
  }
  Fields f(diagnostics, "graph");
  TrtGraph g;
  for (dom::element e : layers) {
    std::string_view name;
    if (e.get_string().get(name) == SUCCESS) {  // --profilingVerbosity other than detailed
      g.names_only = true;
      g.layers.emplace_back().name = std::string(name);
      continue;
    }
    dom::object lo;
    if (e.get_object().get(lo) != SUCCESS) {
      f.Wrong("Layers[]");
      continue;
    }
    TrtLayer l;
    if (!f.Str(lo, "Name", &l.name)) {
      f.Incomplete("layer without a Name");
      continue;
    }
    f.Str(lo, "LayerType", &l.type);
    f.Str(lo, "ParameterType", &l.parameter_type);
    f.Str(lo, "Origin", &l.origin);
    f.Str(lo, "Metadata", &l.metadata);
    if (!f.Str(lo, "TacticName", &l.tactic)) f.Str(lo, "TacticValue", &l.tactic);
    ReadTensors(f, lo, "Inputs", &l.inputs);
    ReadTensors(f, lo, "Outputs", &l.outputs);
    AddWeights(f, lo, "Weights", l);
    AddWeights(f, lo, "Bias", l);
    g.layers.push_back(std::move(l));
  }
  dom::array bindings;
  if (f.Arr(o, "Bindings", &bindings)) {
    for (dom::element e : bindings) {
      std::string_view b;
      if (e.get_string().get(b) == SUCCESS) {
        g.bindings.emplace_back(b);
      } else {
        f.Wrong("Bindings[]");
      }
    }
  }
  return g;
}

StatusOr<TrtProfile> ParseTrtProfile(std::string_view json, const std::string& path,
                                     Diagnostics& diagnostics) {
  constexpr TrtFileKind kKind = TrtFileKind::kProfile;
  dom::parser parser;
  ASSIGN_OR_RETURN(dom::element doc, Parse(parser, json, kKind, path));
  dom::array a;
  if (doc.get_array().get(a) != SUCCESS) return Bad(kKind, path, "not a JSON array");
  Fields f(diagnostics, "profile");
  TrtProfile p;
  bool first = true;
  for (dom::element e : a) {
    dom::object o;
    if (e.get_object().get(o) != SUCCESS) {
      f.Wrong("[]");
      first = false;
      continue;
    }
    if (first) {
      first = false;
      if (f.Int(o, "count", &p.count)) {
        if (p.count <= 0) return Bad(kKind, path, "\"count\" is not a positive number of runs");
        continue;
      }
    }
    TrtProfileRow r;
    if (!f.Str(o, "name", &r.name)) {
      f.Incomplete("row without a name");
      continue;
    }
    if (!f.Num(o, "averageMs", &r.average_ms) || !std::isfinite(r.average_ms) || r.average_ms < 0) {
      f.Incomplete("row without a non-negative averageMs");
      continue;
    }
    if (!f.Num(o, "medianMs", &r.median_ms)) r.median_ms = r.average_ms;
    if (!f.Num(o, "timeMs", &r.time_ms)) r.time_ms = r.average_ms * std::max<int64_t>(p.count, 1);
    f.Num(o, "percentage", &r.percentage);
    p.rows.push_back(std::move(r));
  }
  if (p.count == 0) p.count = 1;  // exports without the count row: one run
  if (p.rows.empty()) return Bad(kKind, path, "no layer rows (name, averageMs)");
  return p;
}

StatusOr<TrtTiming> ParseTrtTiming(std::string_view json, const std::string& path,
                                   Diagnostics& diagnostics) {
  constexpr TrtFileKind kKind = TrtFileKind::kTiming;
  dom::parser parser;
  ASSIGN_OR_RETURN(dom::element doc, Parse(parser, json, kKind, path));
  dom::array a;
  if (doc.get_array().get(a) != SUCCESS) return Bad(kKind, path, "not a JSON array");
  Fields f(diagnostics, "timing");
  TrtTiming t;
  for (dom::element e : a) {
    dom::object o;
    if (e.get_object().get(o) != SUCCESS) {
      f.Wrong("[]");
      continue;
    }
    TrtInference x;
    // Required: the enqueue and compute spans and the latency; copies may be absent (no transfers).
    struct Req {
      const char* key;
      double* v;
    };
    const Req required[] = {{"startEnqMs", &x.start_enq_ms},
                            {"endEnqMs", &x.end_enq_ms},
                            {"startComputeMs", &x.start_compute_ms},
                            {"endComputeMs", &x.end_compute_ms},
                            {"computeMs", &x.compute_ms},
                            {"latencyMs", &x.latency_ms}};
    bool ok = true;
    for (const Req& r : required) {
      if (!f.Num(o, r.key, r.v) || !std::isfinite(*r.v) || *r.v < 0) {
        f.Incomplete(fmt::format("record without a non-negative {}", r.key));
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    x.start_h2d_ms = x.end_h2d_ms = x.start_compute_ms;
    x.start_d2h_ms = x.end_d2h_ms = x.end_compute_ms;
    const Req optional[] = {{"startH2dMs", &x.start_h2d_ms},
                            {"endH2dMs", &x.end_h2d_ms},
                            {"startD2hMs", &x.start_d2h_ms},
                            {"endD2hMs", &x.end_d2h_ms},
                            {"h2dMs", &x.h2d_ms},
                            {"d2hMs", &x.d2h_ms}};
    for (const Req& r : optional) {
      if (f.Num(o, r.key, r.v) && (!std::isfinite(*r.v) || *r.v < 0)) {
        f.Incomplete(fmt::format("negative or non-finite {} (taken as 0)", r.key));
        *r.v = 0;
      }
    }
    if (x.end_enq_ms < x.start_enq_ms || x.end_compute_ms < x.start_compute_ms) {
      f.Incomplete("record that ends before it starts");
      continue;
    }
    t.inferences.push_back(x);
  }
  if (t.inferences.empty()) {
    return Bad(kKind, path, "no inference records (startEnqMs, endEnqMs, computeMs, latencyMs...)");
  }
  return t;
}

Status ParseTrtMetadata(std::string_view json, TrtFileKind kind, const std::string& path,
                        TrtMetadata& m, Diagnostics& diagnostics) {
  dom::parser parser;
  ASSIGN_OR_RETURN(dom::element doc, Parse(parser, json, kind, path));
  Fields f(diagnostics, TrtFileKindName(kind));
  if (kind == TrtFileKind::kDeviceMetadata) {
    dom::array a;
    dom::object d;
    if (doc.get_array().get(a) != SUCCESS || a.size() == 0 ||
        a.at(0).get_object().get(d) != SUCCESS) {
      return Bad(kind, path, "not an array of device objects");
    }
    f.Str(d, "Name", &m.device);
    dom::array cc;
    if (f.Arr(d, "ComputeCapability", &cc) && cc.size() == 2) {
      int64_t major = 0, minor = 0;
      if (cc.at(0).get_int64().get(major) == SUCCESS &&
          cc.at(1).get_int64().get(minor) == SUCCESS) {
        m.compute_capability = fmt::format("{}.{}", major, minor);
      } else {
        f.Wrong("ComputeCapability[]");
      }
    }
    f.Int(d, "MULTIPROCESSOR_COUNT", &m.sms);
    f.Int(d, "TotalMemory", &m.total_memory_bytes);
    return Status::Ok();
  }
  dom::object o;
  if (doc.get_object().get(o) != SUCCESS) return Bad(kind, path, "not a JSON object");
  if (kind == TrtFileKind::kBuildMetadata) {
    dom::object x;
    if (f.Obj(o, "build_options", &x)) m.build_options = StringMap(f, x);
    if (f.Obj(o, "model_options", &x)) m.model_options = StringMap(f, x);
    return Status::Ok();
  }
  dom::object x;
  if (f.Obj(o, "inference_options", &x)) m.inference_options = StringMap(f, x);
  if (f.Obj(o, "device_information", &x)) {
    std::string device;
    if (f.Str(x, "Selected Device", &device) && m.device.empty()) m.device = device;
    double v = 0;
    if (f.Num(x, "Compute Capability", &v) && m.compute_capability.empty()) {
      m.compute_capability = fmt::format("{:.1f}", v);
    }
    if (f.Num(x, "SMs", &v) && m.sms == 0) {
      // A count: anything but a whole number of plausible size is the wrong type, not a cast.
      if (v >= 1 && v <= 1e6 && v == std::floor(v)) {
        m.sms = static_cast<int64_t>(v);
      } else {
        f.Wrong("device_information.SMs");
      }
    }
  }
  if (f.Obj(o, "performance_summary", &x)) {
    for (auto [key, value] : x) {
      std::vector<double> values;
      double v = 0;
      dom::array a;
      if (value.is_number() && value.get_double().get(v) == SUCCESS) {
        values.push_back(v);
      } else if (value.get_array().get(a) == SUCCESS) {
        for (dom::element e : a) {
          if (!e.is_number() || e.get_double().get(v) != SUCCESS) {
            f.Wrong(fmt::format("performance_summary.{}[]", key));
            values.clear();
            break;
          }
          values.push_back(v);
        }
      } else {
        f.Wrong(fmt::format("performance_summary.{}", key));
      }
      if (!values.empty()) m.performance[std::string(key)] = std::move(values);
    }
  }
  return Status::Ok();
}

}  // namespace sightline
