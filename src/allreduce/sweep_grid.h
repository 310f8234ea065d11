// Arranges sweep rows as the tuner and plotter see them: 2-D grids (hidden size x tokens, one
// time per strategy per cell) and 1-D size sweeps, one per world size, dtype, fusion and mode.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "importers/allreduce_sweep/sweep_csv.h"

namespace sightline {

struct SweepKey {
  int world_size = 0;
  std::string dtype;
  ArFusion fusion = ArFusion::kNone;
  ArMode mode = ArMode::kEager;

  bool operator<(const SweepKey& o) const;
  bool operator==(const SweepKey& o) const;
  // "world size 2, bf16, none, graph"
  std::string Describe() const;
};

// One 2-D sweep. Times are NaN where a strategy was not measured in a cell.
struct SweepGrid {
  SweepKey key;
  std::vector<int64_t> hidden;                                // ascending
  std::vector<int64_t> tokens;                                // ascending
  std::array<std::vector<double>, kNumArStrategies> time_us;  // [strategy][h * tokens.size() + t]

  double Time(ArStrategy s, size_t h, size_t t) const {
    return time_us[static_cast<int>(s)][h * tokens.size() + t];
  }
  // The fastest measured strategy in a cell; nullopt when nothing was measured there. Exact ties
  // go to NCCL, then one-shot (the simpler choice).
  std::optional<ArStrategy> Best(size_t h, size_t t) const;
  // The second fastest measured strategy's time, NaN when fewer than two were measured.
  double RunnerUpTime(size_t h, size_t t) const;
};

// One 1-D size sweep (rows with num_tokens = hidden_size = 0).
struct SizeSweep {
  SweepKey key;
  std::vector<int64_t> sizes;                                 // ascending bytes
  std::array<std::vector<double>, kNumArStrategies> time_us;  // [strategy][size index], NaN = none
  std::array<std::vector<double>, kNumArStrategies> busbw_gbps;
};

// Both sorted by key.
std::vector<SweepGrid> BuildSweepGrids(const std::vector<SweepRow>& rows);
std::vector<SizeSweep> BuildSizeSweeps(const std::vector<SweepRow>& rows);

// The lookup rule of the tuned table, for one axis: the index of the grid value nearest to x in
// log2 space, -1 when x lies outside [grid.front(), grid.back()]. Between neighbours a < x < b,
// x goes to a when x*x <= a*b (x at or below their geometric mean; the tie goes to the smaller),
// else to b. The generated header implements the same comparison in integers.
int NearestLog2Index(const std::vector<int64_t>& grid, int64_t x);

}  // namespace sightline
