// A RunProcess as `sightline record`'s process tree states it, in one expression: a process that
// ended, with its CPU samples (each: the end of its interval and the CPU time used in it; the
// first interval begins at the process's start). The tests of the processes section, the run
// analysis and the start-up phases build their process trees with it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/time_units.h"
#include "model/run_processes.h"

namespace sightline::testing {

// {interval end, CPU time used in the interval}, in order.
using CpuSamples = std::vector<std::pair<TimeNs, DurationNs>>;

inline RunProcess MakeRunProcess(int32_t pid, int32_t ppid, std::string name, std::string command,
                                 TimeNs start, TimeNs end, const CpuSamples& samples,
                                 std::string recording = "") {
  RunProcess p;
  p.pid = pid;
  p.ppid = ppid;
  p.name = std::move(name);
  p.command = std::move(command);
  p.start_ns = start;
  p.end_ns = end;
  p.ended = true;
  p.recording = std::move(recording);
  for (const auto& [t, used] : samples) {
    p.cpu_end_ns.push_back(t);
    p.cpu_used_ns.push_back(used);
    p.cpu_ns += used;
  }
  return p;
}

}  // namespace sightline::testing
