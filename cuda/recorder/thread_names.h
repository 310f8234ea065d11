// Thread names for the recorder's thread records (recfmt::ThreadBody): the writer thread reads a
// thread's name from /proc when it first sees the thread in an API or NVTX record, so the
// application's threads do nothing more. Standard library and POSIX only; tested without a GPU.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <unordered_set>

namespace sightline::recorder {

// The kernel's name of thread `tid` of process `pid` (/proc/PID/task/TID/comm: at most 15 bytes,
// what pthread_setname_np or prctl(PR_SET_NAME) set, else the executable's name); empty when the
// thread no longer exists.
inline std::string ThreadNameFromProc(uint32_t pid, uint32_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string name;
  if (!in || !std::getline(in, name)) return "";
  return name;
}

// The threads the writer has already named (or tried to): each is looked up once.
class ThreadNamer {
 public:
  // The name of (pid, tid) the first time it is asked for, else empty; empty also when the thread
  // has exited (its name is lost: it is not asked again).
  std::string NameIfNew(uint32_t pid, uint32_t tid) {
    if (tid == 0 || !seen_.insert((static_cast<uint64_t>(pid) << 32) | tid).second) return "";
    return ThreadNameFromProc(pid, tid);
  }

 private:
  std::unordered_set<uint64_t> seen_;
};

}  // namespace sightline::recorder
