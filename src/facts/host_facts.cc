#include "facts/host_facts.h"

#include <algorithm>
#include <map>

namespace sightline {
namespace {

const std::vector<Interval>& EmptyIntervals() {
  static const std::vector<Interval> kEmpty;
  return kEmpty;
}

// The value of `pid` in a list sorted by pid; `none` when the list has no entry for it.
template <typename T>
const T& OfPid(const std::vector<std::pair<int32_t, T>>& by_pid, int32_t pid, const T& none) {
  auto it = std::lower_bound(by_pid.begin(), by_pid.end(), pid,
                             [](const auto& e, int32_t p) { return e.first < p; });
  return it == by_pid.end() || it->first != pid ? none : it->second;
}

// `intervals` grouped by their pid, each group merged (MergeIntervals), sorted by pid.
std::vector<std::pair<int32_t, std::vector<Interval>>> MergedByPid(
    std::vector<std::pair<int32_t, Interval>> intervals) {
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::pair<int32_t, std::vector<Interval>>> out;
  for (size_t i = 0; i < intervals.size();) {
    size_t j = i;
    std::vector<Interval> v;
    while (j < intervals.size() && intervals[j].first == intervals[i].first) {
      v.push_back(intervals[j++].second);
    }
    out.push_back({intervals[i].first, MergeIntervals(std::move(v))});
    i = j;
  }
  return out;
}

// The index of thread (pid, tid) in the sorted `threads`; -1 when it is not there.
int64_t IndexOf(const std::vector<std::pair<int32_t, int32_t>>& threads, int32_t pid, int32_t tid) {
  auto it = std::lower_bound(threads.begin(), threads.end(), std::make_pair(pid, tid));
  if (it == threads.end() || *it != std::make_pair(pid, tid)) return -1;
  return it - threads.begin();
}

}  // namespace

bool IsBlockingCall(const Trace& trace, size_t row) {
  const ApiClass c = trace.api_calls.api_class[row];
  if (c == ApiClass::kSync) return true;
  if (c != ApiClass::kMemcpy && c != ApiClass::kMemset) return false;
  return trace.str(trace.api_calls.name[row]).find("Async") == std::string_view::npos;
}

const LaunchIndex& HostFacts::Launches() {
  std::call_once(launches_once_, [this] { launches_ = std::make_unique<LaunchIndex>(trace_); });
  return *launches_;
}

const std::vector<Interval>& HostFacts::BlockingCalls(int32_t pid) {
  std::call_once(blocking_once_, [&] {
    std::vector<std::pair<int32_t, Interval>> calls;
    const ApiCallTable& a = trace_.api_calls;
    for (size_t r = 0; r < a.size(); ++r) {
      if (IsBlockingCall(trace_, r)) {
        calls.push_back({a.pid[r], Interval{a.start_ns[r], a.end_ns[r]}});
      }
    }
    blocking_ = MergedByPid(std::move(calls));
  });
  return OfPid(blocking_, pid, EmptyIntervals());
}

const std::vector<Interval>& HostFacts::GcIntervals(int32_t pid) {
  std::call_once(gc_once_, [&] {
    const RangeTable& r = trace_.ranges;
    std::vector<int8_t> is_gc(trace_.strings.size(), -1);  // by StringId
    std::vector<std::pair<int32_t, Interval>> found;
    for (size_t i = 0; i < r.size(); ++i) {
      int8_t& g = is_gc[r.name[i].value];
      if (g < 0) {
        const std::string_view name = trace_.str(r.name[i]);
        g = std::find(options_.gc_range_names.begin(), options_.gc_range_names.end(), name) !=
            options_.gc_range_names.end();
      }
      if (g) found.push_back({r.pid[i], Interval{r.start_ns[i], r.end_ns[i]}});
    }
    std::vector<Interval> all;
    for (const auto& [p, iv] : found) all.push_back(iv);
    // Ranges of no known process count only in every process's union.
    gc_ = MergedByPid(std::move(found));
    gc_.erase(gc_.begin(),
              std::find_if(gc_.begin(), gc_.end(), [](const auto& e) { return e.first >= 0; }));
    if (!all.empty()) gc_.push_back({-1, MergeIntervals(std::move(all))});
    std::sort(gc_.begin(), gc_.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
  });
  return OfPid(gc_, pid, EmptyIntervals());
}

const std::vector<LaunchingThread>& HostFacts::LaunchingThreads(int32_t pid) {
  std::call_once(launching_once_, [&] {
    // Launch calls per (pid, tid), counted in place (not a pair per call, sorted): there are few
    // threads, and calls come in runs from one thread.
    std::map<std::pair<int32_t, int32_t>, int64_t> counts;
    std::pair<int32_t, int32_t> last;
    int64_t* last_count = nullptr;
    const ApiCallTable& a = trace_.api_calls;
    for (size_t r = 0; r < a.size(); ++r) {
      if (a.api_class[r] != ApiClass::kLaunch) continue;
      const std::pair<int32_t, int32_t> key{a.pid[r], a.tid[r]};
      if (last_count == nullptr || key != last) {
        last = key;
        last_count = &counts[key];
      }
      ++*last_count;
    }
    std::vector<LaunchingThread> all;  // by (pid, tid)
    for (const auto& [key, n] : counts) all.push_back({key.first, key.second, n});
    auto by_launches = [](const LaunchingThread& x, const LaunchingThread& y) {
      if (x.launches != y.launches) return x.launches > y.launches;
      return x.pid != y.pid ? x.pid < y.pid : x.tid < y.tid;
    };
    for (size_t i = 0; i < all.size();) {  // `all` is sorted by pid here
      size_t j = i;
      while (j < all.size() && all[j].pid == all[i].pid) ++j;
      std::vector<LaunchingThread> v(all.begin() + i, all.begin() + j);
      std::sort(v.begin(), v.end(), by_launches);
      if (all[i].pid >= 0) launching_.push_back({all[i].pid, std::move(v)});
      i = j;
    }
    std::sort(all.begin(), all.end(), by_launches);
    if (!all.empty()) launching_.push_back({-1, std::move(all)});
    std::sort(launching_.begin(), launching_.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
  });
  static const std::vector<LaunchingThread> kNone;
  return OfPid(launching_, pid, kNone);
}

LaunchingThread HostFacts::MainLaunchingThread(int32_t pid) {
  const std::vector<LaunchingThread>& v = LaunchingThreads(pid);
  return v.empty() ? LaunchingThread{} : v.front();
}

bool IsWaitingOsCall(std::string_view name) {
  static constexpr std::string_view kWaiting[] = {"poll",
                                                  "ppoll",
                                                  "epoll_wait",
                                                  "epoll_pwait",
                                                  "epoll_pwait2",
                                                  "select",
                                                  "pselect",
                                                  "pselect6",
                                                  "pthread_cond_wait",
                                                  "pthread_cond_timedwait",
                                                  "pthread_cond_clockwait",
                                                  "pthread_mutex_lock",
                                                  "pthread_mutex_timedlock",
                                                  "pthread_rwlock_rdlock",
                                                  "pthread_rwlock_wrlock",
                                                  "pthread_rwlock_timedrdlock",
                                                  "pthread_rwlock_timedwrlock",
                                                  "pthread_join",
                                                  "pthread_timedjoin_np",
                                                  "sem_wait",
                                                  "sem_timedwait",
                                                  "sem_clockwait",
                                                  "futex",
                                                  "nanosleep",
                                                  "clock_nanosleep",
                                                  "usleep",
                                                  "sleep",
                                                  "read",
                                                  "readv",
                                                  "pread",
                                                  "pread64",
                                                  "recv",
                                                  "recvfrom",
                                                  "recvmsg",
                                                  "recvmmsg",
                                                  "accept",
                                                  "accept4",
                                                  "wait",
                                                  "waitpid",
                                                  "waitid",
                                                  "wait4",
                                                  "msgrcv",
                                                  "mq_receive",
                                                  "mq_timedreceive",
                                                  "sigwait",
                                                  "sigwaitinfo",
                                                  "sigtimedwait",
                                                  "sigsuspend",
                                                  "pause",
                                                  "flock",
                                                  "lockf"};
  for (std::string_view w : kWaiting) {
    if (name == w) return true;
  }
  return false;
}

void HostFacts::EnsureWaits() {
  std::call_once(waits_once_, [this] {
    const OsCallTable& os = trace_.os_calls;
    const OffCpuTable& off = trace_.off_cpu;
    // Runs of one thread are pushed once: the tables hold far more rows than threads.
    auto push = [&](int32_t pid, int32_t tid) {
      if (wait_threads_.empty() || wait_threads_.back() != std::make_pair(pid, tid)) {
        wait_threads_.push_back({pid, tid});
      }
    };
    for (size_t i = 0; i < os.size(); ++i) push(os.pid[i], os.tid[i]);
    for (size_t i = 0; i < off.size(); ++i) push(off.pid[i], off.tid[i]);
    std::sort(wait_threads_.begin(), wait_threads_.end());
    wait_threads_.erase(std::unique(wait_threads_.begin(), wait_threads_.end()),
                        wait_threads_.end());
    waits_.resize(wait_threads_.size());
    auto slot = [&](int32_t pid, int32_t tid) -> ThreadWaits& {
      auto it =
          std::lower_bound(wait_threads_.begin(), wait_threads_.end(), std::make_pair(pid, tid));
      return waits_[it - wait_threads_.begin()];
    };
    std::vector<int8_t> waiting(trace_.strings.size(), -1);  // by StringId
    for (size_t i = 0; i < os.size(); ++i) {  // sorted by start: unions build in order
      int8_t& w = waiting[os.name[i].value];
      if (w < 0) w = IsWaitingOsCall(trace_.str(os.name[i]));
      if (w) AppendToUnion(slot(os.pid[i], os.tid[i]).os_wait, os.start_ns[i], os.end_ns[i]);
    }
    for (size_t i = 0; i < off.size(); ++i) {
      AppendToUnion(slot(off.pid[i], off.tid[i]).off_cpu, off.start_ns[i], off.end_ns[i]);
    }
    // An OS wait inside a CUDA call (the driver polls while cudaStreamSynchronize waits) belongs to
    // that call: take the thread's CUDA API calls out.
    const ApiCallTable& api = trace_.api_calls;
    std::vector<std::vector<Interval>> cuda(wait_threads_.size());
    for (size_t i = 0; i < api.size(); ++i) {
      const auto key = std::make_pair(api.pid[i], api.tid[i]);
      auto it = std::lower_bound(wait_threads_.begin(), wait_threads_.end(), key);
      if (it == wait_threads_.end() || *it != key) continue;
      AppendToUnion(cuda[it - wait_threads_.begin()], api.start_ns[i], api.end_ns[i]);
    }
    // Likewise a condition wait inside a wait for the GIL (CPython's GIL is a condition variable)
    // belongs to the GIL wait.
    for (size_t k = 0; k < waits_.size(); ++k) {
      std::vector<Interval>& w = waits_[k].os_wait;
      if (!cuda[k].empty() && !w.empty()) w = SubtractIntervals(w, cuda[k]);
      const std::vector<Interval>& gil = GilWaited(wait_threads_[k].first, wait_threads_[k].second);
      if (!gil.empty() && !w.empty()) w = SubtractIntervals(w, gil);
    }
  });
}

const ThreadWaits& HostFacts::Waits(int32_t pid, int32_t tid) {
  static const ThreadWaits kNone;
  EnsureWaits();
  const int64_t i = IndexOf(wait_threads_, pid, tid);
  return i < 0 ? kNone : waits_[i];
}

HostBreakdown HostFacts::HostWithin(int32_t pid, int32_t tid, TimeNs a, TimeNs b) {
  HostBreakdown h;
  const ThreadWaits& w = Waits(pid, tid);
  h.gc_ns = BusyWithin(GcIntervals(pid), a, b);
  h.gil_wait_ns = BusyWithin(GilWaited(pid, tid), a, b);
  h.os_wait_ns = BusyWithin(w.os_wait, a, b);
  h.sync_ns = BusyWithin(BlockingCalls(pid), a, b);
  h.off_cpu_ns = BusyWithin(w.off_cpu, a, b);
  return h;
}

void HostFacts::EnsureGil() {
  std::call_once(gil_once_, [this] {
    const GilTable& g = trace_.gil;
    for (size_t i = 0; i < g.size(); ++i) {  // runs of one thread once
      if (gil_threads_.empty() || gil_threads_.back() != std::make_pair(g.pid[i], g.tid[i])) {
        gil_threads_.push_back({g.pid[i], g.tid[i]});
      }
    }
    std::sort(gil_threads_.begin(), gil_threads_.end());
    gil_threads_.erase(std::unique(gil_threads_.begin(), gil_threads_.end()), gil_threads_.end());
    gil_held_.resize(gil_threads_.size());
    gil_waited_.resize(gil_threads_.size());
    // The table is sorted by start, so each thread's intervals arrive in start order.
    size_t last = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      const std::pair<int32_t, int32_t> key{g.pid[i], g.tid[i]};
      if (last >= gil_threads_.size() || gil_threads_[last] != key) {
        last =
            std::lower_bound(gil_threads_.begin(), gil_threads_.end(), key) - gil_threads_.begin();
      }
      std::vector<Interval>& u =
          g.state[i] == GilState::kHeld ? gil_held_[last] : gil_waited_[last];
      AppendToUnion(u, g.start_ns[i], g.end_ns[i]);
    }
  });
}

const std::vector<Interval>& HostFacts::GilHeld(int32_t pid, int32_t tid) {
  EnsureGil();
  const int64_t i = IndexOf(gil_threads_, pid, tid);
  return i < 0 ? EmptyIntervals() : gil_held_[i];
}

const std::vector<Interval>& HostFacts::GilWaited(int32_t pid, int32_t tid) {
  EnsureGil();
  const int64_t i = IndexOf(gil_threads_, pid, tid);
  return i < 0 ? EmptyIntervals() : gil_waited_[i];
}

const std::vector<std::pair<int32_t, int32_t>>& HostFacts::GilThreads() {
  EnsureGil();
  return gil_threads_;
}

}  // namespace sightline
