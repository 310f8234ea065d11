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

}  // namespace sightline
