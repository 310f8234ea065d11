#include "model/graph_nodes.h"

namespace sightline {

void GraphNodeIndex::Add(int64_t node, TimeNs start_ns, int32_t pid, int32_t tid,
                         int64_t original) {
  if (node == 0) return;
  auto [it, inserted] = nodes_.try_emplace(node, Node{start_ns, pid, tid, original});
  if (!inserted && it->second.original == 0) it->second.original = original;
}

bool GraphNodeIndex::FillCapture(KernelRow& row) const {
  row.capture_node = 0;
  row.capture_ns = -1;
  row.capture_pid = row.capture_tid = -1;
  if (row.graph_node == 0) return true;
  int64_t id = row.graph_node;
  auto it = nodes_.find(id);
  for (int hop = 0; it != nodes_.end() && it->second.original != 0 && hop < kMaxHops; ++hop) {
    auto up = nodes_.find(it->second.original);
    if (up == nodes_.end()) break;
    id = it->second.original;
    it = up;
  }
  if (it == nodes_.end() || it->second.tid < 0) return false;
  row.capture_node = id;
  row.capture_ns = it->second.start_ns;
  row.capture_pid = it->second.pid;
  row.capture_tid = it->second.tid;
  return true;
}

}  // namespace sightline
