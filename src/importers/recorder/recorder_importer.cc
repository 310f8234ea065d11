#include "importers/recorder/recorder_importer.h"

#include <fmt/format.h>

#include <string>

#include "base/input_data.h"
#include "importers/recorder/recorder_mapper.h"
#include "importers/recorder/run_processes.h"
#include "model/trace_builder.h"
#include "shared/recorder_format.h"

namespace sightline {

bool SniffRecorderFile(std::string_view first_bytes) { return recfmt::HasFileMagic(first_bytes); }

namespace {

// `beside`: also look for the run's process tree in the file's folder (a file read from disk).
StatusOr<Trace> Import(std::string_view bytes, const std::string& path, bool beside) {
  TraceBuilder builder;
  RecorderMapper mapper(builder);
  recfmt::ReadSummary summary;
  const std::string error = recfmt::ReadRecords(
      bytes, &summary,
      [&](recfmt::RecordType type, std::string_view body) { mapper.Visit(type, body); });
  if (!error.empty()) {
    return InvalidInputError(fmt::format(
        "{}: {}. Recordings come from `sightline record`; re-record if the file was damaged.", path,
        error));
  }
  mapper.Finish(path, summary);
  // The run's other processes, from the launcher's process tree beside the file.
  if (const recfmt::ProcessBody* p = mapper.process(); p != nullptr && beside) {
    RunOfTrace run;
    run.trace_minus_monotonic_ns = p->start_cupti_ns - p->start_monotonic_ns;
    run.trace_minus_monotonic_at_end_ns = run.trace_minus_monotonic_ns;
    if (const recfmt::EndBody* e = mapper.end(); e != nullptr && e->end_monotonic_ns > 0) {
      run.trace_minus_monotonic_at_end_ns = e->end_cupti_ns - e->end_monotonic_ns;
      run.has_end = true;
    }
    run.pid = static_cast<int32_t>(p->pid);
    std::vector<RunProcess> processes =
        FindRunProcesses(path, run.trace_minus_monotonic_ns, builder.diagnostics(), &run);
    if (run.known()) run.host = builder.source().host;
    builder.SetRunProcesses(std::move(processes), std::move(run));
  }
  return builder.Finish();
}

}  // namespace

StatusOr<Trace> ImportRecorderBytes(std::string_view bytes, const std::string& path) {
  return Import(bytes, path, /*beside=*/false);
}

StatusOr<Trace> ImportRecorderFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
  return Import(bytes, path, /*beside=*/true);
}

}  // namespace sightline
