// Leaves out driver launch calls that a runtime call made on its way down. Without --driver-api the
// recorder records only the driver API's launch calls (cuLaunchKernel, cuLaunchKernelEx, ...), so
// that kernels libraries launch through the driver (cuBLAS) link to their call; but
// cudaLaunchKernel itself calls cuLaunchKernel, and that inner record, with the runtime call's
// correlation id, would repeat it. CUPTI writes a thread's API records as the calls return, so a
// nested driver record comes right before its runtime record: each driver record is held until
// the next API record shows which it is. Header-only (used by the writer and by its tests in
// cuda/recorder/tests).
#pragma once

#include "shared/recorder_format.h"

namespace sightline::recorder {

class NestedDriverLaunchFilter {
 public:
  // Passes `api` on through emit(const recfmt::ApiBody&) when it stands on its own; a driver record
  // waits for the next call.
  template <typename Emit>
  void Add(const recfmt::ApiBody& api, Emit&& emit) {
    const bool driver = api.domain == static_cast<uint32_t>(recfmt::ApiDomain::kDriver);
    if (has_pending_) {
      const bool nested =
          !driver && pending_.correlation == api.correlation && pending_.tid == api.tid;
      if (!nested) emit(pending_);
      has_pending_ = false;
    }
    if (driver) {
      pending_ = api;
      has_pending_ = true;
    } else {
      emit(api);
    }
  }

  // At the end of a buffer: a held driver record has nothing after it here; it stands on its own.
  template <typename Emit>
  void Flush(Emit&& emit) {
    if (has_pending_) emit(pending_);
    has_pending_ = false;
  }

 private:
  // A flag beside a plain value rather than std::optional: GCC 12 warns (falsely) that an optional
  // of this struct may be read uninitialized.
  recfmt::ApiBody pending_{};
  bool has_pending_ = false;
};

}  // namespace sightline::recorder
