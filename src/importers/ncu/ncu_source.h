// Nsight Compute's source page as CSV (`ncu --import R.ncu-rep --page source --csv --print-source
// sass|cuda,sass`): one row per SASS instruction (and, with cuda,sass, per source line, in blocks
// per file) with "Warp Stall Sampling (All Samples)" and the per-reason stall_* sample columns.
// Read here into instructions and lines; `sightline ncu` names the hottest ones and their share
// of the stall samples (ncu_report.cc). docs/kernel/ncu.md, "Source page".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sightline {

struct NcuSourceStall {
  std::string reason;  // "long_scoreboard" (Sightline's key; ncu's column is stall_long_sb)
  double samples = 0;
};

struct NcuSourceRow {
  std::string file;                    // source file ("" for the sass view)
  int64_t line = -1;                   // source line (-1 for an instruction of the sass view)
  std::string address;                 // "0x7f4d557a0c10" for instructions; "" for source lines
  std::string text;                    // the SASS instruction or the source line
  double samples = 0;                  // Warp Stall Sampling (All Samples)
  std::vector<NcuSourceStall> stalls;  // by reason, largest first, zeros left out
  // For an instruction of the cuda,sass view: the source line it belongs to (the user file's,
  // else the innermost inlined header's).
  std::string line_file;
  int64_t line_no = -1;
};

struct NcuSourceKernel {
  std::string name;
  std::vector<NcuSourceRow> instructions;  // unique by address, in address order
  std::vector<NcuSourceRow> lines;         // source lines with samples (cuda,sass view)
  double total_samples = 0;                // over the instructions
};

struct NcuSourceExport {
  std::string path;
  std::string view;  // "sass" or "cuda,sass"
  std::vector<NcuSourceKernel> kernels;
};

// True when `text` starts like a source-page export ("Kernel Name", "File Path" or "File Name").
bool LooksLikeNcuSourceCsv(std::string_view text);

// InvalidInput when the export has no per-instruction counters (e.g. --print-source cuda alone),
// naming the flags that give them.
StatusOr<NcuSourceExport> ParseNcuSourceCsv(std::string_view text, const std::string& path);

// Samples of one reason in a row (0 when absent).
double StallSamples(const NcuSourceRow& row, std::string_view reason);

}  // namespace sightline
