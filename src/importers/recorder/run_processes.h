// The process tree of a recorded run (`sightline record`'s NAME.processes.json) for one of its
// recordings: found beside the recording (the file whose processes name this recording) and put on
// the recording's clock. Internal to the recorder importer; the document's schema is in
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
// run's start, a negative CPU time, a pid out of range).
StatusOr<std::vector<RunProcess>> ParseRunProcesses(std::string_view json,
                                                    int64_t monotonic_to_trace_ns);

// The processes of the run `recording_path` belongs to, from the *.processes.json beside it that
// lists it as a process's recording, sorted by start; empty when there is none. A file that names
// the recording but cannot be read is counted in `diagnostics`, not fatal: the recording stands
// alone.
std::vector<RunProcess> FindRunProcesses(const std::string& recording_path,
                                         int64_t monotonic_to_trace_ns, Diagnostics& diagnostics);

}  // namespace sightline
