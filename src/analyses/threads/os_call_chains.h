// Where a thread blocked in OS calls, from the calls' call chains (nsys OSRT_CALLCHAINS, see
// OsCallTable): the caller frames of a call, and the waited time of many calls by caller. Used by
// the threads section and the blocking_os_call rule. Units: ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "base/time_units.h"
#include "model/trace.h"

namespace sightline {

// The first `depth` frames of os_calls row `row`'s call chain that say where it was called from:
// the OS function itself and the C runtime's frames (libc, libpthread, ld-linux, libdl, librt, and
// pseudo-modules such as "[vdso]") are skipped, and so are unresolved addresses ("0x5fc201"),
// joined innermost first with " < " (a frame, then its caller): "_Py_read (python3.12) <
// _PyEval_EvalFrameDefault (python3.12)". "" without a chain. When no frame is left, the first
// unresolved frame outside the C runtime ("0x6d4e30 (python3.12)": it still names the module),
// else "(unresolved)".
std::string OsCallCaller(const Trace& trace, size_t row, size_t depth = 2);

// Whether frame `frame` ("symbol (module)") belongs to the C runtime (skipped above).
bool IsCRuntimeFrame(std::string_view frame);

// Waited time of OS calls by caller (OsCallCaller); calls without a chain counted apart.
struct OsCallers {
  int64_t calls = 0, without_chain = 0;
  DurationNs chained_ns = 0;                    // waited time of the calls with a chain
  std::map<std::string, DurationNs> by_caller;  // waited time per caller

  void Add(const Trace& trace, size_t row, DurationNs waited_ns);
  // The top `n` callers by waited time with their share of chained_ns: "a < b 62%, c 30%" (after
  // the first, none under 0.5%); "" when no call had a chain.
  std::string Top(size_t n) const;
};

}  // namespace sightline
