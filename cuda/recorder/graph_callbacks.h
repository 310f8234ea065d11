// The recorder's CUDA graph callbacks (graph_callbacks.cc): whole-graph tracing switched around
// sampled launches (--cuda-graph-trace sampled:N), and the graph nodes and graphs created, cloned
// and instantiated, recorded whatever the capture window. Called from the CUPTI callback
// (injection.cc) on the application's threads.
#pragma once

#include <cupti.h>

namespace sightline::recorder {

// GRAPH_TRACE on while recording and no sampled launch is in flight (State::graph_mu held).
void ApplyGraphTraceLocked();

// Whether the call is a graph launch (cudaGraphLaunch, cuGraphLaunch, their _ptsz forms).
bool IsGraphLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// --cuda-graph-trace sampled:N, on the launching thread, at the launch's API entry and exit: every
// N-th launch runs node by node (GRAPH_TRACE off around it).
void SampledGraphLaunch(const CUpti_CallbackData* info);

// A graph node created or cloned (CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED / _CLONED).
void RecordGraphNode(CUpti_CallbackId cbid, const CUpti_ResourceData* res);

// A graph created, cloned or instantiated (CUPTI_CBID_RESOURCE_GRAPH_CREATED / _CLONED,
// GRAPHEXEC_CREATED).
void RecordGraphEvent(CUpti_CallbackId cbid, const CUpti_ResourceData* res);

}  // namespace sightline::recorder
