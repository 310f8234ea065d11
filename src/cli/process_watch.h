// The process tree of a `sightline record` run, seen from the launcher: every process the program
// starts (with or without CUDA: a server's front end and detokenizer, torch.compile's workers),
// its parent, command, start and end, and its CPU time over the run, sampled per process and per
// thread from /proc. Nothing is injected into the processes; the cost is the launcher's own scans
// (one listing of /proc per period, /proc/PID/stat of the run's processes).
// The result is written beside the recordings as NAME.processes.json (docs/formats/recorder.md,
// "The processes of a run").
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace sightline::cli {

struct WatchedThread {
  int64_t tid = 0;
  std::string name;
  int64_t cpu_ns = 0;  // user + system, the last value seen
};

struct WatchedProcess {
  int64_t pid = 0, ppid = 0;
  std::string name;      // /proc/PID/comm
  std::string command;   // /proc/PID/cmdline, arguments joined by spaces (cut at 4 KiB)
  int64_t start_ns = 0;  // CLOCK_MONOTONIC
  int64_t end_ns = -1;   // first scan that no longer saw it; -1: alive when the run ended
  int64_t cpu_user_ns = 0, cpu_system_ns = 0;  // the last values seen
  int64_t max_threads = 0;
  std::map<int64_t, WatchedThread> threads;
  // CPU time used in each sample interval: (interval end, CLOCK_MONOTONIC; ns of CPU).
  std::vector<std::pair<int64_t, int64_t>> cpu_samples;
  int64_t last_cpu_ns = 0;   // user + system at the last sample
  int64_t start_ticks = -1;  // /proc's start time: tells a reused pid from this process
};

struct ProcessWatchOptions {
  int64_t scan_period_ns = 20'000'000;     // new processes and ends: 20 ms
  int64_t sample_period_ns = 100'000'000;  // CPU per process and thread: 100 ms
  bool watch = true;                       // false: no scans at all; the tree holds the root only
};

// Watches the tree under `root` on a thread of its own from Start() until Stop().
class ProcessWatcher {
 public:
  explicit ProcessWatcher(ProcessWatchOptions options = {}) : options_(options) {}
  ~ProcessWatcher() { Stop(); }

  // `name` and `command` stand for the root until /proc shows its own (a process seen before its
  // exec shows the launcher's).
  void Start(pid_t root, const std::string& name, const std::string& command);
  // Stops watching; `root_end_ns` (CLOCK_MONOTONIC, when the launcher reaped the root) is its end.
  void Stop(int64_t root_end_ns = -1);

  // After Stop(): the processes in order of first sight (the root first).
  const std::vector<WatchedProcess>& processes() const { return processes_; }
  int64_t start_ns() const { return start_ns_; }
  int64_t end_ns() const { return end_ns_; }
  int64_t scans() const { return scans_; }
  int64_t watch_cpu_ns() const { return watch_cpu_ns_; }  // the watcher thread's own CPU time

 private:
  void Run();
  void Scan(bool sample);
  void Update(WatchedProcess& p, bool sample, int64_t now);

  ProcessWatchOptions options_;
  pid_t root_ = 0;
  std::string launcher_command_;  // /proc/self/cmdline: what a child shows before its exec
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::vector<WatchedProcess> processes_;
  std::map<int64_t, size_t> alive_;       // pid -> index in processes_
  std::map<int64_t, int64_t> strangers_;  // pid -> start ticks: not of this run
  std::map<int64_t, int64_t> ended_;      // pid -> start ticks: ended, maybe unreaped
  int64_t start_ns_ = 0, end_ns_ = 0, scans_ = 0, watch_cpu_ns_ = 0;
};

// The JSON document of a watched run (schema in docs/formats/recorder.md). `files` are the
// recordings the run wrote, each with the process that wrote it.
std::string ProcessesJson(const ProcessWatcher& watcher, const std::vector<std::string>& command,
                          const std::vector<std::pair<int64_t, std::string>>& files);

// "dir/run.slrec" -> "dir/run.processes.json".
std::string ProcessesPathFor(const std::string& recording_path);

}  // namespace sightline::cli
