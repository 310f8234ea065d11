#include "importers/inputs.h"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "base/file_io.h"
#include "importers/importer.h"
#include "importers/iteration_log/trtllm_iteration_log.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/kineto/kineto_sniff.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/own_outputs.h"
#include "importers/recorder/recorder_importer.h"
#include "importers/serving_results/request_log.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"

namespace sightline {
namespace {

std::string_view TrimLeft(std::string_view s) {
  if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);
  const size_t i = s.find_first_not_of(" \t\r\n");
  return i == std::string_view::npos ? std::string_view() : s.substr(i);
}

// ---- sniffers over the decompressed head ----

bool SniffResults(std::string_view head, ResultsFormat format) {
  return DetectResultsFormat(head) == format;
}
bool SniffVllm(std::string_view h) { return SniffResults(h, ResultsFormat::kVllm); }
bool SniffSglang(std::string_view h) { return SniffResults(h, ResultsFormat::kSglang); }
bool SniffAiperf(std::string_view h) { return SniffResults(h, ResultsFormat::kAiperf); }
bool SniffTrtllmBench(std::string_view h) { return SniffResults(h, ResultsFormat::kTrtllmBench); }
bool SniffRequestLog(std::string_view h) { return SniffResults(h, ResultsFormat::kRequestLog); }

bool SniffTrt(std::string_view head) { return TrtFileKindOfHead(head) != TrtFileKind::kNone; }

// Sightline's own log: the first line is a JSON object with schema_version and iteration.
bool SniffSightlineIterationLog(std::string_view head) {
  const std::string_view body = TrimLeft(head);
  const std::string_view line = body.substr(0, body.find('\n'));
  return line.starts_with("{") && line.find("\"schema_version\"") != std::string_view::npos &&
         line.find("\"iteration\"") != std::string_view::npos &&
         line.find("\"request\"") == std::string_view::npos;
}

// TensorRT-LLM's iteration statistics in any of their shapes: the reader itself decides, over
// the complete lines of the head.
bool SniffTrtllmIterationLog(std::string_view head) {
  const std::string_view body = TrimLeft(head);
  if (body.starts_with("[") && body.find("\"iterLatencyMS\"") != std::string_view::npos)
    return true;
  const size_t last_newline = head.rfind('\n');
  const std::string_view lines =
      last_newline == std::string_view::npos ? head : head.substr(0, last_newline);
  std::optional<StatusOr<IterationLog>> log = ParseTrtllmIterationLog(lines, "");
  return log.has_value() && log->ok() && !(*log)->entries.empty();
}

// The details or raw page: a table whose header line starts with "ID" and names the kernel. Lines
// before it are skipped by the reader (ncu's "==PROF==" lines, the profiled program's own output
// when the CSV went to standard output), so any may come before it here too.
bool SniffNcuCsv(std::string_view head) {
  std::string_view rest = TrimLeft(head);
  while (!rest.empty()) {
    if (rest.starts_with("\"ID\",") || rest.starts_with("ID,")) {
      const std::string_view header = rest.substr(0, rest.find('\n'));
      if (header.find("Kernel Name") != std::string_view::npos) return true;
    }
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return false;
    rest = rest.substr(nl + 1);
  }
  return false;
}

bool SniffNcuSource(std::string_view head) { return LooksLikeNcuSourceCsv(head); }

bool SniffSweep(std::string_view head) { return TrimLeft(head).starts_with(kSweepCsvHeader); }

// A Chrome-trace JSON object as Kineto writes it: one of its top-level keys near the start; or
// Chrome's JSON Array Format (the events alone), whose first event has a phase ("ph").
bool SniffKineto(std::string_view head) {
  const std::string_view body = TrimLeft(head);
  if (body.starts_with("[")) {
    const std::string_view first = TrimLeft(body.substr(1));
    const size_t end = first.find('}');
    return first.starts_with("{") && first.substr(0, end).find("\"ph\"") != std::string_view::npos;
  }
  if (!kineto::LooksLikeJsonObject(head)) return false;
  for (std::string_view key : {"\"traceEvents\"", "\"schemaVersion\"", "\"deviceProperties\"",
                               "\"displayTimeUnit\"", "\"distributedInfo\"", "\"traceName\""}) {
    if (head.find(key) != std::string_view::npos) return true;
  }
  // A first field larger than the head (metadata before traceEvents): the reader decides.
  return kineto::FirstFieldRunsPastHead(head);
}

// ---- readers ----

template <StatusOr<Trace> (*Import)(const std::string&, const ImportOptions&)>
StatusOr<InputDocumentValue> ReadTrace(const std::string& path) {
  ASSIGN_OR_RETURN(Trace trace, Import(path, ImportOptions{}));
  RETURN_IF_ERROR(CheckTraceUsable(trace, path));
  if (trace.source.path.empty()) trace.source.path = path;
  return InputDocumentValue(std::move(trace));
}

StatusOr<InputDocumentValue> ReadResults(const std::string& path) {
  ASSIGN_OR_RETURN(RequestResults r, ReadRequestResults(path));
  return InputDocumentValue(std::move(r));
}

StatusOr<InputDocumentValue> ReadIterations(const std::string& path) {
  ASSIGN_OR_RETURN(IterationLog log, ReadIterationLog(path));
  return InputDocumentValue(std::move(log));
}

StatusOr<InputDocumentValue> ReadTrt(const std::string& path) {
  ASSIGN_OR_RETURN(TrtEngine engine, ReadTrtEngine(path));
  return InputDocumentValue(std::move(engine));
}

StatusOr<InputDocumentValue> ReadNcu(const std::string& path) {
  ASSIGN_OR_RETURN(NcuExport e, ReadNcuCsv(path));
  return InputDocumentValue(std::move(e));
}

StatusOr<InputDocumentValue> ReadNcuSource(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadInput(path));
  ASSIGN_OR_RETURN(NcuSourceExport e, ParseNcuSourceCsv(text, path));
  return InputDocumentValue(std::move(e));
}

