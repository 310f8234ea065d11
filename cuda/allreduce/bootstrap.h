// How the harness's processes find each other without linking MPI: rank and world size come from
// the launcher's environment (Open MPI, PMI/MPICH, Slurm, torchrun), and small blobs (CUDA IPC
// handles, the NCCL unique id, per-configuration check results) are exchanged through a POSIX
// shared-memory segment named after the job. All ranks must run on one host (CUDA IPC needs it
// anyway).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sightline::allreduce {

struct LaunchEnv {
  bool found = false;  // a launcher's rank/size variables were set
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  int local_world = 1;
  std::string job_id;  // from the launcher, "" when none was found
  std::string source;  // which variables, for messages
};

// Reads OMPI_COMM_WORLD_*, PMI_* / MPI_LOCALRANKID, SLURM_*, torchrun's RANK / WORLD_SIZE /
// LOCAL_RANK (in that order).
LaunchEnv ReadLaunchEnv();

class Bootstrap {
 public:
  static constexpr size_t kBlobBytes = 1024;

  // Opens (creating if needed) the segment for `job_id`. Returns nullptr and sets *error on
  // failure.
  static Bootstrap* Open(const std::string& job_id, int rank, int world, double timeout_s,
                         std::string* error);
  ~Bootstrap();

  // Every rank contributes `bytes` (<= kBlobBytes) and receives all ranks' blobs, rank order.
  // Fails (naming the ranks that did not arrive) after the timeout.
  bool AllGather(const void* mine, size_t bytes, std::vector<char>* all, std::string* error);
  bool Barrier(std::string* error);
  // For the watchdog: which ranks have not reached this rank's latest round, e.g. "1, 3".
  std::string Laggards() const;
  int rank() const { return rank_; }
  int world() const { return world_; }

 private:
  struct Slot {
    std::atomic<uint64_t> round;
    char pad[56];
    char data[2][kBlobBytes];
  };
  Bootstrap() = default;
  std::string name_;
  Slot* slots_ = nullptr;
  size_t map_bytes_ = 0;
  int rank_ = 0, world_ = 1;
  uint64_t round_ = 0;
  double timeout_s_ = 60;
};

}  // namespace sightline::allreduce
