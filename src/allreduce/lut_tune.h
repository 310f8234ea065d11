// `sightline allreduce tune`: from 2-D sweep grids to lookup tables (the fastest measured strategy
// per cell), with checks of what the tables lose. lut_codegen.h turns the result into C++.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "allreduce/sweep_grid.h"
#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {

struct TuneOptions {
  // CUDA-graph replay is how decode steps run in production engines, so the default tunes for it.
  ArMode mode = ArMode::kGraph;
  std::string dtype = "bf16";
  double noise_pct = 3;  // a cell whose runner-up is within this is a close call
};

// One table of the generated header: a (world size, fusion) pair.
struct LutTable {
  int world_size = 0;
  ArFusion fusion = ArFusion::kNone;
  std::vector<int64_t> hidden, tokens;  // ascending grid values
  std::vector<ArStrategy> cells;        // [h * tokens.size() + t]; kNccl where nothing was measured
  std::vector<bool> measured;

  // The header's SelectStrategy for this table; kNccl outside the grid.
  ArStrategy Select(int64_t hidden_size, int64_t num_tokens) const;
};

// How much a table loses against the fastest measured strategy; losses in % of the best time.
struct LossStats {
  int cells = 0;              // cells evaluated
  int unmeasured_choice = 0;  // cells where the table's choice was not measured (not counted)
  double worst_pct = 0;
  double mean_pct = 0;
  int64_t worst_hidden = 0, worst_tokens = 0;
};

struct LutCheck {
  int cells_measured = 0;
  int cells_unmeasured = 0;  // grid points with no measurement at all (the table says NCCL)
  int cells_incomplete = 0;  // measured cells where some strategy is missing
  std::array<int, kNumArStrategies> chosen{};  // cells per chosen strategy
  LossStats table;      // the table itself over the measured grid (0 by construction)
  int close_calls = 0;  // cells whose runner-up is within noise_pct of the best
  LossStats nccl_only;  // what always choosing NCCL would lose: what the table gains
  // The table rebuilt from every other grid value per axis (ends kept), evaluated on the
  // held-out cells: how well nearest-cell lookup carries to sizes that were not measured.
  bool coarse_possible = false;
  LossStats coarse;
};

struct TuneResult {
  ArMode mode = ArMode::kGraph;
  std::string dtype;
  double noise_pct = 3;
  std::vector<LutTable> tables;  // sorted by world size, fusion
  std::vector<LutCheck> checks;  // parallel to tables
};

// InvalidInput when no 2-D rows match the mode and dtype (the message says what the rows hold).
StatusOr<TuneResult> TuneAllReduce(const std::vector<SweepRow>& rows, const TuneOptions& options);

// The table the CLI prints: per world size and fusion, the grid, the choices and the losses.
std::string RenderTuneSummary(const TuneResult& result);

}  // namespace sightline