StatusOr<InputDocumentValue> ReadConfig(const std::string& path) {
  ASSIGN_OR_RETURN(ModelConfig config, ReadModelConfig(path));
  return InputDocumentValue(std::move(config));
}

StatusOr<InputDocumentValue> ReadSweep(const std::string& path) {
  ASSIGN_OR_RETURN(SweepRows rows, ReadSweepCsvFiles({path}));
  return InputDocumentValue(std::move(rows));
}

// What a file no reader takes looks like, for the error.
std::string DescribeUnknown(std::string_view head) {
  const std::string_view body = TrimLeft(head);
  if (body.empty()) return "it holds only white space";
  if (body.front() == '{' || body.front() == '[') {
    return "it is JSON, but none of the JSON formats below (no key that names one near its start)";
  }
  if (head.find('\0') != std::string_view::npos) return "it is binary, of no format below";
  return "it is text, of no format below";
}

}  // namespace

const char* InputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kTrace:
      return "trace";
    case InputKind::kServingResults:
      return "serving results";
    case InputKind::kIterationLog:
      return "iteration log";
    case InputKind::kTrtEngine:
      return "TensorRT engine export";
    case InputKind::kNcuExport:
      return "Nsight Compute export";
    case InputKind::kNcuSource:
      return "Nsight Compute source page";
    case InputKind::kAllreduceSweep:
      return "all-reduce sweep";
    case InputKind::kModelConfig:
      return "model config";
  }
  return "input";
}

