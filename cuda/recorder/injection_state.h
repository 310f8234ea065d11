// What the recorder's parts inside the application share (injection.cc, graph_callbacks.cc): the
// one State of the process, set once by the start (StartOnce) and read by the CUPTI callbacks,
// and the CUPTI call check that logs and goes on. Internal to libsightline_recorder.so.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "pm_sampler.h"
#include "sightline/gpu_check.h"
#include "writer.h"

namespace sightline::recorder {

struct State {
  std::once_flag once;
  bool active = false;  // recording in this process
  Writer* writer = nullptr;
  PmSampler* sampler = nullptr;  // --gpu-metrics
  CUpti_SubscriberHandle subscriber = nullptr;
  bool driver_api = false;   // driver API records: opt-in (SIGHTLINE_RECORD_DRIVER_API=1)
  bool query_calls = false;  // record state-query API calls too
  bool graph_trace = false;  // one record per graph launch (CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
  bool cuda_memory = false;  // allocations, releases and pools (--cuda-memory-usage)
  bool runtime_on = true;    // runtime API records (off only with SIGHTLINE_RECORD_SKIP=runtime)
  // --cuda-graph-trace sampled:N: every N-th graph launch node by node (GRAPH_TRACE switched off
  // around it), the others as whole graphs. 0: not sampled.
  uint32_t graph_sample = 0;
  std::atomic<uint64_t> graph_launches{0};
  std::mutex graph_mu;               // the three below
  bool whole_graphs_wanted = false;  // recording (in a window, or no capture range)
  int node_traced_in_flight = 0;     // sampled launches between their API entry and exit
  bool whole_graphs_on = false;      // GRAPH_TRACE as last set
  // With a capture range and whole-graph records (graph or sampled mode): GRAPH_TRACE is enabled
  // at injection and never switched at a window's edge; the writer keeps the graph records that
  // start inside a window. Enabling it at a window's start, after the program had instantiated
  // its graphs, ended torch.compile'd programs with SIGSEGV on the next replay (run27).
  bool graph_trace_whole_run = false;
  // Graph node creations: off with SIGHTLINE_RECORD_SKIP=graph_nodes, and with
  // --cuda-graph-trace graph (no kernel then carries a node id).
  bool graph_nodes = true;
  // Graphs created, cloned and instantiated: in every graph trace mode (a whole-graph run names
  // its graph, whose creation says which capture made it); off with SIGHTLINE_RECORD_SKIP=graphs.
  bool graph_events = true;
  // NVTX markers enabled for the whole run, not switched with the capture windows: with a
  // capture range and graph nodes, so that the ranges open while a graph is captured before the
  // first window are seen (the writer keeps those and the ones inside windows).
  bool markers_whole_run = false;
  uint32_t pid = 0;
  bool only_driver_launches = false;     // of the driver API, the launch calls alone (set at start)
  bool driver_launches = true;           // off with SIGHTLINE_RECORD_SKIP=driver_launches
  std::vector<CUpti_ActivityKind> skip;  // SIGHTLINE_RECORD_SKIP (diagnostic)

  // Capture range (cudaProfilerApi).
  std::mutex window_mu;
  bool profiler_api = false;
  int repeat = 0;  // 0: one window; N: N windows; -1: every window
  // Set under window_mu; read without it by the sampled graph launches (graph_callbacks.cc).
  std::atomic<bool> window_open{false};
  uint32_t windows = 0;
  int64_t window_start_ns = 0;
};

// The process's State, created at the first call and never destroyed: atexit handlers and
// CUPTI's threads use it late.
State& S();

// A failed CUPTI call: one line on stderr, and the recorder goes on (or stops recording); it never
// ends the application it runs in.
void LogError(const gpu::GpuError& e);
#define CUPTI_CHECK(...) SIGHTLINE_GPU_CHECK_OR(LogError, __VA_ARGS__)

// CUPTI's clock now (the records' clock), in ns.
int64_t CuptiNow();

}  // namespace sightline::recorder
