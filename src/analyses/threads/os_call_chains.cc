#include "analyses/threads/os_call_chains.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace sightline {
namespace {

// "module" of "symbol (module)"; "" when the frame names none.
std::string_view ModuleOf(std::string_view frame) {
  if (frame.empty() || frame.back() != ')') return {};
  const size_t open = frame.rfind(" (");
  if (open == std::string_view::npos) return {};
  return frame.substr(open + 2, frame.size() - open - 3);
}

bool IsUnresolved(std::string_view frame) { return frame.starts_with("0x"); }

}  // namespace

bool IsCRuntimeFrame(std::string_view frame) {
  const std::string_view module = ModuleOf(frame);
  if (module.starts_with("[")) return true;  // [vdso], [Unknown], [kernel.kallsyms]
  for (std::string_view lib :
       {"libc.so", "libc-", "libpthread", "ld-linux", "ld64.so", "libdl", "librt"}) {
    if (module.starts_with(lib)) return true;
  }
  return false;
}

std::string OsCallCaller(const Trace& trace, size_t row, size_t depth) {
  const OsCallTable& os = trace.os_calls;
  const int32_t count = os.frame_count[row];
  if (count <= 0) return {};
  std::string out;
  std::string_view first_unresolved;
  size_t kept = 0;
  const size_t first = static_cast<size_t>(os.first_frame[row]);
  // Frame 0 is the OS function itself: where it was called from starts at frame 1.
  for (size_t i = 1; i < static_cast<size_t>(count) && kept < depth; ++i) {
    const std::string_view frame = trace.str(os.frames[first + i]);
    if (frame.empty() || IsCRuntimeFrame(frame)) continue;
    if (IsUnresolved(frame)) {
      if (first_unresolved.empty()) first_unresolved = frame;
      continue;
    }
    out += fmt::format("{}{}", kept ? " < " : "", frame);
    ++kept;
  }
  if (kept > 0) return out;
  // Nothing resolved: the first address outside the C runtime still names the module.
  return first_unresolved.empty() ? "(unresolved)" : std::string(first_unresolved);
}

void OsCallers::Add(const Trace& trace, size_t row, DurationNs waited_ns) {
  ++calls;
  std::string caller = OsCallCaller(trace, row);
  if (caller.empty()) {
    ++without_chain;
    return;
  }
  chained_ns += waited_ns;
  by_caller[std::move(caller)] += waited_ns;
}

std::string OsCallers::Top(size_t n) const {
  if (chained_ns <= 0) return {};
  std::vector<std::pair<DurationNs, const std::string*>> top;
  for (const auto& [caller, ns] : by_caller) top.push_back({ns, &caller});
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (size_t i = 0; i < std::min(n, top.size()); ++i) {
    const double pct = 100.0 * static_cast<double>(top[i].first) / static_cast<double>(chained_ns);
    if (i > 0 && pct < 0.5) break;  // "0%" says nothing
    out += fmt::format("{}{} {:.0f}%", i ? ", " : "", *top[i].second, pct);
  }
  return out;
}

}  // namespace sightline
