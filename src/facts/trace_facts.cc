#include "facts/trace_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "facts/graph_kernel_paths.h"
#include "facts/graph_replays.h"
#include "facts/metric_samples.h"

namespace sightline {
namespace {

const std::vector<Interval>& EmptyIntervals() {
  static const std::vector<Interval> kEmpty;
  return kEmpty;
}

}  // namespace

bool IsBlockingCall(const Trace& trace, size_t row) {
  const ApiClass c = trace.api_calls.api_class[row];
  if (c == ApiClass::kSync) return true;
  if (c != ApiClass::kMemcpy && c != ApiClass::kMemset) return false;
  return trace.str(trace.api_calls.name[row]).find("Async") == std::string_view::npos;
}

TraceFacts::TraceFacts(const Trace& trace, FactsOptions options, FactsInputs inputs)
    : trace_(&trace), options_(std::move(options)), inputs_(std::move(inputs)) {}

TraceFacts::TraceFacts(std::unique_ptr<const Trace> trace, FactsOptions options, FactsInputs inputs)
    : owned_(std::move(trace)),
      trace_(owned_.get()),
      options_(std::move(options)),
      inputs_(std::move(inputs)) {}

TraceFacts::~TraceFacts() = default;

void TraceFacts::EnsureBusy() {
  std::call_once(busy_once_, [this] {
    const KernelTable& k = trace_->kernels;
    const MemOpTable& m = trace_->memops;
    // One slot per distinct device id (work on no device, id < 0, counts on none), with room for
    // one interval per operation: growing the unions by doubling would write every interval into
    // fresh memory several times (page faults on fresh memory are costly on VMs).
    std::vector<size_t> ops;
    auto count = [&](int32_t d) {
      if (d < 0) return;
      const uint32_t s = device_slots_.Add(d);
      if (s == ops.size()) ops.push_back(0);
      ++ops[s];
    };
    for (int32_t d : k.device) count(d);
    for (int32_t d : m.device) count(d);
    busy_.resize(device_slots_.size());
    for (size_t s = 0; s < busy_.size(); ++s) busy_[s].reserve(ops[s]);
    // One two-way merge of the start-sorted tables feeds every device's union.
    size_t i = 0, j = 0;
    std::pair<int32_t, int32_t> last{INT32_MIN, INT32_MIN};
    auto note = [&](int32_t pid, int32_t device) {
      if (pid == last.first && device == last.second) return;
      last = {pid, device};
      pid_devices_.push_back(last);
    };
    while (i < k.size() || j < m.size()) {
      if (j == m.size() || (i < k.size() && k.start_ns[i] <= m.start_ns[j])) {
        if (k.device[i] >= 0) {
          AppendToUnion(busy_[device_slots_.Find(k.device[i])], k.start_ns[i], k.end_ns[i]);
        }
        note(k.pid[i], k.device[i]);
        total_kernel_ns_ += k.dur_ns(i);
        ++i;
      } else {
        if (m.device[j] >= 0) {
          AppendToUnion(busy_[device_slots_.Find(m.device[j])], m.start_ns[j], m.end_ns[j]);
        }
        note(m.pid[j], m.device[j]);
        ++j;
      }
    }
    for (size_t s = 0; s < busy_.size(); ++s) {
      if (!busy_[s].empty()) gpu_devices_.push_back(device_slots_.ids()[s]);
    }
    std::sort(gpu_devices_.begin(), gpu_devices_.end());
    std::sort(pid_devices_.begin(), pid_devices_.end());
    pid_devices_.erase(std::unique(pid_devices_.begin(), pid_devices_.end()), pid_devices_.end());
  });
}

const std::vector<std::pair<int32_t, int32_t>>& TraceFacts::PidDevices() {
  EnsureBusy();
  return pid_devices_;
}

const std::vector<int32_t>& TraceFacts::GpuDevices() {
  EnsureBusy();
  return gpu_devices_;
}

const std::vector<Interval>& TraceFacts::Busy(int32_t device) {
  EnsureBusy();
  const uint32_t s = device_slots_.Find(device);
  if (s == DenseIds::kNone) return EmptyIntervals();
  return busy_[s];
}

DurationNs TraceFacts::TotalKernelTimeNs() {
  EnsureBusy();
  return total_kernel_ns_;
}

KernelCategory TraceFacts::Category(StringId name) {
  std::call_once(category_once_, [this] {
    category_size_ = trace_->strings.size();
    category_ = std::make_unique<std::atomic<int8_t>[]>(category_size_);
    for (size_t i = 0; i < category_size_; ++i) category_[i].store(-1, std::memory_order_relaxed);
  });
  if (name.value >= category_size_) return ClassifyKernel(trace_->str(name));
  // Two threads may classify one name at once: both store the same value.
  std::atomic<int8_t>& slot = category_[name.value];
  int8_t c = slot.load(std::memory_order_relaxed);
  if (c < 0) {
    c = static_cast<int8_t>(ClassifyKernel(trace_->str(name)));
    slot.store(c, std::memory_order_relaxed);
  }
  return static_cast<KernelCategory>(c);
}

void TraceFacts::EnsureComm() {
  std::call_once(comm_once_, [this] {
    EnsureBusy();
    comm_.resize(busy_.size());
    const KernelTable& k = trace_->kernels;
    {
      // Room for every kernel of its side (as in EnsureBusy).
      std::vector<size_t> comm(comm_.size(), 0), compute(comm_.size(), 0);
      for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] < 0) continue;
        ++(IsCommunication(k.name[i]) ? comm : compute)[device_slots_.Find(k.device[i])];
      }
      for (size_t s = 0; s < comm_.size(); ++s) {
        comm_[s].comm.reserve(comm[s]);
        comm_[s].compute.reserve(compute[s]);
      }
    }
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.device[i] < 0) continue;
      CommSplit& c = comm_[device_slots_.Find(k.device[i])];
      if (IsCommunication(k.name[i])) {
        AppendToUnion(c.comm, k.start_ns[i], k.end_ns[i]);
        ++c.comm_kernels;
        has_comm_ = true;
      } else {
        AppendToUnion(c.compute, k.start_ns[i], k.end_ns[i]);
      }
    }
    for (CommSplit& c : comm_) {
      c.comm_ns = TotalLength(c.comm);
      c.compute_ns = TotalLength(c.compute);
      c.overlap_ns = IntersectionLength(c.comm, c.compute);
    }
  });
}

