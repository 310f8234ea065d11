// The MPI side of a multi-rank `analyze` (`mpirun -n K sightline analyze DIR`, or srun): MPI
// process p reduces the rank files i with i mod K == p, one at a time, and sends each blob to
// process 0, which merges them in file order while it reduces its own share on a second thread.
// Only this file's .cc includes mpi.h; without MPI in the build it starts nothing.
#pragma once

#include <memory>

#include "pipeline/rank_workers.h"

namespace sightline {

// Whether this build has the MPI path (CMake found MPI).
bool MpiBuilt();

// Whether this process was started by an MPI launcher (mpirun/mpiexec, srun with PMI/PMIx).
bool LaunchedByMpi();

// Initialises MPI when LaunchedByMpi() and the world has two or more processes; MPI is finalized
// when the returned workers are destroyed. Null (and MPI left alone) otherwise, so the caller runs
// with threads. An error when MPI was asked for but cannot start.
StatusOr<std::unique_ptr<RankWorkers>> StartMpiWorkers();

}  // namespace sightline
