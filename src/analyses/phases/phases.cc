#include "analyses/phases/phases.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <string_view>
#include <unordered_map>

#include "facts/graph_replays.h"
#include "facts/intervals.h"

namespace sightline {
namespace {

constexpr DurationNs kMaxBinNs = 100'000'000;  // the process tree's CPU sample period
constexpr DurationNs kMinBinNs = 1'000'000;
constexpr int64_t kBinsWanted = 1000;
// A bound on the bins whatever the trace's times say (a start-up of 28 hours at 100 ms): past it
// the bins widen.
constexpr int64_t kMaxBins = 1'000'000;
constexpr DurationNs kShowPhasesNs = 1'000'000'000;

// What one bin of start-up held.
struct Bin {
  DurationNs gpu_busy_ns = 0;
  int64_t kernels = 0, timing_calls = 0, captures = 0, htod_bytes = 0;
  bool in_capture = false;
  double compiler_cpu_ns = 0, program_cpu_ns = 0;
};

bool IsTimingCall(std::string_view name) {
  return name == "cudaEventElapsedTime" || name == "cuEventElapsedTime" ||
         name == "cudaEventElapsedTime_v2" || name == "cuEventElapsedTime_v2";
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

const char* StartupActivityName(StartupActivity a) {
  switch (a) {
    case StartupActivity::kCapture:
      return "CUDA-graph capture";
    case StartupActivity::kAutotune:
      return "autotuning";
    case StartupActivity::kLoad:
      return "copies to the GPU";
    case StartupActivity::kGpu:
      return "GPU work";
    case StartupActivity::kCompile:
      return "compiling";
    case StartupActivity::kHost:
      return "host work, GPU idle";
    case StartupActivity::kIdle:
      return "idle";
    case StartupActivity::kUnknown:
      break;
  }
  return "GPU idle, host unknown";
}

bool IsCompilerProcess(std::string_view name, std::string_view command) {
  static constexpr std::array<std::string_view, 21> kCompilers = {
      "ptxas",   "nvcc",    "cicc",   "nvlink",  "fatbinary", "cudafe++", "nvdisasm",
      "cc1",     "cc1plus", "gcc",    "g++",     "gcc-real",  "c++",      "clang",
      "clang++", "ld",      "ld.lld", "ld.gold", "as",        "collect2", "llc"};
  const std::string_view argv0 = BaseName(command.substr(0, command.find(' ')));
  for (std::string_view c : kCompilers) {
    if (name == c || argv0 == c) return true;
  }
  // torch.compile's (Inductor's) compile workers: python running torch/_inductor/compile_worker.
  return command.find("_inductor/compile_worker") != std::string_view::npos;
}

StatusOr<const PhasesResult*> CachedPhases(AnalysisContext& context) {
  return context.results().Get<PhasesResult>("phases",
                                             [&context] { return ComputePhases(context); });
}

StatusOr<PhasesResult> ComputePhases(AnalysisContext& context) {
  const Trace& trace = context.trace();
  PhasesResult r;
  const IterationSet* set = context.loop().MainSet();
  if (set == nullptr || set->iterations.empty()) return r;
  r.has_steps = true;
  r.steps = set->pattern;
  r.trace_begin_ns = trace.begin_ns();
  r.trace_end_ns = trace.end_ns();
  r.steps_total = static_cast<int64_t>(set->iterations.size());
  r.warmup_steps = set->warmup;
  r.first_step_ns = set->iterations.front().start_ns;
  for (const Iteration& it : set->iterations) {
    r.first_step_ns = std::min(r.first_step_ns, it.start_ns);
    r.last_step_end_ns = std::max(r.last_step_end_ns, it.end_ns);
  }
  // The process's other loops are steps too (a prefill before the first decode step).
  if (StatusOr<const IterationsResult*> all = context.loop().Iterations(); all.ok()) {
    for (const IterationSet& loop : (*all)->other_loops) {
      if (loop.pid != set->pid) continue;
      for (const Iteration& it : loop.iterations) {
        r.first_step_ns = std::min(r.first_step_ns, it.start_ns);
        r.last_step_end_ns = std::max(r.last_step_end_ns, it.end_ns);
      }
    }
  }
  const size_t first_steady = std::min<size_t>(
      static_cast<size_t>(std::max<int64_t>(0, set->warmup)), set->iterations.size() - 1);
  r.first_steady_ns = std::max(r.first_step_ns, set->iterations[first_steady].start_ns);
  r.first_step_ns = std::max(r.first_step_ns, r.trace_begin_ns);
  r.first_steady_ns = std::max(r.first_steady_ns, r.first_step_ns);
  r.last_step_end_ns = std::clamp(r.last_step_end_ns, r.first_steady_ns,
                                  std::max(r.trace_end_ns, r.first_steady_ns));
  r.trace_end_ns = std::max(r.trace_end_ns, r.last_step_end_ns);

  // The traced processes: those with CUDA work in this trace.
  std::set<int32_t> traced;
  for (int32_t pid : trace.api_calls.pid) traced.insert(pid);
  for (int32_t pid : trace.kernels.pid) traced.insert(pid);
  if (!trace.run_processes.empty()) {
    TimeNs program_start = trace.run_processes.front().start_ns;
    for (const RunProcess& p : trace.run_processes)
      program_start = std::min(program_start, p.start_ns);
    r.before_trace_ns = std::max<DurationNs>(0, r.trace_begin_ns - program_start);
  }

  r.first_launches = FindFirstLaunchLoads(trace, r.first_step_ns, r.first_steady_ns);
  const DurationNs startup = r.startup_ns();
  if (startup <= 0) return r;
  r.bin_ns = std::max<DurationNs>(
      std::clamp<DurationNs>(startup / kBinsWanted, kMinBinNs, kMaxBinNs), startup / kMaxBins + 1);
  const size_t bins = static_cast<size_t>((startup + r.bin_ns - 1) / r.bin_ns);
  std::vector<Bin> bin(bins);
  const TimeNs t0 = r.trace_begin_ns, t1 = r.first_step_ns;
  const auto bin_of = [&](TimeNs t) { return static_cast<size_t>((t - t0) / r.bin_ns); };
  const auto bin_end = [&](size_t b) {
    return std::min<TimeNs>(t0 + static_cast<TimeNs>(b + 1) * r.bin_ns, t1);
  };
  const auto bin_start = [&](size_t b) { return t0 + static_cast<TimeNs>(b) * r.bin_ns; };
  // Adds `amount` spread evenly over [a, b) to the bins it overlaps.
  const auto spread = [&](TimeNs a, TimeNs b, double amount, double Bin::*field) {
    if (b <= a) return;
    const TimeNs ca = std::max(a, t0), cb = std::min(b, t1);
    if (cb <= ca) return;
    const double per_ns = amount / static_cast<double>(b - a);
    for (size_t i = bin_of(ca); i < bins && bin_start(i) < cb; ++i) {
      const TimeNs lo = std::max(ca, bin_start(i)), hi = std::min(cb, bin_end(i));
      if (hi > lo) bin[i].*field += per_ns * static_cast<double>(hi - lo);
    }
  };

  // GPU work: the union over every device, and kernel starts.
  std::vector<Interval> busy;
  for (int32_t device : context.gpu().GpuDevices()) {
    const std::vector<Interval>& b = context.gpu().Busy(device);
    busy.insert(busy.end(), b.begin(), b.end());
  }
  busy = MergeIntervals(std::move(busy));
  for (const Interval& iv : busy) {
    const TimeNs a = std::max(iv.start_ns, t0), b = std::min(iv.end_ns, t1);
    for (TimeNs t = a; t < b;) {
      const size_t i = bin_of(t);
      const TimeNs hi = std::min(b, bin_end(i));
      bin[i].gpu_busy_ns += hi - t;
      t = hi;
    }
  }
  for (size_t k = 0; k < trace.kernels.size(); ++k) {
    const TimeNs s = trace.kernels.start_ns[k];
    if (s >= t0 && s < t1) ++bin[bin_of(s)].kernels;
  }
  for (size_t m = 0; m < trace.memops.size(); ++m) {
    const TimeNs s = trace.memops.start_ns[m];
    if (trace.memops.kind[m] == MemOpKind::kHtoD && s >= t0 && s < t1) {
      bin[bin_of(s)].htod_bytes += std::max<int64_t>(0, trace.memops.size_bytes[m]);
    }
  }
  // Timing calls; one runtime call and the driver call inside it share a correlation id.
  std::unordered_map<uint32_t, bool> timing_name;
  std::set<int64_t> seen;
  const ApiCallTable& a = trace.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.start_ns[i] < t0 || a.start_ns[i] >= t1) continue;
    auto [it, inserted] = timing_name.try_emplace(a.name[i].value, false);
    if (inserted) it->second = IsTimingCall(trace.str(a.name[i]));
    if (!it->second) continue;
    if (a.correlation[i] >= 0 && !seen.insert(a.correlation[i]).second) continue;
    ++bin[bin_of(a.start_ns[i])].timing_calls;
  }
  for (const GraphCapture& c : context.graphs().Replays().captures) {
    const TimeNs a0 = std::max(c.begin_ns, t0), b0 = std::min(c.end_ns + c.instantiate_ns, t1);
    if (c.end_ns >= t0 && c.end_ns < t1) ++bin[bin_of(c.end_ns)].captures;
    for (TimeNs t = a0; t < b0;) {
      const size_t i = bin_of(t);
      bin[i].in_capture = true;
      t = bin_end(i);
    }
  }
  // CPU time from the process tree, each sample spread over its interval.
  for (const RunProcess& p : trace.run_processes) {
    const bool compiler = IsCompilerProcess(p.name, p.command);
    const bool program = traced.count(p.pid) > 0;
    if (!p.cpu_end_ns.empty()) r.cpu_known = true;
    if (!compiler && !program) continue;
    if (compiler && p.start_ns < t1) ++r.compiler_processes;
    TimeNs from = p.start_ns;
    for (size_t i = 0; i < p.cpu_end_ns.size() && i < p.cpu_used_ns.size(); ++i) {
      spread(from, p.cpu_end_ns[i], static_cast<double>(p.cpu_used_ns[i]),
             compiler ? &Bin::compiler_cpu_ns : &Bin::program_cpu_ns);
      from = p.cpu_end_ns[i];
    }
  }

