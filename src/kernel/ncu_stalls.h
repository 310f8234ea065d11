// Warp stall reasons of Nsight Compute in plain words, with what to change. Names are the
// suffixes of ncu's metrics (smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio,
// smsp__pcsamp_warps_issue_stalled_<reason>); meanings follow the Nsight Compute Kernel Profiling
// Guide, "Warp Stall Reasons". docs/kernel/ncu.md lists them.
#pragma once

#include <string_view>

namespace sightline {

struct StallReasonInfo {
  const char* key;      // "long_scoreboard"
  const char* title;    // "Long scoreboard"
  const char* meaning;  // what the warp waits for
  const char* fix;      // what to change
};

// nullptr for a reason this table does not know (a newer ncu); callers show the raw name then.
const StallReasonInfo* FindStallReason(std::string_view key);

}  // namespace sightline
