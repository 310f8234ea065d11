// Importers turn a profile file into a Trace; each maps its format into a TraceBuilder and counts
// what it drops. They are registered, with every other reader, in importers/inputs.cc, which
// recognises a file from its content (never its name).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace sightline {

// Opens `path` through the front door (importers/inputs.h) and returns its trace; a file of
// another kind (serving results, an engine export, ...) is an error that says what it is. Errors
// name the file and say what to do; a trace with nothing usable left (CheckTraceUsable) is an
// error too.
StatusOr<Trace> ImportTrace(const std::string& path);

// InvalidInput, listing every diagnostic, when the trace has no event of any kind left and the
// importer dropped some (a warning diagnostic): an empty report would hide that the input was
// unusable. A trace with no events and nothing dropped (an empty capture) stays valid. Also
// InvalidInput when the durations (or copy sizes) of one table add up to more than int64 holds:
// every sum an analysis takes then fits, and no share passes 100%. docs/reliability.md.
Status CheckTraceUsable(const Trace& trace, const std::string& path);

}  // namespace sightline
