// See bootstrap.h.
#include "bootstrap.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace sightline::allreduce {
namespace {

bool GetInt(const char* name, int* out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 20) return false;
  *out = static_cast<int>(x);
  return true;
}

std::string GetStr(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

LaunchEnv ReadLaunchEnv() {
  LaunchEnv e;
  struct Scheme {
    const char *rank, *size, *local_rank, *local_size, *label;
  };
  const Scheme schemes[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI (OMPI_COMM_WORLD_*)"},
      {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI (PMI_RANK/PMI_SIZE)"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
       "Slurm (SLURM_PROCID/SLURM_NTASKS)"},
      {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "torchrun (RANK/WORLD_SIZE)"},
  };
  for (const Scheme& s : schemes) {
    if (GetInt(s.rank, &e.rank) && GetInt(s.size, &e.world)) {
      e.found = true;
      e.source = s.label;
      if (!GetInt(s.local_rank, &e.local_rank)) e.local_rank = e.rank;
      if (!GetInt(s.local_size, &e.local_world)) e.local_world = e.world;
      break;
    }
  }
  for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_ess_base_jobid",
                           "PMI_KVSNAME", "SLURM_JOB_ID"}) {
    std::string v = GetStr(name);
    if (!v.empty()) {
      if (std::strcmp(name, "SLURM_JOB_ID") == 0) v += "." + GetStr("SLURM_STEP_ID");
      e.job_id = v;
      break;
    }
  }
  // torchrun: the run id ("none" unless --rdzv-id) and the rendezvous address name the job.
  if (e.job_id.empty() && !GetStr("TORCHELASTIC_RUN_ID").empty()) {
    e.job_id =
        GetStr("TORCHELASTIC_RUN_ID") + "@" + GetStr("MASTER_ADDR") + ":" + GetStr("MASTER_PORT");
  }
  return e;
}

Bootstrap* Bootstrap::Open(const std::string& job_id, int rank, int world, double timeout_s,
                           std::string* error) {
  // A shared-memory name may not contain '/' after the first; hash the job id.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : job_id) h = (h ^ ch) * 1099511628211ull;
  char name[64];
  std::snprintf(name, sizeof(name), "/sightline-allreduce-%016llx",
                static_cast<unsigned long long>(h));
  const size_t bytes = sizeof(Slot) * static_cast<size_t>(world);
  int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    *error = std::string("shm_open(") + name + ") failed: " + std::strerror(errno) +
             "; the harness needs /dev/shm";
    return nullptr;
  }
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    *error = std::string("ftruncate on ") + name + " failed: " + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    *error = std::string("mmap of ") + name + " failed: " + std::strerror(errno);
    return nullptr;
  }
  Bootstrap* b = new Bootstrap();
  b->name_ = name;
  b->slots_ = static_cast<Slot*>(p);
  b->map_bytes_ = bytes;
  b->rank_ = rank;
  b->world_ = world;
  b->timeout_s_ = timeout_s;
  // A segment left behind by an earlier job with the same id would show rounds ahead of ours.
  if (b->slots_[rank].round.load() != 0) {
    *error = std::string("shared-memory segment /dev/shm") + name +
             " already holds state for this rank: another run with the same job id is active or "
             "crashed; remove that file or pass a fresh --job-id";
    delete b;
    return nullptr;
  }
  return b;
}

Bootstrap::~Bootstrap() {
  if (slots_ != nullptr) munmap(slots_, map_bytes_);
  if (rank_ == 0 && !name_.empty()) shm_unlink(name_.c_str());
}

bool Bootstrap::AllGather(const void* mine, size_t bytes, std::vector<char>* all,
                          std::string* error) {
  if (bytes > kBlobBytes) {
    *error = "bootstrap blob too large";
    return false;
  }
  const uint64_t r = ++round_;
  Slot& me = slots_[rank_];
  if (bytes > 0) std::memcpy(me.data[r % 2], mine, bytes);
  me.round.store(r, std::memory_order_release);
  const auto start = std::chrono::steady_clock::now();
  for (int p = 0; p < world_; ++p) {
    int spins = 0;
    while (slots_[p].round.load(std::memory_order_acquire) < r) {
      if (++spins > 1000) {
        sched_yield();
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
            timeout_s_) {
          *error = "rank " + std::to_string(rank_) + ": rank(s) " + Laggards() +
                   " did not arrive at bootstrap round " + std::to_string(r) + " within " +
                   std::to_string(static_cast<int>(timeout_s_)) + " s";
          return false;
        }
      }
    }
  }
  if (all != nullptr) {
    all->resize(bytes * world_);
    for (int p = 0; p < world_; ++p)
      std::memcpy(all->data() + p * bytes, slots_[p].data[r % 2], bytes);
  }
  return true;
}

bool Bootstrap::Barrier(std::string* error) { return AllGather(nullptr, 0, nullptr, error); }

std::string Bootstrap::Laggards() const {
  std::string s;
  for (int p = 0; p < world_; ++p) {
    if (slots_[p].round.load(std::memory_order_acquire) < round_) {
      if (!s.empty()) s += ", ";
      s += std::to_string(p);
    }
  }
  return s.empty() ? "(none)" : s;
}

}  // namespace sightline::allreduce
