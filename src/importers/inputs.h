// The front door: every file Sightline reads comes in here. OpenInput recognises a file by its
// content (never its name), decompresses it (gzip, zstd; base/input_data.h), picks the reader that
// takes it from one registry and returns its document: a trace, a serving benchmark's results, an
// iteration log, a TensorRT engine's exports, an Nsight Compute export, an all-reduce sweep or a
// model's config. Errors have one style: what the file was taken for, what is wrong, where, and
// what to do. Adding a reader is a folder under importers/ with its sniffer and its ReaderSpec
// (name, description, priority: base/input_sniff.h), and one line in InputReaders() (inputs.cc)
// pairing the spec with its kind of document and its read; docs/architecture.md.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/input_data.h"
#include "base/status.h"
#include "importers/allreduce_sweep/sweep_csv.h"
#include "importers/iteration_log/iteration_log.h"
#include "importers/model_config/model_config.h"
#include "importers/ncu/ncu_csv.h"
#include "importers/ncu/ncu_source.h"
#include "importers/serving_results/request_results.h"
#include "importers/trt_engine/trt_engine.h"
#include "model/trace.h"

namespace sightline {

// What a document is. What becomes of it is its kind's entry in the registry of document kinds
// (analyses/common/document_kind.h); the pipeline names none.
enum class InputKind {
  kTrace,           // a timeline: nsys export, Kineto JSON, recording, memory snapshot
  kServingResults,  // a serving benchmark's results or a request log
  kIterationLog,    // per-iteration log (Sightline's, TensorRT-LLM's)
  kTrtEngine,       // a TensorRT engine's exports (trtexec, Trex)
  kNcuExport,       // Nsight Compute CSV (details/raw page)
  kNcuSource,       // Nsight Compute CSV (source page)
  kAllreduceSweep,  // sightline allreduce sweep CSV
  kModelConfig,     // a Hugging Face model's config.json (the floor analysis)
};
const char* InputKindName(InputKind kind);  // "trace", "serving results", ...

using SweepRows = std::vector<SweepRow>;
using InputDocumentValue = std::variant<Trace, RequestResults, IterationLog, TrtEngine, NcuExport,
                                        NcuSourceExport, SweepRows, ModelConfig>;

struct InputReaderEntry;

// A file and the reader that took it (its document not read yet).
struct RecognisedInput {
  std::string path;
  const InputReaderEntry* reader = nullptr;
  Compression compression = Compression::kNone;
};

struct InputDocument {
  std::string path;
  const InputReaderEntry* reader = nullptr;
  InputDocumentValue value;
};

struct InputReaderEntry {
  const char* name;         // "nsys-sqlite", "vllm-bench-results", ...
  const char* description;  // one line, for --help, `sightline formats` and errors
  InputKind kind;
  // True when the first bytes of the content (decompressed, up to kInputHeadBytes) are this
  // format. Sniffers are tried in order of priority; the first that says yes reads the file.
  bool (*sniff)(std::string_view head);
  StatusOr<InputDocumentValue> (*read)(const std::string& path);
  int priority;  // its place in the sniffing order, lowest first (ReaderSpec::priority)
};

inline constexpr size_t kInputHeadBytes = 64 * 1024;

// Every reader, in sniffing order (the specific before the general).
const std::vector<InputReaderEntry>& InputReaders();

// The reader that takes `path`, from its content. InvalidInput naming what the file looks like
// and listing the formats when none does; NotFound, IoError and InvalidArgument (a directory) as
// the file system says.
StatusOr<RecognisedInput> RecogniseInput(const std::string& path);

// RecogniseInput, then the reader. A trace with nothing usable left is an error
// (CheckTraceUsable).
StatusOr<InputDocument> OpenInput(const std::string& path);
StatusOr<InputDocument> ReadRecognisedInput(const RecognisedInput& input);

// The same, refusing a document of another kind with a message that says what the file is and
// where it belongs (`wanted` names the option or argument, e.g. "--requests").
StatusOr<InputDocument> OpenInputOfKind(const std::string& path, InputKind kind,
                                        std::string_view wanted);

// Each directory becomes the files in it that a reader takes (sorted by name; hidden files and
// subdirectories left out, Sightline's own reports in `own_outputs`, and the others counted in
// `skipped` with their names); each pattern
// with * ? [ that names no existing file becomes its matches (sorted); other paths stay as given
// and are recognised, so that a file no reader takes is an error here.
struct ExpandedInputs {
  std::vector<RecognisedInput> inputs;
  std::vector<std::string> skipped;  // files in named directories that no reader takes
  // Sightline's own reports in named directories (an earlier run's -o DIR/report.txt), left out
  // (own_outputs.h).
  std::vector<std::string> own_outputs;
};
StatusOr<ExpandedInputs> ExpandInputs(const std::vector<std::string>& paths);

}  // namespace sightline