const CommSplit& TraceFacts::Comm(int32_t device) {
  EnsureComm();
  static const CommSplit kEmpty;
  const uint32_t s = device_slots_.Find(device);
  if (s == DenseIds::kNone) return kEmpty;
  return comm_[s];
}

bool TraceFacts::HasCommunication() {
  EnsureComm();
  return has_comm_;
}

const LaunchIndex& TraceFacts::Launches() {
  std::call_once(launches_once_, [this] { launches_ = std::make_unique<LaunchIndex>(*trace_); });
  return *launches_;
}

const LaunchIndex& TraceFacts::LaunchesWithCapture() {
  std::call_once(capture_launches_once_, [this] {
    const std::vector<uint8_t>& graph = GraphPaths().graph;
    // Without graph kernels there is no second point: the launch index is the same.
    if (std::find(graph.begin(), graph.end(), 1) == graph.end()) return;
    capture_launches_ = std::make_unique<LaunchIndex>(*trace_, LaunchPoints::kLaunchAndCapture,
                                                      &GraphPaths().alignment);
  });
  return capture_launches_ ? *capture_launches_ : Launches();
}

const GraphKernelPaths& TraceFacts::GraphPaths() {
  std::call_once(graph_paths_once_, [this] {
    graph_paths_ = std::make_unique<GraphKernelPaths>(
        ComputeGraphKernelPaths(*trace_, inputs_.eager_reference.get()));
  });
  return *graph_paths_;
}

const GraphReplays& TraceFacts::Replays() {
  std::call_once(replays_once_, [this] {
    replays_ = std::make_unique<GraphReplays>(ComputeGraphReplays(*trace_, GraphPaths().graph));
  });
  return *replays_;
}

const std::vector<Interval>& TraceFacts::BlockingCalls(int32_t pid) {
  std::call_once(blocking_once_, [&] {
    std::vector<std::pair<int32_t, Interval>> calls;
    const ApiCallTable& a = trace_->api_calls;
    for (size_t r = 0; r < a.size(); ++r) {
      if (IsBlockingCall(*trace_, r)) {
        calls.push_back({a.pid[r], Interval{a.start_ns[r], a.end_ns[r]}});
      }
    }
    std::stable_sort(calls.begin(), calls.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < calls.size();) {
      size_t j = i;
      std::vector<Interval> v;
      while (j < calls.size() && calls[j].first == calls[i].first) v.push_back(calls[j++].second);
      blocking_.push_back({calls[i].first, MergeIntervals(std::move(v))});
      i = j;
    }
  });
  auto it = std::lower_bound(blocking_.begin(), blocking_.end(), pid,
                             [](const auto& e, int32_t p) { return e.first < p; });
  if (it == blocking_.end() || it->first != pid) return EmptyIntervals();
  return it->second;
}

