// Keeps, of the records that stay enabled for the whole run, those that fall inside a capture
// window (--capture-range cudaProfilerApi). The activity kinds are switched on and off at each
// window's edges, but the driver API's launch calls cannot be: CUPTI 13.0 accepts
// cuptiActivityEnableDriverApi after start-up and then emits no records, so without --driver-api
// those calls are enabled once at injection and the writer keeps a call when its start lies in a
// window (closed: [start, end]; the open one: from its start on). The recorder's threads open and
// close windows while the writer thread asks; windows come in time order. Header-only (used by the
// writer and by its tests in cuda/recorder/tests).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace sightline::recorder {

class CaptureWindowGate {
 public:
  void Open(int64_t start_ns) {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    open_start_ = start_ns;
  }

  void Close(int64_t end_ns) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_) return;
    closed_.emplace_back(open_start_, end_ns);
    open_ = false;
  }

  bool Contains(int64_t t) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (open_ && t >= open_start_) return true;
    // The last closed window starting at or before t.
    auto it = std::upper_bound(
        closed_.begin(), closed_.end(), t,
        [](int64_t v, const std::pair<int64_t, int64_t>& w) { return v < w.first; });
    if (it == closed_.begin()) return false;
    --it;
    return t <= it->second;
  }

 private:
  mutable std::mutex mu_;
  bool open_ = false;
  int64_t open_start_ = 0;
  std::vector<std::pair<int64_t, int64_t>> closed_;  // (start, end), in time order
};

}  // namespace sightline::recorder
