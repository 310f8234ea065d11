// The Nsight Compute CSV reader (details and raw pages), and the per-kernel analysis of what it
// read (numbers as ncu prints them: "17,207", "n/a", units).
#include "fuzz_support.h"
#include "kernel/ncu_analysis.h"
#include "kernel/ncu_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sightline::StatusOr<sightline::NcuExport> ncu =
      sightline::ParseNcuCsv(sightline::fuzz::AsView(data, size), "fuzz.csv");
  if (!ncu.ok()) return 0;
  for (const sightline::NcuKernel& kernel : ncu->kernels) {
    (void)sightline::AnalyzeNcuKernel(kernel);
  }
  return 0;
}