  // Each bin's activity, then stretches of one activity.
  std::vector<StartupActivity> act(bins);
  for (size_t i = 0; i < bins; ++i) {
    const Bin& b = bin[i];
    const double width = static_cast<double>(bin_end(i) - bin_start(i));
    StartupActivity x;
    if (b.in_capture) {
      x = StartupActivity::kCapture;
    } else if (b.timing_calls >= kTimingCallsPerBin) {
      x = StartupActivity::kAutotune;
    } else if (b.htod_bytes >= kLoadBytesPerBin) {
      x = StartupActivity::kLoad;
    } else if (static_cast<double>(b.gpu_busy_ns) >= 0.01 * width) {
      x = StartupActivity::kGpu;
    } else if (b.compiler_cpu_ns >= 0.1 * width) {
      x = StartupActivity::kCompile;
    } else if (b.program_cpu_ns >= 0.1 * width) {
      x = StartupActivity::kHost;
    } else {
      x = r.cpu_known ? StartupActivity::kIdle : StartupActivity::kUnknown;
    }
    act[i] = x;
  }
  struct Run {
    StartupActivity activity;
    size_t b0, b1;  // bins [b0, b1)
  };
  std::vector<Run> runs;
  const auto merge_equal = [](std::vector<Run>& v) {
    std::vector<Run> out;
    for (const Run& x : v) {
      if (!out.empty() && out.back().activity == x.activity) {
        out.back().b1 = x.b1;
      } else {
        out.push_back(x);
      }
    }
    v = std::move(out);
  };
  for (size_t i = 0; i < bins; ++i) runs.push_back({act[i], i, i + 1});
  merge_equal(runs);
  // Stretches shorter than this (100 ms, at least 3 bins) do not stand on their own: the table
  // names what took the time, not every flicker between activities. First a short stretch between
  // two of one activity takes theirs (autotuning alternates timing calls and the kernels timed),
  // then the short ones left are folded into their longer neighbour.
  const size_t min_bins =
      std::max<size_t>(3, static_cast<size_t>((kMaxBinNs + r.bin_ns - 1) / r.bin_ns));
  r.fold_bins = static_cast<int64_t>(min_bins);
  const auto is_short = [&](const Run& x) { return x.b1 - x.b0 < min_bins; };
  for (int pass = 0; pass < 64 && runs.size() > 2; ++pass) {
    bool changed = false;
    for (size_t k = 1; k + 1 < runs.size(); ++k) {
      if (is_short(runs[k]) && runs[k - 1].activity == runs[k + 1].activity &&
          runs[k].activity != runs[k - 1].activity) {
        runs[k].activity = runs[k - 1].activity;
        changed = true;
      }
    }
    merge_equal(runs);
    if (!changed) break;
  }
  for (int pass = 0; pass < 64 && runs.size() > 1; ++pass) {
    std::vector<Run> out;
    bool changed = false;
    for (size_t k = 0; k < runs.size(); ++k) {
      Run x = runs[k];
      const bool has_next = k + 1 < runs.size();
      if (is_short(x) && !out.empty() &&
          (!has_next || out.back().b1 - out.back().b0 >= runs[k + 1].b1 - runs[k + 1].b0)) {
        out.back().b1 = x.b1;
        changed = true;
      } else if (is_short(x) && has_next) {
        runs[k + 1].b0 = x.b0;
        changed = true;
      } else {
        out.push_back(x);
      }
    }
    merge_equal(out);
    runs = std::move(out);
    if (!changed) break;
  }
  for (const Run& x : runs) {
    StartupSegment& s = r.segments.emplace_back();
    s.activity = x.activity;
    s.start_ns = bin_start(x.b0);
    s.end_ns = bin_end(x.b1 - 1);
    double compiler = 0, program = 0;
    for (size_t i = x.b0; i < x.b1; ++i) {
      s.gpu_busy_ns += bin[i].gpu_busy_ns;
      s.kernels += bin[i].kernels;
      s.timing_calls += bin[i].timing_calls;
      s.captures += bin[i].captures;
      s.htod_bytes += bin[i].htod_bytes;
      compiler += bin[i].compiler_cpu_ns;
      program += bin[i].program_cpu_ns;
    }
    s.compiler_cpu_ns = static_cast<DurationNs>(compiler);
    s.program_cpu_ns = static_cast<DurationNs>(program);
    r.compiler_cpu_ns += s.compiler_cpu_ns;
    r.activity_ns[static_cast<int>(s.activity)] += s.end_ns - s.start_ns;
  }
  return r;
}

Status RunPhasesSection(AnalysisContext& context, int input, Report& report) {
  ASSIGN_OR_RETURN(const PhasesResult* rp, CachedPhases(context));
  const PhasesResult& r = *rp;
  if (!r.has_steps) return Status::Ok();
  // Only where the time before the steps matters: a second, or a tenth of the run.
  const DurationNs before = std::max<DurationNs>(0, r.before_trace_ns) + r.startup_ns();
  const DurationNs run =
      std::max<DurationNs>(0, r.before_trace_ns) + r.trace_end_ns - r.trace_begin_ns;
  if (before < kShowPhasesNs && 10 * before < run) return Status::Ok();
  Section& s = report.AddSection("phases", "Phases of the run", input);
  if (r.before_trace_ns >= 0) {
    s.AddFact("before_trace_ns", "Before the trace (program start to first CUDA event)",
              r.before_trace_ns, Unit::kDurationNs);
  }
  s.AddFact("startup_ns", "Start-up (first CUDA event to first step)", r.startup_ns(),
            Unit::kDurationNs);
  for (StartupActivity a : {StartupActivity::kCompile, StartupActivity::kAutotune,
                            StartupActivity::kCapture, StartupActivity::kLoad}) {
    static constexpr const char* kKeys[] = {"capture_ns", "autotune_ns", "load_ns", "",
                                            "compile_ns"};
    s.AddFact(kKeys[static_cast<int>(a)], fmt::format("Of it {}", StartupActivityName(a)),
              r.activity(a), Unit::kDurationNs);
  }
  if (r.cpu_known) {
    s.AddFact("compiler_processes", "Compiler processes started before the first step",
              r.compiler_processes, Unit::kCount);
    s.AddFact("compiler_cpu_ns", "Their CPU time in start-up", r.compiler_cpu_ns,
              Unit::kDurationNs);
  }
  const FirstLaunchLoads& fl = r.first_launches;
  if (fl.loading > 0) {
    s.AddFact("module_loading_launches",
              "First launches that loaded their kernel's code (lazy module loading)", fl.loading,
              Unit::kCount);
    s.AddFact("module_loading_ns", "Their time", fl.loading_ns, Unit::kDurationNs);
    s.AddFact("module_loading_startup_ns", "Of it in start-up", fl.startup_ns, Unit::kDurationNs);
    s.AddFact("module_loading_warmup_ns", "In the warm-up steps", fl.warmup_ns, Unit::kDurationNs);
    s.AddFact("module_loading_steady_ns", "In the steady steps and after", fl.steady_ns,
              Unit::kDurationNs);
  }
  s.AddFact("steady_ns", "Steady state (first steady step to last step's end)", r.steady_ns(),
            Unit::kDurationNs);
  Table& t = s.AddTable("phases", "Phases, in time order",
                        {{"phase", "Phase", Unit::kText},
                         {"start_ns", "Start", Unit::kDurationNs},
                         {"duration_ns", "Time", Unit::kDurationNs},
                         {"what", "What marks it", Unit::kText}});
  const TimeNs origin = r.trace_begin_ns;
  if (r.before_trace_ns > 0) {
    t.rows.push_back({std::string("before the trace"), -r.before_trace_ns, r.before_trace_ns,
                      std::string("program start (process tree) to the first CUDA event: the "
                                  "interpreter, imports, CUDA initialisation")});
  }
  t.rows.push_back({std::string("start-up"), int64_t{0}, r.startup_ns(),
                    std::string("first CUDA event to the first step")});
  if (r.warmup_steps > 0) {
    t.rows.push_back({std::string("warm-up steps"), r.first_step_ns - origin, r.warmup_ns(),
                      fmt::format("{} step(s) before the loop settles", r.warmup_steps)});
  }
  t.rows.push_back({std::string("steady state"), r.first_steady_ns - origin, r.steady_ns(),
                    fmt::format("{} steps of '{}'", r.steps_total - r.warmup_steps, r.steps)});
  if (r.after_ns() > 0) {
    t.rows.push_back({std::string("after the last step"), r.last_step_end_ns - origin, r.after_ns(),
                      std::string("last step's end to the trace's end")});
  }
  t.note = "Start: from the trace's first event. Steps: the iterations section's main set.";
  if (fl.loading > 0) {
    t.note += fmt::format(
        " Lazy module loading: {} of {} kernels' first launches took over {} (the median launch "
        "call {}): the driver loaded their code inside the call (CUDA_MODULE_LOADING=LAZY, the "
        "default); CUDA_MODULE_LOADING=EAGER moves it to start-up.",
        fl.loading, fl.first_launches,
        FormatDuration(std::max(kLoadingLaunchNs, kLoadingLaunchFactor * fl.median_launch_ns)),
        FormatDuration(fl.median_launch_ns));
  }
  if (r.segments.empty()) return Status::Ok();
  const double startup = static_cast<double>(r.startup_ns());
  Table& by = s.AddTable("startup_activities", "Start-up by activity",
                         {{"activity", "Activity", Unit::kText},
                          {"duration_ns", "Time", Unit::kDurationNs},
                          {"share_pct", "Of start-up", Unit::kPercent}});
  std::vector<int> order;
  for (int k = 0; k < kStartupActivities; ++k) {
    if (r.activity_ns[k] > 0) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return r.activity_ns[x] > r.activity_ns[y]; });
  for (int k : order) {
    by.rows.push_back({std::string(StartupActivityName(static_cast<StartupActivity>(k))),
                       r.activity_ns[k], 100.0 * static_cast<double>(r.activity_ns[k]) / startup});
  }
  Table& seg = s.AddTable("startup_segments", "Start-up, stretch by stretch",
                          {{"activity", "Activity", Unit::kText},
                           {"start_ns", "Start", Unit::kDurationNs},
                           {"duration_ns", "Time", Unit::kDurationNs},
                           {"gpu_busy_ns", "GPU busy", Unit::kDurationNs},
                           {"kernels", "Kernels", Unit::kCount},
                           {"timing_calls", "Timing calls", Unit::kCount},
                           {"captures", "Captures", Unit::kCount},
                           {"htod_bytes", "To GPU", Unit::kBytes},
                           {"compiler_cpu_ns", "Compiler CPU", Unit::kDurationNs},
                           {"program_cpu_ns", "Program CPU", Unit::kDurationNs}});
  for (const StartupSegment& x : r.segments) {
    seg.rows.push_back({std::string(StartupActivityName(x.activity)), x.start_ns - origin,
                        x.end_ns - x.start_ns, x.gpu_busy_ns, x.kernels, x.timing_calls, x.captures,
                        x.htod_bytes, x.compiler_cpu_ns, x.program_cpu_ns});
  }
  seg.note = fmt::format(
      "Classified in bins of {}: graph capture, then autotuning (>= {} CUDA-event timing calls), "
      "copies to the GPU (>= {} MiB host-to-device), GPU work (busy >= 1%), compiling (compiler "
      "processes >= 10% of a core), host work (the program >= 10% of a core), idle; a stretch "
      "shorter than {} bins between two of one activity takes theirs, the others are folded into "
      "the longer neighbour. {}",
      FormatDuration(r.bin_ns), kTimingCallsPerBin, kLoadBytesPerBin >> 20, r.fold_bins,
      r.cpu_known ? "CPU from the run's process tree (NAME.processes.json)."
                  : "No process tree (record with `sightline record` for it): where the GPU "
                    "idled, what the host did is unknown.");
  return Status::Ok();
}

}  // namespace sightline
