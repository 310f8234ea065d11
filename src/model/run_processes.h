// The processes of one recorded run as `sightline record`'s launcher saw them (NAME.processes.json,
// docs/formats/recorder.md "The processes of a run"): every process the program started, with CUDA
// or without (a server's front end and detokenizer, torch.compile's workers), on the trace's clock.
// Set by the recorder importer when the file lies beside the recording; empty otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time_units.h"

namespace sightline {

struct RunProcess {
  int32_t pid = -1, ppid = -1;
  std::string name;       // /proc/PID/comm (15 characters at most)
  std::string command;    // its command line, arguments joined by spaces
  TimeNs start_ns = 0;    // on the trace's clock
  TimeNs end_ns = 0;      // when it ended, or the run's end when it outlived the program
  bool ended = false;     // false: still alive when the program the launcher started ended
  DurationNs cpu_ns = 0;  // user + system time over its life, as last seen (10 ms resolution)
  int64_t max_threads = 0;
  std::string recording;  // the CUDA recording it wrote ("" when it never initialised CUDA)
  // CPU time used per sample interval: interval i ends at cpu_end_ns[i] and began at the previous
  // sample's end (the process's start for the first).
  std::vector<TimeNs> cpu_end_ns;
  std::vector<DurationNs> cpu_used_ns;
};

// Which run a recording belongs to, and how its clock relates to the run's (CLOCK_MONOTONIC of the
// host): what puts the recordings of one run on one clock. Empty (no document) for a trace that is
// no recording of a run with its process tree beside it.
struct RunOfTrace {
  std::string document;  // the processes document read (NAME.processes.json), as found
  std::string host;      // the recording's host
  // The run as the document states it, on CLOCK_MONOTONIC: what identifies the run (with host and
  // root_pid) whatever folder its files were moved to.
  TimeNs start_monotonic_ns = 0, end_monotonic_ns = 0;
  int32_t root_pid = -1;  // the program the launcher started
  int32_t pid = -1;       // the process that wrote this recording
  // This trace's clock minus CLOCK_MONOTONIC at the recording's start and at its end (the start's
  // when the recording has no end record): the same on every recording of one host when their
  // clocks agree, which the run analysis checks.
  DurationNs trace_minus_monotonic_ns = 0, trace_minus_monotonic_at_end_ns = 0;
  bool has_end = false;

  bool known() const { return !document.empty(); }
  // The run's identity, the same for every recording of it wherever its files lie (host, start,
  // root process); "" when unknown.
  std::string key() const {
    if (!known()) return "";
    return host + "|" + std::to_string(start_monotonic_ns) + "|" + std::to_string(root_pid);
  }
};

}  // namespace sightline
