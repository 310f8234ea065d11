// Who analyses which rank file of a multi-rank `analyze`: threads of this process
// (MakeThreadWorkers) or MPI processes (distributed/mpi_workers.h). Either way each file is
// reduced to a blob where it is imported, and process 0 merges the blobs in file order, so the
// report does not depend on how the work was spread (pipeline/rank_parts.h says what a blob holds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace sightline {

// What one process did: its share of the files and the wall time it took.
struct WorkerShare {
  int64_t files = 0;
  double seconds = 0;
};

class RankWorkers {
 public:
  using ReduceFn = std::function<StatusOr<std::string>(size_t file)>;
  using MergeFn = std::function<Status(size_t file, const std::string& blob)>;

  virtual ~RankWorkers() = default;
  // MPI processes taking part (1 without MPI).
  virtual int processes() const = 0;
  // The process that merges and writes the report (MPI process 0; always true without MPI).
  virtual bool root() const = 0;
  // Calls reduce(i) once for every file i in [0, n), on some thread of some process; reduce may
  // run on several threads at once. On the root, merge(i, blob) runs on the calling thread for
  // every i in increasing order, and the first error in file order (of reduce or merge) is
  // returned once every process has finished. `shares` (root only) gets one entry per process.
  // Elsewhere Run returns after the process's own share.
  virtual Status Run(size_t n, const ReduceFn& reduce, const MergeFn& merge,
                     std::vector<WorkerShare>* shares) = 0;
};

// `threads` threads of this process (at most one per file); 1 reduces and merges each file in turn
// on the calling thread, so one trace is in memory at a time.
std::unique_ptr<RankWorkers> MakeThreadWorkers(int threads);

}  // namespace sightline
