// Importer for `sightline record` files (.slrec, docs/formats/recorder.md; the format itself is in
// src/shared/recorder_format.h). Maps kernels (launch configuration, graph kernels linked to
// their cudaGraphLaunch through the CUPTI correlation id), memcpy/memset, runtime and driver API
// calls and NVTX ranges into the trace model; process and device records fill the trace's
// processes and devices. Synchronization records and capture windows are counted (the host-side
// synchronize call is already an API call). Dropped records, ranges without an end and a cut-off or
// damaged last chunk become diagnostics.
#pragma once

#include <string>
#include <string_view>

#include "base/input_sniff.h"
#include "base/status.h"
#include "model/trace.h"

namespace sightline {

bool SniffRecorderFile(std::string_view first_bytes);
// A binary format: the recording's magic number.
inline constexpr ReaderSpec kRecorderReader = {
    "sightline-recorder", "sightline record file (.slrec)", 200, &SniffRecorderFile};
// Also adds the run's process tree when a NAME.processes.json beside the file names it
// (run_processes.h).
StatusOr<Trace> ImportRecorderFile(const std::string& path);

// The same from bytes already in memory; `path` is only used in messages and TraceSource.
StatusOr<Trace> ImportRecorderBytes(std::string_view bytes, const std::string& path);

}  // namespace sightline
