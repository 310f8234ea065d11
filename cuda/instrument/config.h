// Parsing of the instrument library's environment (SIGHTLINE_NVTX_LEVEL,
// SIGHTLINE_PROFILE_START_STOP, SIGHTLINE_PROFILE_RANKS, SIGHTLINE_ITERATION_LOG) into plain
// values. Pure functions, so tests call them directly; instrument.cc reads the environment once and
// reports errors once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sightline::instrument {

// One inclusive iteration range of the profiling window: the profiler starts at the beginning of
// iteration `start` and stops at the end of iteration `stop`.
struct WindowRange {
  int64_t start = 0;
  int64_t stop = 0;
};

// Parses "10-20,100-110" (a single "N" means N-N; spaces around items are allowed). Ranges come
// back sorted; they must not overlap. On error returns false and sets *error to one sentence saying
// what is wrong and where; *ranges is then empty.
bool ParseWindowSpec(std::string_view spec, std::vector<WindowRange>* ranges, std::string* error);

// Parses "0,3" or "0-3,8" into rank numbers (sorted, unique); "all" or "*" gives an empty list with
// *all = true. Same error contract as ParseWindowSpec.
bool ParseRankList(std::string_view spec, std::vector<int>* ranks, bool* all, std::string* error);

// "0", "1", "2" (also "off", "basic", "verbose"). Returns false for anything else.
bool ParseNvtxLevel(std::string_view text, int* level);

// The process's rank: recenv::DetectRank (src/shared/recorder_env.h), shared with the
// recorder.

// Replaces %p by `pid`, %r by `rank` (0 when rank < 0, as `sightline record -o` does) and %% by %.
std::string ExpandLogPath(std::string_view pattern, int64_t pid, int rank);

}  // namespace sightline::instrument
