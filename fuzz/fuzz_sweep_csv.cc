// The all-reduce sweep CSV reader (`sightline allreduce bench` output, read by tune and plot).
#include "fuzz_support.h"
#include "importers/allreduce_sweep/sweep_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)sightline::ParseSweepCsv(sightline::fuzz::AsView(data, size), "fuzz.csv");
  return 0;
}
