// `sightline ncu` as a Report: per export a kernel table (duration, throughputs, DRAM bandwidth,
// occupancy, waves, bound) and a section per kernel for the longest ones (limits, calculator
// check, stall reasons, ncu rules, Sightline hints, missing sections); with several exports, a
// side-by-side comparison. A details and a raw export of the same report are merged into one
// input. JSON keys: docs/kernel/ncu.md.
#pragma once

#include <string>
#include <vector>

#include "importers/ncu/ncu_csv.h"
#include "importers/ncu/ncu_source.h"
#include "kernel/ncu_analysis.h"
#include "report/report.h"

namespace sightline {

// One profiled run: an export, or a details and a raw export of the same ncu report merged.
struct NcuInput {
  std::string label;  // file name(s)
  std::string path;
  std::string pages;  // "details", "raw", "details+raw"
  int64_t lines_skipped = 0;
  std::vector<NcuKernel> kernels;
};

// Merges consecutive exports of the other page with the same kernel IDs and names; the rest are
// inputs of their own, in order.
std::vector<NcuInput> GroupNcuExports(std::vector<NcuExport> exports);

struct NcuReportOptions {
  int top = 10;  // kernels, longest first, that get a section of their own
  // Explicit before/after pairs for the comparison (`--pair OLD=NEW`, short names): NEW in a
  // later export is compared with OLD in the first.
  std::vector<std::pair<std::string, std::string>> pairs;
};

Report BuildNcuReport(const std::vector<NcuInput>& inputs, const NcuReportOptions& options);

// Source-page exports (ncu_source.h): a section per kernel with the stall reasons, the hottest
// instructions and source lines, and a headline note. Adds one report input per export.
void AddNcuSourceSections(Report& report, const std::vector<NcuSourceExport>& sources, int top);

}  // namespace sightline
