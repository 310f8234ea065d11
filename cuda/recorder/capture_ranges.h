// Which NVTX ranges the writer keeps when markers stay enabled for the whole run (a capture range
// with graph node records, docs/formats/recorder.md): a range whose two ends lie in capture
// windows, as when markers were switched with the windows, and a range inside which a graph node
// was created on its own thread, wherever it lies: the ranges open while a graph was captured
// (often during warm-up, before the first window), which give the graph's replayed kernels to the
// layers that captured them. A range with one end in a window and no node is counted unpaired, as
// before; the rest are left out. Header-only (used by the writer and cuda/recorder/tests).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "capture_window_gate.h"

namespace sightline::recorder {

class CaptureRangeFilter {
 public:
  enum class Verdict { kKeep, kUnpaired, kLeaveOut };

  // A graph node created on `tid` at `time_ns`; one thread's nodes come in its time order.
  void AddNode(uint32_t tid, int64_t time_ns) { nodes_[tid].push_back(time_ns); }

  bool NodeCreatedIn(uint32_t tid, int64_t start_ns, int64_t end_ns) const {
    const auto it = nodes_.find(tid);
    if (it == nodes_.end()) return false;
    const auto first = std::lower_bound(it->second.begin(), it->second.end(), start_ns);
    return first != it->second.end() && *first <= end_ns;
  }

  Verdict Judge(const CaptureWindowGate& windows, uint32_t tid, int64_t start_ns,
                int64_t end_ns) const {
    const bool start_in = windows.Contains(start_ns), end_in = windows.Contains(end_ns);
    if (start_in && end_in) return Verdict::kKeep;
    if (NodeCreatedIn(tid, start_ns, end_ns)) return Verdict::kKeep;
    return start_in || end_in ? Verdict::kUnpaired : Verdict::kLeaveOut;
  }

 private:
  std::unordered_map<uint32_t, std::vector<int64_t>> nodes_;  // 8 bytes a node
};

}  // namespace sightline::recorder
