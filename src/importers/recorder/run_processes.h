// The process tree of a recorded run (`sightline record`'s NAME.processes.json) for one of its
// recordings: found beside the recording (the file whose processes name this recording) and put on
// the recording's clock. Internal to the recorder importer (and the list of files `analyze` read,
// which names the document beside its recordings); the document's schema is in
// docs/formats/recorder.md, "The processes of a run".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/diagnostics.h"
#include "model/run_processes.h"

namespace sightline {

// Parses a processes document. `monotonic_to_trace_ns` is added to its CLOCK_MONOTONIC times.
// InvalidInput when it is no processes document or a value cannot be right (a time before the
// run's start, a negative CPU time, a pid out of range). The CPU time a process used after its
// last sample (it ended between two, or after the watcher's last) becomes one more sample, at its
// end (or joins the last one when that is at its end): the samples then add up to its CPU time.
// When `run` is given, it gets the run's start, end and root process (the first to start).
StatusOr<std::vector<RunProcess>> ParseRunProcesses(std::string_view json,
                                                    int64_t monotonic_to_trace_ns,
                                                    RunOfTrace* run = nullptr);

// The processes of the run `recording_path` belongs to, from the *.processes.json beside it that
// lists it as a process's recording, sorted by start; empty when there is none. A file that names
// the recording but cannot be read is counted in `diagnostics`, not fatal: the recording stands
// alone. `run` gets the document's path, the run's start, end and root process.
std::vector<RunProcess> FindRunProcesses(const std::string& recording_path,
                                         int64_t monotonic_to_trace_ns, Diagnostics& diagnostics,
                                         RunOfTrace* run = nullptr);

// Among `candidates` (files an `analyze` skipped), the processes document beside the recording
// `recording_path` that names it; "" when none. What the list of files read says of both.
std::string ProcessTreeOf(const std::string& recording_path,
                          const std::vector<std::string>& candidates);

}  // namespace sightline
