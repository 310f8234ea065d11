#include "importers/inputs.h"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "base/file_io.h"
#include "base/input_sniff.h"
#include "importers/allreduce_sweep/sweep_reader.h"
#include "importers/importer.h"
#include "importers/iteration_log/iteration_log_readers.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/kineto/kineto_sniff.h"
#include "importers/ncu/ncu_readers.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/own_outputs.h"
#include "importers/recorder/recorder_importer.h"
#include "importers/serving_results/request_log.h"
#include "importers/serving_results/serving_readers.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"
#include "importers/trt_engine/trt_reader.h"

namespace sightline {
namespace {

template <StatusOr<Trace> (*Import)(const std::string&)>
StatusOr<InputDocumentValue> ReadTrace(const std::string& path) {
  ASSIGN_OR_RETURN(Trace trace, Import(path));
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

InputReaderEntry Entry(const ReaderSpec& spec, InputKind kind,
                       StatusOr<InputDocumentValue> (*read)(const std::string& path)) {
  return InputReaderEntry{spec.name, spec.description, kind, spec.sniff, read, spec.priority};
}

// What a file no reader takes looks like, for the error.
std::string DescribeUnknown(std::string_view head) {
  const std::string_view body = SkipBomAndSpace(head);
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
  // Each reader's name, description, sniffer and priority come from its folder (ReaderSpec,
  // base/input_sniff.h); here each is paired with its kind of document and its read, then sorted
  // by priority, the order the sniffers are tried in.
  static const std::vector<InputReaderEntry> kReaders = [] {
    std::vector<InputReaderEntry> r = {
        Entry(kNsysSqliteReader, InputKind::kTrace, &ReadTrace<&ImportNsysSqlite>),
        Entry(kRecorderReader, InputKind::kTrace, &ReadTrace<&ImportRecorderFile>),
        Entry(kTorchSnapshotReader, InputKind::kTrace, &ReadTrace<&ImportTorchSnapshot>),
        Entry(kSweepReader, InputKind::kAllreduceSweep, &ReadSweep),
        Entry(kNcuCsvReader, InputKind::kNcuExport, &ReadNcu),
        Entry(kNcuSourceReader, InputKind::kNcuSource, &ReadNcuSource),
        Entry(kModelConfigReader, InputKind::kModelConfig, &ReadConfig),
        Entry(kRequestLogReader, InputKind::kServingResults, &ReadResults),
        Entry(kSightlineIterationLogReader, InputKind::kIterationLog, &ReadIterations),
        Entry(kAiperfReader, InputKind::kServingResults, &ReadResults),
        Entry(kTrtllmBenchReader, InputKind::kServingResults, &ReadResults),
        Entry(kSglangReader, InputKind::kServingResults, &ReadResults),
        Entry(kVllmReader, InputKind::kServingResults, &ReadResults),
        Entry(kTrtEngineReader, InputKind::kTrtEngine, &ReadTrt),
        Entry(kKinetoReader, InputKind::kTrace, &ReadTrace<&ImportKinetoJson>),
        Entry(kTrtllmIterationLogReader, InputKind::kIterationLog, &ReadIterations),
    };
    std::stable_sort(r.begin(), r.end(), [](const InputReaderEntry& a, const InputReaderEntry& b) {
      return a.priority < b.priority;
    });
    return r;
  }();
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