const std::vector<Interval>& TraceFacts::GcIntervals(int32_t pid) {
  std::call_once(gc_once_, [&] {
    const RangeTable& r = trace_->ranges;
    std::vector<int8_t> is_gc(trace_->strings.size(), -1);  // by StringId
    std::vector<std::pair<int32_t, Interval>> found;
    for (size_t i = 0; i < r.size(); ++i) {
      int8_t& g = is_gc[r.name[i].value];
      if (g < 0) {
        const std::string_view name = trace_->str(r.name[i]);
        g = std::find(options_.gc_range_names.begin(), options_.gc_range_names.end(), name) !=
            options_.gc_range_names.end();
      }
      if (g) found.push_back({r.pid[i], Interval{r.start_ns[i], r.end_ns[i]}});
    }
    std::vector<Interval> all;
    for (const auto& [p, iv] : found) all.push_back(iv);
    if (!all.empty()) gc_.push_back({-1, MergeIntervals(std::move(all))});
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < found.size();) {
      size_t j = i;
      std::vector<Interval> v;
      while (j < found.size() && found[j].first == found[i].first) v.push_back(found[j++].second);
      if (found[i].first >= 0) gc_.push_back({found[i].first, MergeIntervals(std::move(v))});
      i = j;
    }
    std::sort(gc_.begin(), gc_.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
  });
  auto it = std::lower_bound(gc_.begin(), gc_.end(), pid,
                             [](const auto& e, int32_t p) { return e.first < p; });
  if (it == gc_.end() || it->first != pid) return EmptyIntervals();
  return it->second;
}

