// The all-reduce sweep's reader for the front door (importers/inputs.h): its sniffer (the CSV
// header sightline-allreduce-bench writes) and its place in the sniffing order. It reads with
// ReadSweepCsvFiles (sweep_csv.h).
#pragma once

#include <string_view>

#include "base/input_sniff.h"
#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {

inline bool SniffSweep(std::string_view head) {
  return SkipBomAndSpace(head).starts_with(kSweepCsvHeader);
}

// The first of the text formats: a fixed header line no other format starts with.
inline constexpr ReaderSpec kSweepReader = {
    "allreduce-sweep-csv", "sightline allreduce sweep CSV (sightline-allreduce-bench --csv)", 400,
    &SniffSweep};

}  // namespace sightline
