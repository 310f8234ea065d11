// The Nsight Compute CSV readers: the details and raw pages, and the per-kernel analysis of what it
// read (numbers as ncu prints them: "17,207", "n/a", units); the source page
// (--print-source sass|cuda,sass) and its report sections.
#include "fuzz_support.h"
#include "importers/ncu/ncu_csv.h"
#include "importers/ncu/ncu_source.h"
#include "kernel/ncu_analysis.h"
#include "kernel/ncu_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = sightline::fuzz::AsView(data, size);
  if (sightline::LooksLikeNcuSourceCsv(text)) {
    sightline::StatusOr<sightline::NcuSourceExport> src =
        sightline::ParseNcuSourceCsv(text, "fuzz.csv");
    if (src.ok()) {
      sightline::Report report;
      sightline::AddNcuSourceSections(report, {*src}, 5);
    }
    return 0;
  }
  sightline::StatusOr<sightline::NcuExport> ncu = sightline::ParseNcuCsv(text, "fuzz.csv");
  if (!ncu.ok()) return 0;
  for (const sightline::NcuKernel& kernel : ncu->kernels) {
    (void)sightline::AnalyzeNcuKernel(kernel);
  }
  return 0;
}
