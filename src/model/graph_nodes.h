// CUDA graph node creations, and the join that tells each graph kernel where its node was
// captured (KernelTable's capture_node, capture_ns, capture_pid, capture_tid). Shared by the
// importers that have node creation records: nsys (CUDA_GRAPH_NODE_EVENTS) and the recorder
// (graph_node records). docs/analyses/cuda_graphs.md.
//
// A kernel replayed from a graph carries the id of an instantiated node: a clone, made when the
// graph was instantiated, of the node the capture created. Following the clone's original leads to
// the captured node, whose creation time and thread lie inside the NVTX ranges open at capture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "base/time_units.h"
#include "model/trace_builder.h"

namespace sightline {

class GraphNodeIndex {
 public:
  // One creation record of `node` (a non-zero id): created at `start_ns` on thread (pid, tid) (-1
  // unknown), cloned from `original` (0: created, not cloned). A node seen again keeps its first
  // time and thread and takes the first non-zero original: nsys and CUPTI report an instantiated
  // node twice, created and then cloned.
  void Add(int64_t node, TimeNs start_ns, int32_t pid, int32_t tid, int64_t original);

  // Sets row's capture columns from row.graph_node: follows originals (at most kMaxHops, so a
  // cycle in damaged input ends) to the first node without one, and takes that node's id, time
  // and thread when its thread is known. Returns false when row.graph_node is non-zero and no
  // creation record gives a capture (the row keeps capture_node 0, capture_ns -1).
  bool FillCapture(KernelRow& row) const;

  size_t size() const { return nodes_.size(); }
  bool empty() const { return nodes_.empty(); }

  static constexpr int kMaxHops = 16;

 private:
  struct Node {
    TimeNs start_ns = 0;
    int32_t pid = -1, tid = -1;
    int64_t original = 0;
  };
  std::unordered_map<int64_t, Node> nodes_;
};

}  // namespace sightline