const std::vector<LaunchingThread>& TraceFacts::LaunchingThreads(int32_t pid) {
  std::call_once(launching_once_, [&] {
    // Launch calls per (pid, tid), counted in place (not a pair per call, sorted): there are few
    // threads, and calls come in runs from one thread.
    std::map<std::pair<int32_t, int32_t>, int64_t> counts;
    std::pair<int32_t, int32_t> last;
    int64_t* last_count = nullptr;
    const ApiCallTable& a = trace_->api_calls;
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
  auto it = std::lower_bound(launching_.begin(), launching_.end(), pid,
                             [](const auto& e, int32_t p) { return e.first < p; });
  if (it == launching_.end() || it->first != pid) return kNone;
  return it->second;
}

LaunchingThread TraceFacts::MainLaunchingThread(int32_t pid) {
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

void TraceFacts::EnsureWaits() {
  std::call_once(waits_once_, [this] {
    const OsCallTable& os = trace_->os_calls;
    const OffCpuTable& off = trace_->off_cpu;
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
    std::vector<int8_t> waiting(trace_->strings.size(), -1);  // by StringId
    for (size_t i = 0; i < os.size(); ++i) {  // sorted by start: unions build in order
      int8_t& w = waiting[os.name[i].value];
      if (w < 0) w = IsWaitingOsCall(trace_->str(os.name[i]));
      if (w) AppendToUnion(slot(os.pid[i], os.tid[i]).os_wait, os.start_ns[i], os.end_ns[i]);
    }
    for (size_t i = 0; i < off.size(); ++i) {
      AppendToUnion(slot(off.pid[i], off.tid[i]).off_cpu, off.start_ns[i], off.end_ns[i]);
    }
    // An OS wait inside a CUDA call (the driver polls while cudaStreamSynchronize waits) belongs to
    // that call: take the thread's CUDA API calls out.
    const ApiCallTable& api = trace_->api_calls;
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

const ThreadWaits& TraceFacts::Waits(int32_t pid, int32_t tid) {
  static const ThreadWaits kNone;
  EnsureWaits();
  auto it = std::lower_bound(wait_threads_.begin(), wait_threads_.end(), std::make_pair(pid, tid));
  if (it == wait_threads_.end() || *it != std::make_pair(pid, tid)) return kNone;
  return waits_[it - wait_threads_.begin()];
}

HostBreakdown TraceFacts::HostWithin(int32_t pid, int32_t tid, TimeNs a, TimeNs b) {
  HostBreakdown h;
  const ThreadWaits& w = Waits(pid, tid);
  h.gc_ns = BusyWithin(GcIntervals(pid), a, b);
  h.gil_wait_ns = BusyWithin(GilWaited(pid, tid), a, b);
  h.os_wait_ns = BusyWithin(w.os_wait, a, b);
  h.sync_ns = BusyWithin(BlockingCalls(pid), a, b);
  h.off_cpu_ns = BusyWithin(w.off_cpu, a, b);
  return h;
}

void TraceFacts::EnsureGil() {
  std::call_once(gil_once_, [this] {
    const GilTable& g = trace_->gil;
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

const std::vector<Interval>& TraceFacts::GilHeld(int32_t pid, int32_t tid) {
  EnsureGil();
  auto it = std::lower_bound(gil_threads_.begin(), gil_threads_.end(), std::make_pair(pid, tid));
  if (it == gil_threads_.end() || *it != std::make_pair(pid, tid)) return EmptyIntervals();
  return gil_held_[it - gil_threads_.begin()];
}

const std::vector<Interval>& TraceFacts::GilWaited(int32_t pid, int32_t tid) {
  EnsureGil();
  auto it = std::lower_bound(gil_threads_.begin(), gil_threads_.end(), std::make_pair(pid, tid));
  if (it == gil_threads_.end() || *it != std::make_pair(pid, tid)) return EmptyIntervals();
  return gil_waited_[it - gil_threads_.begin()];
}

const std::vector<std::pair<int32_t, int32_t>>& TraceFacts::GilThreads() {
  EnsureGil();
  return gil_threads_;
}

StatusOr<const IterationsResult*> TraceFacts::Iterations() {
  std::call_once(iterations_once_, [this] {
    IterationsOptions o;
    o.name_regex = options_.iterations_regex;
    iterations_.emplace(ComputeIterations(*this, o));
  });
  if (!iterations_->ok()) return iterations_->status();
  return &iterations_->value();
}

void TraceFacts::EnsureWindows() {
  std::call_once(windows_once_, [this] {
    EnsureBusy();
    StatusOr<const IterationsResult*> iterations = Iterations();
    if (iterations.ok() && !(*iterations)->sets.empty() &&
        !(*iterations)->sets[0].iterations.empty()) {
      main_set_ = &(*iterations)->sets[0];
      // The device the loop's process used most; the first of its devices otherwise.
      int32_t device = -1;
      DurationNs best = -1;
      for (int32_t d : main_set_->devices) {
        const DurationNs t = TotalLength(Busy(d));
        if (t > best) best = t, device = d;
      }
      // The steady state only: findings speak of it, not of the warm-up steps before it.
      for (const Iteration& it : main_set_->iterations) {
        if (it.warmup) continue;
        windows_.push_back(LoopWindow{it.index, it.start_ns, it.end_ns, main_set_->pid,
                                      main_set_->tid, device, &it});
      }
      return;
    }
    for (int32_t d : gpu_devices_) {
      const std::vector<Interval>& b = Busy(d);
      windows_.push_back(LoopWindow{-1, b.front().start_ns, b.back().end_ns, -1, -1, d, nullptr});
    }
  });
}

const IterationSet* TraceFacts::MainSet() {
  EnsureWindows();
  return main_set_;
}

const std::vector<LoopWindow>& TraceFacts::Windows() {
  EnsureWindows();
  return windows_;
}

int64_t TraceFacts::FindWindow(int32_t pid, TimeNs t) {
  EnsureWindows();
  // Iteration windows are sorted and disjoint; whole-trace windows (one per device) overlap, and
  // the first that holds t is taken.
  if (main_set_ == nullptr) {
    for (size_t w = 0; w < windows_.size(); ++w) {
      if (t >= windows_[w].start_ns && t < windows_[w].end_ns) return static_cast<int64_t>(w);
    }
    return -1;
  }
  // The last window that starts at or before t. Callers ask in time order (rows of a table), so
  // the previous answer's window and the next one are tried before a binary search.
  size_t w = windows_.size();
  const size_t hint = window_hint_.load(std::memory_order_relaxed);
  for (size_t c = hint; c < windows_.size() && c <= hint + 1; ++c) {
    if (t >= windows_[c].start_ns && (c + 1 == windows_.size() || t < windows_[c + 1].start_ns)) {
      w = c;
      break;
    }
  }
  if (w == windows_.size()) {
    auto it = std::upper_bound(windows_.begin(), windows_.end(), t,
                               [](TimeNs v, const LoopWindow& lw) { return v < lw.start_ns; });
    if (it == windows_.begin()) return -1;
    w = static_cast<size_t>(it - windows_.begin()) - 1;
  }
  window_hint_.store(w, std::memory_order_relaxed);
  if (t >= windows_[w].end_ns || pid != windows_[w].pid) return -1;
  return static_cast<int64_t>(w);
}

std::string TraceFacts::WindowLabel(const LoopWindow& w) const {
  if (w.it == nullptr) return "whole trace";
  const std::string plain = fmt::format("iteration {}", w.iteration);
  const std::string_view name = trace_->str(w.it->name);
  if (name == plain) return plain;  // "iteration 12", not "iteration 12 (iteration 12)"
  return fmt::format("{} ({})", plain, name);
}

const MetricSamples& TraceFacts::Samples() {
  std::call_once(samples_once_, [this] { samples_ = std::make_unique<MetricSamples>(*trace_); });
  return *samples_;
}

}  // namespace sightline
