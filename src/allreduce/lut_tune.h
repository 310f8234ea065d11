// `sightline allreduce tune`: from 2-D sweep grids to lookup tables (the fastest measured strategy
// per cell; the cost model's choice at grid points with no measurement), with checks of what the
// table and the cost model each lose. lut_codegen.h turns the result into C++.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "allreduce/cost_model.h"
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
  // [h * tokens.size() + t]. Where nothing was measured: the cost model's choice when a fit covers
  // the cell's size, else kNccl.
  std::vector<ArStrategy> cells;
  std::vector<bool> measured;
  std::vector<bool> by_model;  // unmeasured cells that the cost model chose

  // The header's SelectStrategy for this table; kNccl outside the grid.
  ArStrategy Select(int64_t hidden_size, int64_t num_tokens) const;
};

// How much a table loses against the fastest measured strategy; losses in % of the best time.
struct LossStats {
  int cells = 0;              // cells evaluated
  int unmeasured_choice = 0;  // cells where the choice was not measured (not counted)
  int no_choice = 0;          // cells where the chooser had no answer (the model: no fit covers)
  double worst_pct = 0;
  double mean_pct = 0;
  int64_t worst_hidden = 0, worst_tokens = 0, worst_bytes = 0;
};

// A cell (or size) where the cost model's choice among the strategies measured there is not the
// measured winner.
struct ModelDisagreement {
  int64_t hidden = 0, tokens = 0;  // 0, 0 in a size sweep
  int64_t bytes = 0;
  ArStrategy measured = ArStrategy::kNccl;  // the fastest measured
  ArStrategy model = ArStrategy::kNccl;     // the model's choice
  double measured_us = 0;                   // the winner's time
  double model_choice_us = 0;               // the measured time of the model's choice
  double loss_pct = 0;                      // model_choice_us / measured_us - 1, in %
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

  // The cost model: its choice among the strategies measured in each cell, against the best.
  int cells_by_model = 0;  // unmeasured grid points whose table entry the model chose
  LossStats model;
  std::vector<ModelDisagreement> disagreements;
  // The model refitted on the coarse cells only, on the held-out cells (beside `coarse`).
  LossStats coarse_model;
};

// The cost model on a 1-D size sweep: there is no table, only the model against the best.
struct SizeCheck {
  SweepKey key;
  std::vector<int64_t> sizes;
  std::array<int, kNumArStrategies> chosen{};  // sizes per fastest strategy
  LossStats model;
  std::vector<ModelDisagreement> disagreements;
};

struct ModelFitRow {
  CostModelKey key;
  LinearFit fit;
};

struct TuneResult {
  ArMode mode = ArMode::kGraph;
  std::string dtype;
  double noise_pct = 3;
  std::vector<LutTable> tables;        // sorted by world size, fusion
  std::vector<LutCheck> checks;        // parallel to tables
  std::vector<ModelFitRow> fits;       // the cost model's fits for this dtype and mode
  std::vector<SizeCheck> size_checks;  // 1-D sweeps of this dtype and mode
  std::string grid_kinds;  // "bf16 graph, fp32 eager": the 2-D rows' dtypes and modes, for messages
};

// Tables for the 2-D rows of the mode and dtype, and the cost model on them and on the 1-D rows.
// InvalidInput when neither 2-D nor 1-D rows match (the message says what the rows hold); a
// result without tables (1-D rows only) cannot make a header.
StatusOr<TuneResult> TuneAllReduce(const std::vector<SweepRow>& rows, const TuneOptions& options);

// InvalidInput naming what the 2-D rows hold, when `result` has no table to write.
Status CheckHasTables(const TuneResult& result);

// The table the CLI prints: per world size and fusion, the grid, the choices and the losses.
std::string RenderTuneSummary(const TuneResult& result);

}  // namespace sightline
