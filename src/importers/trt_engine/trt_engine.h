// A TensorRT engine as trtexec and Trex describe it: the files that share a prefix E (E.graph.json
// from --exportLayerInfo, E.profile.json from --exportProfile, E.timing.json[.gz] from
// --exportTimes, Trex's E.metadata.json / E.build.metadata.json / E.profile.metadata.json), read
// into plain structs. Not a timeline: the trt stage's analysis (trt/trt_analysis.h) and report
// (trt/trt_report.h) read these. Times are in milliseconds here, as the files write them; the
// report converts to ns. Formats: docs/formats/trt-graph-json.md, trt-profile-json.md,
// trt-timing-json.md.
//
// Fields of the wrong JSON type are counted (diagnostic trt_field_wrong_type, detail "file:field")
// and dropped, never converted; a file that is not the format at all is an error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/diagnostics.h"

namespace sightline {

// What a file of an engine is, recognised from its content (TrtFileKindOf).
enum class TrtFileKind {
  kNone,             // not a TensorRT export
  kGraph,            // {"Layers": [...], "Bindings": [...]}
  kProfile,          // [{"count": N}, {"name": ..., "timeMs": ...}, ...]
  kTiming,           // [{"startEnqMs": ..., "computeMs": ...}, ...]
  kDeviceMetadata,   // Trex E.metadata.json: [{"Name": ..., "ComputeCapability": [8, 0], ...}]
  kBuildMetadata,    // Trex E.build.metadata.json: {"model_options": ..., "build_options": ...}
  kProfileMetadata,  // Trex E.profile.metadata.json: {"performance_summary": ..., ...}
};
const char* TrtFileKindName(TrtFileKind kind);

struct TrtTensor {
  std::string name;
  std::string location;       // "Device", "Host"
  std::vector<int64_t> dims;  // "Dimensions"
  std::string format;         // "Format/Datatype", e.g. "Channel major FP16 format where ..."
  std::string precision;      // from `format`: "FP32", "FP16", "INT8", ...; "" when unknown
};

struct TrtLayer {
  std::string name;
  std::string type;            // "LayerType": CaskConvolution, Reformat, NoOp, Myelin, ...
  std::string parameter_type;  // "ParameterType"
  std::string origin;          // "Origin": REFORMAT (inserted by the builder), QDQ, ...
  std::string tactic;          // "TacticName", else "TacticValue"
  std::string metadata;        // "Metadata" (TensorRT 10: the ONNX nodes, separated by \x1e)
  std::vector<TrtTensor> inputs, outputs;
  int64_t weights_count = 0;  // elements of "Weights" + "Bias"
  int64_t weights_bytes = 0;  // the same in bytes, where "Type" is known
};

struct TrtGraph {
  std::vector<TrtLayer> layers;       // in engine (execution) order
  std::vector<std::string> bindings;  // "Bindings": the engine's inputs and outputs
  bool names_only = false;            // "Layers" held names only (profilingVerbosity not detailed)
};

struct TrtProfileRow {
  std::string name;
  double time_ms = 0;     // over all runs
  double average_ms = 0;  // per run
  double median_ms = 0;
  double percentage = 0;  // of the profile's total
};

struct TrtProfile {
  int64_t count = 0;  // runs profiled
  std::vector<TrtProfileRow> rows;
};

// One inference of --exportTimes. All in ms from the start of trtexec's measurement.
struct TrtInference {
  double start_enq_ms = 0, end_enq_ms = 0;
  double start_h2d_ms = 0, end_h2d_ms = 0;
  double start_compute_ms = 0, end_compute_ms = 0;
  double start_d2h_ms = 0, end_d2h_ms = 0;
  double h2d_ms = 0, compute_ms = 0, d2h_ms = 0, latency_ms = 0;
};

struct TrtTiming {
  std::vector<TrtInference> inferences;
};

// Trex's metadata files, the parts Sightline reads.
struct TrtMetadata {
  std::string device;              // "NVIDIA A100 80GB PCIe"
  std::string compute_capability;  // "8.0"
  int64_t sms = 0;
  int64_t total_memory_bytes = 0;
  std::map<std::string, std::string> build_options;      // "Precision" -> "FP32+FP16", ...
  std::map<std::string, std::string> model_options;      // "Model" -> path, "Format" -> "ONNX"
  std::map<std::string, std::string> inference_options;  // "CUDA Graph" -> "Enabled", ...
  // performance_summary: "GPU Compute Time" -> [min, max, mean, median, (p90, p95,) p99], ms;
  // "Throughput" -> [qps]; "Total Host Walltime" -> [s].
  std::map<std::string, std::vector<double>> performance;
};

// The files of one engine and what they hold; any of them may be missing.
struct TrtEngine {
  std::string name;                          // the prefix's file name, "resnet.onnx.engine"
  std::string prefix;                        // path without the suffix
  std::map<TrtFileKind, std::string> files;  // which file each part came from
  std::optional<TrtGraph> graph;
  std::optional<TrtProfile> profile;
  std::optional<TrtTiming> timing;
  std::optional<TrtMetadata> metadata;  // merged from the three metadata files
  Diagnostics diagnostics;
};

// The kind of a file from its first bytes (gzip'd files are inflated when small); kNone for
// anything else (a trace, a missing file).
TrtFileKind TrtFileKindOf(const std::string& path);
// The same from the first bytes of the (decompressed) content.
TrtFileKind TrtFileKindOfHead(std::string_view head);

// The engine prefix of a file named like trtexec's and Trex's exports ("E.graph.json" -> "E"), or
// "" when the name has none of their suffixes.
std::string TrtEnginePrefix(const std::string& path);

// Reads the engine that `path` belongs to: the file itself and its siblings that share its prefix.
// Errors name the file, what is wrong and what to do.
StatusOr<TrtEngine> ReadTrtEngine(const std::string& path);

// Readers of one file's text each (`path` names it in errors); they add to `diagnostics`.
StatusOr<TrtGraph> ParseTrtGraph(std::string_view json, const std::string& path,
                                 Diagnostics& diagnostics);
StatusOr<TrtProfile> ParseTrtProfile(std::string_view json, const std::string& path,
                                     Diagnostics& diagnostics);
StatusOr<TrtTiming> ParseTrtTiming(std::string_view json, const std::string& path,
                                   Diagnostics& diagnostics);
// Merges one metadata file of `kind` into `metadata`.
Status ParseTrtMetadata(std::string_view json, TrtFileKind kind, const std::string& path,
                        TrtMetadata& metadata, Diagnostics& diagnostics);

// "FP16" from "Channel major FP16 format where channel % 8 == 0", "INT8" from "... Int8 format";
// "" when no data type is named.
std::string TrtPrecisionOfFormat(std::string_view format);

}  // namespace sightline