const std::vector<InputReaderEntry>& InputReaders() {
  static const std::vector<InputReaderEntry> kReaders = {
      // Binary formats: a magic number.
      {"nsys-sqlite", "Nsight Systems SQLite export (nsys export --type sqlite)", InputKind::kTrace,
       &SniffNsysSqlite, &ReadTrace<&ImportNsysSqlite>},
      {"sightline-recorder", "sightline record file (.slrec)", InputKind::kTrace,
       &SniffRecorderFile, &ReadTrace<&ImportRecorderFile>},
      {"torch-memory-snapshot",
       "PyTorch memory snapshot (torch.cuda.memory._dump_snapshot, a plain-data pickle)",
       InputKind::kTrace, &SniffTorchSnapshot, &ReadTrace<&ImportTorchSnapshot>},
      // Text formats with a fixed start.
      {"allreduce-sweep-csv", "sightline allreduce sweep CSV (sightline-allreduce-bench --csv)",
       InputKind::kAllreduceSweep, &SniffSweep, &ReadSweep},
      {"ncu-csv", "Nsight Compute CSV, details or raw page (ncu --csv --page details|raw)",
       InputKind::kNcuExport, &SniffNcuCsv, &ReadNcu},
      {"ncu-source-csv", "Nsight Compute CSV, source page (ncu --csv --page source)",
       InputKind::kNcuSource, &SniffNcuSource, &ReadNcuSource},
      // JSON formats, recognised by their keys.
      {"hf-model-config", "Hugging Face model config.json (--model-config: the floor analysis)",
       InputKind::kModelConfig, &LooksLikeModelConfig, &ReadConfig},
      {"request-log", "Sightline request log (JSON lines: schema_version, request)",
       InputKind::kServingResults, &SniffRequestLog, &ReadResults},
      {"sightline-iteration-log", "Sightline iteration log (SIGHTLINE_ITERATION_LOG, JSON lines)",
       InputKind::kIterationLog, &SniffSightlineIterationLog, &ReadIterations},
      {"aiperf-records", "AIPerf per-request records (profile_export.jsonl)",
       InputKind::kServingResults, &SniffAiperf, &ReadResults},
      {"trtllm-bench-report", "trtllm-bench --report_json (aggregates)", InputKind::kServingResults,
       &SniffTrtllmBench, &ReadResults},
      {"sglang-bench-serving", "SGLang bench_serving results (--output-file)",
       InputKind::kServingResults, &SniffSglang, &ReadResults},
      {"vllm-bench-results", "vLLM benchmark_serving / vllm bench serve results (--save-result)",
       InputKind::kServingResults, &SniffVllm, &ReadResults},
      {"trt-engine-export",
       "TensorRT engine export (trtexec --exportLayerInfo/--exportProfile/--exportTimes, Trex "
       "metadata)",
       InputKind::kTrtEngine, &SniffTrt, &ReadTrt},
      {"kineto-json", "PyTorch profiler (Kineto) Chrome-trace JSON (object or bare event array)",
       InputKind::kTrace, &SniffKineto, &ReadTrace<&ImportKinetoJson>},
      // Logs: whatever is left, if TensorRT-LLM's statistics are in it.
      {"trtllm-iteration-stats",
       "TensorRT-LLM iteration statistics (IterationStats JSON, py_executor or C++ runtime log)",
       InputKind::kIterationLog, &SniffTrtllmIterationLog, &ReadIterations},
  };
  return kReaders;
}

StatusOr<RecognisedInput> RecogniseInput(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(fmt::format(
        "{}: is a directory; `sightline analyze DIR` reads every file in it that a reader takes",
        path));
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A pipe (<(zcat f), /dev/stdin) can be read once; recognising the format reads its start, so
    // the reader would get the rest. A device (/dev/zero) never ends.
    return InvalidArgumentError(fmt::format(
        "{}: not a regular file ({}); Sightline reads an input twice (its first bytes to "
        "recognise the format, then the whole), which a pipe cannot give. Write it to a file "
        "first, or give the compressed file itself: gzip and zstd are read directly",
        path,
        S_ISFIFO(st.st_mode)  ? "a pipe"
        : S_ISCHR(st.st_mode) ? "a device"
                              : "not a file"));
  }
  ASSIGN_OR_RETURN(InputHead head, ReadInputHead(path, kInputHeadBytes));
  RecognisedInput in;
  in.path = path;
  in.compression = head.compression;
  if (head.bytes.empty()) {
    return InvalidInputError(fmt::format(
        "{}: the file is {}empty; the tool that wrote it may not have finished (write it again)",
        path, head.compression == Compression::kNone ? "" : "(once decompressed) "));
  }
  for (const InputReaderEntry& r : InputReaders()) {
    if (r.sniff(head.bytes)) {
      in.reader = &r;
      return in;
    }
  }
  std::string known;
  for (const InputReaderEntry& r : InputReaders()) known += fmt::format("\n  - {}", r.description);
  return InvalidInputError(fmt::format(
      "{}: not a format Sightline reads ({}; recognised from the content, never the name). "
      "Read are, plain, gzip'd or zstd'd:{}\nFor an .nsys-rep file, run `nsys export --type "
      "sqlite -o FILE.sqlite FILE.nsys-rep` first; for an .ncu-rep file, `ncu --import FILE "
      "--csv --page details > FILE.csv`.",
      path, DescribeUnknown(head.bytes), known));
}

