#include "cli/process_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

#include "base/json_writer.h"
#include "base/threads.h"
#include "shared/output_claim.h"

namespace sightline::cli {
namespace {

int64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A whole small /proc file (stat, comm, cmdline), at most `limit` bytes; empty when it is gone.
std::string ReadProcFile(const std::string& path, size_t limit = 4096) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out(limit, '\0');
  size_t got = 0;
  while (got < limit) {
    const ssize_t n = read(fd, out.data() + got, limit - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(got);
  return out;
}

// The fields of /proc/PID/stat that the watcher reads. The name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
struct Stat {
  bool ok = false;
  std::string comm;  // field 2, without its parentheses
  char state = '?';
  int64_t ppid = 0, utime = 0, stime = 0, threads = 0, start_ticks = 0;
};

Stat ParseStat(std::string_view text) {
  Stat s;
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return s;
  if (const size_t open = text.find('('); open != std::string_view::npos && open < close) {
    s.comm = std::string(text.substr(open + 1, close - open - 1));
  }
  std::vector<std::string_view> f;  // f[0] is field 3 (state)
  for (size_t i = close + 1; i < text.size() && f.size() < 20;) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t j = text.find(' ', i);
    const size_t end = j == std::string_view::npos ? text.size() : j;
    if (end > i) f.push_back(text.substr(i, end - i));
    i = end;
  }
  if (f.size() < 20) return s;
  auto num = [&f](int field) {
    return std::strtoll(std::string(f[field - 3]).c_str(), nullptr, 10);
  };
  s.state = f[0].empty() ? '?' : f[0][0];
  s.ppid = num(4);
  s.utime = num(14);
  s.stime = num(15);
  s.threads = num(20);
  s.start_ticks = num(22);
  s.ok = true;
  return s;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string CommandLine(int64_t pid) {
  std::string c = ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline");
  c = Trimmed(std::move(c));
  std::replace(c.begin(), c.end(), '\0', ' ');
  return c;
}

const int64_t kTickNs = 1'000'000'000 / std::max<long>(1, sysconf(_SC_CLK_TCK));

}  // namespace

void ProcessWatcher::Start(pid_t root, const std::string& name, const std::string& command) {
  root_ = root;
  launcher_command_ = CommandLine(getpid());
  start_ns_ = ClockNs(CLOCK_MONOTONIC);
  WatchedProcess p;
  p.pid = root;
  p.name = name.substr(0, 15);  // as /proc/PID/comm cuts it
  p.command = command;
  p.ppid = getpid();
  p.start_ns = start_ns_;
  processes_.push_back(std::move(p));
  alive_[root] = 0;
  // No thread to be had (ulimit -u), or none asked for: the run goes on unwatched, its tree
  // holding the root only.
  if (!options_.watch) return;
  std::vector<std::thread> started;
  if (TryStartThread(started, [this] { Run(); })) thread_ = std::move(started.front());
}

void ProcessWatcher::Stop(int64_t root_end_ns) {
  if (processes_.empty() || end_ns_ != 0) return;  // never started, or stopped already
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  end_ns_ = ClockNs(CLOCK_MONOTONIC);
  if (root_end_ns >= 0 && !processes_.empty()) processes_[0].end_ns = root_end_ns;
}

void ProcessWatcher::Run() {
  const int64_t thread_cpu0 = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  int64_t next_sample = start_ns_;
  while (!stop_) {
    const int64_t now = ClockNs(CLOCK_MONOTONIC);
    const bool sample = now >= next_sample;
    if (sample) next_sample = now + options_.sample_period_ns;
    Scan(sample);
    ++scans_;
    const timespec nap{0, static_cast<long>(options_.scan_period_ns)};
    nanosleep(&nap, nullptr);
  }
  Scan(true);  // the last CPU figures of those still alive
  watch_cpu_ns_ = ClockNs(CLOCK_THREAD_CPUTIME_ID) - thread_cpu0;
}

void ProcessWatcher::Update(WatchedProcess& p, bool sample, int64_t now) {
  const std::string dir = "/proc/" + std::to_string(p.pid);
  const Stat st = ParseStat(ReadProcFile(dir + "/stat"));
  if (!st.ok || st.state == 'Z' || st.state == 'X') {
    if (p.end_ns < 0) p.end_ns = now;
    return;
  }
  // A program that execs (a shell's `exec python ...`) shows its final command from then on. The
  // root, forked by the launcher, shows the launcher's command until its exec: kept as given.
  if (p.command.empty() || sample) {
    std::string c = CommandLine(p.pid);
    if (!c.empty() && c != launcher_command_) {
      p.command = std::move(c);
      p.name = Trimmed(ReadProcFile(dir + "/comm"));
    }
  }
  if (p.start_ticks < 0) p.start_ticks = st.start_ticks;
  p.cpu_user_ns = st.utime * kTickNs;
  p.cpu_system_ns = st.stime * kTickNs;
  p.max_threads = std::max(p.max_threads, st.threads);
  if (!sample) return;
  const int64_t cpu = p.cpu_user_ns + p.cpu_system_ns;
  p.cpu_samples.emplace_back(now, cpu - p.last_cpu_ns);
  p.last_cpu_ns = cpu;
  DIR* tasks = opendir((dir + "/task").c_str());
  if (tasks == nullptr) return;
  while (const dirent* e = readdir(tasks)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int64_t tid = std::strtoll(e->d_name, nullptr, 10);
    const std::string tdir = dir + "/task/" + e->d_name;
    const Stat ts = ParseStat(ReadProcFile(tdir + "/stat"));
    if (!ts.ok) continue;
    WatchedThread& t = p.threads[tid];
    t.tid = tid;
    if (t.name.empty() || sample) {
      std::string n = Trimmed(ReadProcFile(tdir + "/comm"));
      if (!n.empty()) t.name = std::move(n);
    }
    t.cpu_ns = (ts.utime + ts.stime) * kTickNs;
  }
  closedir(tasks);
}

void ProcessWatcher::Scan(bool sample) {
  const int64_t now = ClockNs(CLOCK_MONOTONIC);
  // The offset of /proc's start times (ticks since boot) from CLOCK_MONOTONIC.
  const int64_t boot_to_mono = now - ClockNs(CLOCK_BOOTTIME);
  std::set<int64_t> listed;
  if (DIR* proc = opendir("/proc")) {
    while (const dirent* e = readdir(proc)) {
      if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
        listed.insert(std::strtoll(e->d_name, nullptr, 10));
    }
    closedir(proc);
  }
  // Strangers and ended processes that are gone may come back as pids of this run.
  for (auto* known : {&strangers_, &ended_}) {
    for (auto it = known->begin(); it != known->end();) {
      it = listed.count(it->first) ? std::next(it) : known->erase(it);
    }
  }
  // New processes whose parent is of this run join it; repeat while any joined, since a child
  // may be listed before its parent (pids wrap).
  for (bool joined = true; joined;) {
    joined = false;
    for (int64_t pid : listed) {
      if (alive_.count(pid) || strangers_.count(pid)) continue;
      const Stat st = ParseStat(ReadProcFile("/proc/" + std::to_string(pid) + "/stat"));
      if (!st.ok) continue;
      // An ended process stays listed until its parent reaps it: the same one, not a new one.
      if (auto e = ended_.find(pid); e != ended_.end() && e->second == st.start_ticks) continue;
      if (!alive_.count(st.ppid)) {
        // Not (yet) ours. Only remembered once its parent is known not to be: a parent may join
        // later in this same pass.
        bool parent_pending = false;
        if (listed.count(st.ppid) && !strangers_.count(st.ppid)) parent_pending = true;
        if (!parent_pending) strangers_[pid] = st.start_ticks;
        continue;
      }
      WatchedProcess p;
      p.pid = pid;
      p.ppid = st.ppid;
      p.start_ticks = st.start_ticks;
      p.name = st.comm;  // a process that ends before its first update keeps this name
      p.start_ns = std::min(now, st.start_ticks * kTickNs + boot_to_mono);
      alive_[pid] = processes_.size();
      processes_.push_back(std::move(p));
      joined = true;
    }
  }
  // Whatever is still pending after the passes is not of this run.
  for (int64_t pid : listed) {
    if (!alive_.count(pid) && !strangers_.count(pid) && !ended_.count(pid)) {
      const Stat st = ParseStat(ReadProcFile("/proc/" + std::to_string(pid) + "/stat"));
      if (st.ok) strangers_[pid] = st.start_ticks;
    }
  }
  for (auto it = alive_.begin(); it != alive_.end();) {
    WatchedProcess& p = processes_[it->second];
    Update(p, sample, now);
    if (p.end_ns < 0) {
      ++it;
      continue;
    }
    ended_[p.pid] = p.start_ticks;
    it = alive_.erase(it);
  }
}

std::string ProcessesPathFor(const std::string& recording_path) {
  return recording_path.substr(0, recenv::ExtensionStart(recording_path)) + ".processes.json";
}

std::string ProcessesJson(const ProcessWatcher& watcher, const std::vector<std::string>& command,
                          const std::vector<std::pair<int64_t, std::string>>& files) {
  JsonWriter w(1);
  w.BeginObject();
  w.Key("sightline_processes").Int(1);
  w.Key("clock").String("CLOCK_MONOTONIC");
  w.Key("start_ns").Int(watcher.start_ns());
  w.Key("end_ns").Int(watcher.end_ns());
  w.Key("scans").Int(watcher.scans());
  w.Key("watch_cpu_ns").Int(watcher.watch_cpu_ns());
  w.Key("program").BeginArray();
  for (const std::string& a : command) w.String(a);
  w.EndArray();
  w.Key("processes").BeginArray();
  for (const WatchedProcess& p : watcher.processes()) {
    w.BeginObject();
    w.Key("pid").Int(p.pid);
    w.Key("ppid").Int(p.ppid);
    w.Key("name").String(p.name);
    w.Key("command").String(p.command);
    w.Key("start_ns").Int(p.start_ns);
    w.Key("end_ns");
    if (p.end_ns >= 0) {
      w.Int(p.end_ns);
    } else {
      w.Null();
    }
    w.Key("cpu_user_ns").Int(p.cpu_user_ns);
    w.Key("cpu_system_ns").Int(p.cpu_system_ns);
    w.Key("max_threads").Int(p.max_threads);
    w.Key("recording");
    const auto f = std::find_if(files.begin(), files.end(),
                                [&p](const auto& file) { return file.first == p.pid; });
    if (f != files.end()) {
      w.String(f->second);
    } else {
      w.Null();
    }
    w.Key("threads").BeginArray();
    for (const auto& [tid, t] : p.threads) {
      w.BeginArray().Int(tid).String(t.name).Int(t.cpu_ns).EndArray();
    }
    w.EndArray();
    w.Key("cpu_samples").BeginArray();
    for (const auto& [t, cpu] : p.cpu_samples) w.BeginArray().Int(t).Int(cpu).EndArray();
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::string out = w.Take();
  out += '\n';
  return out;
}

}  // namespace sightline::cli
