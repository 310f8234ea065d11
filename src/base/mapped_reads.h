// Reads of memory-mapped input files while another program cuts them shorter: SQLite maps an nsys
// export (PRAGMA mmap_size), the Kineto reader maps a trace with SIGHTLINE_KINETO_MMAP set, and a
// page past the file's new end would end the process with SIGBUS. The guard (one SIGBUS handler)
// maps a page of zeros there instead and notes which file it was (device and inode, from
// /proc/self/maps); the reader reads on, into zeros, and afterwards asks MappedReadCheck, which
// refuses the file with a clear error. Any other SIGBUS ends the process as before, after the
// output temporaries are removed (base/output_temps.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/status.h"

namespace sightline {

// Installs the guard once (unless a sanitizer or the program handles SIGBUS itself).
void InstallMappedReadGuard();

// Pages of the file (dev, ino) read past its end so far.
uint64_t MappedReadFaults(dev_t dev, ino_t ino);

// Around the reading of one file: taken before (installs the guard), asked after.
class MappedReadCheck {
 public:
  explicit MappedReadCheck(const std::string& path);
  // InvalidInput when pages of the file were read past its end since construction: "X: the file
  // was cut shorter while it was read ...".
  Status Check() const;

 private:
  std::string path_;
  bool known_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t before_ = 0;
};

}  // namespace sightline
