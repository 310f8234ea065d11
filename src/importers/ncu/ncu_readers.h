// Nsight Compute's readers for the front door (importers/inputs.h): the details or raw page
// (ReadNcuCsv, ncu_csv.h) and the source page (ParseNcuSourceCsv, ncu_source.h), each with its
// sniffer and its place in the sniffing order.
#pragma once

#include <string_view>

#include "base/input_sniff.h"

namespace sightline {

// The details or raw page: a table whose header line starts with "ID" and names the kernel. Lines
// before it are skipped by the reader (ncu's "==PROF==" lines, the profiled program's own output
// when the CSV went to standard output), so any may come before it here too.
bool SniffNcuCsv(std::string_view head);
bool SniffNcuSource(std::string_view head);  // LooksLikeNcuSourceCsv

// Text formats with a fixed start, after the binary ones and the sweep.
inline constexpr ReaderSpec kNcuCsvReader = {
    "ncu-csv", "Nsight Compute CSV, details or raw page (ncu --csv --page details|raw)", 500,
    &SniffNcuCsv};
inline constexpr ReaderSpec kNcuSourceReader = {
    "ncu-source-csv", "Nsight Compute CSV, source page (ncu --csv --page source)", 600,
    &SniffNcuSource};

}  // namespace sightline
