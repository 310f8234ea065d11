#include "graph_callbacks.h"

#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "injection_state.h"
#include "shared/recorder_format.h"

namespace sightline::recorder {
namespace {

uint32_t ThisThreadId() {
  thread_local const uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

}  // namespace

// GRAPH_TRACE on while recording and no sampled launch is in flight (graph_mu held).
void ApplyGraphTraceLocked() {
  State& s = S();
  const bool on = s.whole_graphs_wanted && s.node_traced_in_flight == 0;
  if (on == s.whole_graphs_on) return;
  if (on) {
    CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
  } else {
    CUPTI_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
  }
  s.whole_graphs_on = on;
}

bool IsGraphLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
          (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000)) ||
         (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
          (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz));
}

// --cuda-graph-trace sampled:N, on the launching thread: every N-th graph launch of the process
// (counted once for cudaGraphLaunch and the cuGraphLaunch inside it) runs with GRAPH_TRACE off, so
// CUPTI records its kernels one by one; the switch goes back on when its API call returns. Other
// launches cost an atomic increment. Launches from several threads at once may catch a switch
// made for another; the importer tells each launch's tracing from its records, not from this.
void SampledGraphLaunch(const CUpti_CallbackData* info) {
  thread_local int depth = 0;
  thread_local bool node_traced = false;
  State& s = S();
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (depth++ > 0) return;
    // With a capture range, only the launches inside a window are counted and sampled: outside
    // one nothing of a graph is recorded, and GRAPH_TRACE stays on (State::graph_trace_whole_run).
    if (s.graph_trace_whole_run && !s.window_open.load(std::memory_order_acquire)) return;
    node_traced = s.graph_launches.fetch_add(1, std::memory_order_relaxed) % s.graph_sample == 0;
    if (!node_traced) return;
    std::lock_guard<std::mutex> lock(s.graph_mu);
    ++s.node_traced_in_flight;
    ApplyGraphTraceLocked();
    return;
  }
  if (depth == 0 || --depth > 0 || !node_traced) return;
  node_traced = false;
  std::lock_guard<std::mutex> lock(s.graph_mu);
  --s.node_traced_in_flight;
  ApplyGraphTraceLocked();
}

// A graph node created or cloned (CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED / _CLONED), on the thread
// that made it: during stream capture, the launching call; at instantiation, cudaGraphInstantiate.
// Recorded whatever the capture window: graphs are usually captured during warm-up, before the
// window their replays are recorded in. Costs two CUPTI id lookups, a clock read and an append
// under a short lock (Writer::AddGraphNode).
void RecordGraphNode(CUpti_CallbackId cbid, const CUpti_ResourceData* res) {
  const auto* g = static_cast<const CUpti_GraphData*>(res->resourceDescriptor);
  if (g == nullptr || g->node == nullptr) return;
  recfmt::GraphNodeBody b{};
  b.time_ns = CuptiNow();
  if (cuptiGetGraphNodeId(g->node, &b.node_id) != CUPTI_SUCCESS || b.node_id == 0) {
    S().writer->AddGraphNodeDropped();
    return;
  }
  const bool cloned = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
  if (cloned && g->originalNode != nullptr &&
      cuptiGetGraphNodeId(g->originalNode, &b.original_node_id) != CUPTI_SUCCESS) {
    b.original_node_id = 0;
  }
  if (g->graph != nullptr && cuptiGetGraphId(g->graph, &b.graph_id) != CUPTI_SUCCESS) {
    b.graph_id = 0;
  }
  b.pid = S().pid;
  b.tid = ThisThreadId();
  b.node_type = static_cast<uint32_t>(g->nodeType);
  b.event = static_cast<uint32_t>(cloned ? recfmt::GraphNodeEvent::kCloned
                                         : recfmt::GraphNodeEvent::kCreated);
  S().writer->AddGraphNode(b);
}

// A CUDA graph created, cloned or instantiated (CUPTI_CBID_RESOURCE_GRAPH_CREATED / _CLONED,
// GRAPHEXEC_CREATED), on the thread that made it: a captured graph is created as its capture
// begins. A few per graph, never per replay: posted to the writer like a capture window.
void RecordGraphEvent(CUpti_CallbackId cbid, const CUpti_ResourceData* res) {
  const auto* g = static_cast<const CUpti_GraphData*>(res->resourceDescriptor);
  if (g == nullptr) return;
  recfmt::GraphEventBody b{};
  b.time_ns = CuptiNow();
  b.pid = S().pid;
  b.tid = ThisThreadId();
  if (g->graph != nullptr && cuptiGetGraphId(g->graph, &b.graph_id) != CUPTI_SUCCESS) {
    b.graph_id = 0;
  }
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPH_CREATED:
      b.event = static_cast<uint32_t>(recfmt::GraphEvent::kCreated);
      break;
    case CUPTI_CBID_RESOURCE_GRAPH_CLONED:
      b.event = static_cast<uint32_t>(recfmt::GraphEvent::kCloned);
      if (g->originalGraph != nullptr &&
          cuptiGetGraphId(g->originalGraph, &b.original_graph_id) != CUPTI_SUCCESS) {
        b.original_graph_id = 0;
      }
      break;
    default:  // GRAPHEXEC_CREATED
      b.event = static_cast<uint32_t>(recfmt::GraphEvent::kExecCreated);
      if (g->graphExec != nullptr &&
          cuptiGetGraphExecId(g->graphExec, &b.graph_exec_id) != CUPTI_SUCCESS) {
        b.graph_exec_id = 0;
      }
      break;
  }
  S().writer->PostRecord(recfmt::RecordType::kGraphEvent, &b, sizeof b);
}

}  // namespace sightline::recorder
