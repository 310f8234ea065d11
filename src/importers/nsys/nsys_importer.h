// Importer for Nsight Systems SQLite exports (`nsys export --type sqlite`).
// Maps CUPTI_ACTIVITY_KIND_{KERNEL,MEMCPY,MEMSET,RUNTIME}, NVTX_EVENTS, TARGET_INFO_GPU
// (or TARGET_INFO_CUDA_GPU), StringIds, ThreadNames and PROCESSES into the trace model.
#pragma once

#include <string>
#include <string_view>

#include "base/input_sniff.h"
#include "base/status.h"
#include "model/trace.h"

namespace sightline {

bool SniffNsysSqlite(std::string_view first_bytes);
// The first of the binary formats: SQLite's magic number.
inline constexpr ReaderSpec kNsysSqliteReader = {
    "nsys-sqlite", "Nsight Systems SQLite export (nsys export --type sqlite)", 100,
    &SniffNsysSqlite};
StatusOr<Trace> ImportNsysSqlite(const std::string& path);

}  // namespace sightline