StatusOr<InputDocument> ReadRecognisedInput(const RecognisedInput& input) {
  ASSIGN_OR_RETURN(InputDocumentValue value, input.reader->read(input.path));
  return InputDocument{input.path, input.reader, std::move(value)};
}

StatusOr<InputDocument> OpenInput(const std::string& path) {
  ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(path));
  return ReadRecognisedInput(in);
}

StatusOr<InputDocument> OpenInputOfKind(const std::string& path, InputKind kind,
                                        std::string_view wanted) {
  StatusOr<RecognisedInput> recognised = RecogniseInput(path);
  if (!recognised.ok() && recognised.status().code() == StatusCode::kInvalidInput) {
    // Of no format, where one format is wanted: read it as that reader would, whose error says
    // what the format needs and the file lacks (more use than a list of every format).
    const InputReaderEntry* only = nullptr;
    int readers = 0;
    for (const InputReaderEntry& r : InputReaders()) {
      if (r.kind != kind) continue;
      only = &r;
      ++readers;
    }
    if (readers == 1) {
      ASSIGN_OR_RETURN(InputDocumentValue value, only->read(path));
      return InputDocument{path, only, std::move(value)};
    }
  }
  ASSIGN_OR_RETURN(RecognisedInput in, std::move(recognised));
  if (in.reader->kind != kind) {
    return InvalidArgumentError(fmt::format(
        "{}: {} reads the kind '{}', but this file is of the kind '{}' ({}); give it as a plain "
        "input of `sightline "
        "analyze` (which sorts inputs by what they are) or to the command that reads it",
        path, wanted, InputKindName(kind), InputKindName(in.reader->kind), in.reader->description));
  }
  return ReadRecognisedInput(in);
}

StatusOr<ExpandedInputs> ExpandInputs(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  ExpandedInputs out;
  auto add = [&](const std::string& path) -> Status {
    ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(path));
    out.inputs.push_back(std::move(in));
    return Status::Ok();
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file(ec) || name.empty() || name[0] == '.') continue;
        files.push_back(e.path().string());
      }
      if (ec) return InvalidArgumentError(fmt::format("{}: cannot list: {}", path, ec.message()));
      std::sort(files.begin(), files.end());
      size_t taken = 0;
      for (const std::string& f : files) {
        if (IsSightlineReport(f)) {  // an earlier run's report: an output, not an input
          out.own_outputs.push_back(f);
          continue;
        }
        StatusOr<RecognisedInput> in = RecogniseInput(f);
        if (in.ok()) {
          out.inputs.push_back(std::move(*in));
          ++taken;
        } else if (in.status().code() == StatusCode::kInvalidInput) {
          out.skipped.push_back(f);  // not a format: counted and named, not an error
        } else {
          return in.status();
        }
      }
      if (taken == 0) {
        return InvalidArgumentError(fmt::format(
            "{}: the directory holds no file Sightline reads ({} files looked at, by content); "
            "`sightline formats` lists what is read",
            path, files.size()));
      }
    } else if (!fs::exists(path, ec) && path.find_first_of("*?[") != std::string::npos) {
      // A pattern the shell did not expand (quoted, or from a script).
      glob_t g{};
      const int rc = glob(path.c_str(), 0, nullptr, &g);
      std::vector<std::string> files;
      if (rc == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
      }
      globfree(&g);
      if (files.empty()) {
        return InvalidArgumentError(fmt::format("{}: no file matches this pattern", path));
      }
      for (const std::string& f : files) RETURN_IF_ERROR(add(f));  // glob sorts them
    } else {
      RETURN_IF_ERROR(add(path));
    }
  }
  return out;
}

}  // namespace sightline
