// Importers turn a profile file into a Trace. The format is recognised from the file's first
// bytes (never its name); each importer maps its format into a TraceBuilder and counts what it
// drops.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace sightline {

struct ImportOptions {
  // Reserved for importer switches (e.g. which process to keep); none yet.
};

struct ImporterEntry {
  const char* name;         // "nsys-sqlite"
  const char* description;  // one line for --help and error messages
  // True when the first bytes of a file (up to 4 KiB, gzip not inflated) look like this format.
  bool (*sniff)(std::string_view first_bytes);
  StatusOr<Trace> (*import)(const std::string& path, const ImportOptions& options);
};

// All importers, in sniffing order.
const std::vector<ImporterEntry>& Importers();

// Sniffs the file and runs the matching importer. Errors name the file and say what to do; a trace
// with nothing usable left (CheckTraceUsable) is an error too.
StatusOr<Trace> ImportTrace(const std::string& path, const ImportOptions& options = {});

// InvalidInput, listing every diagnostic, when the trace has no event of any kind left and the
// importer dropped some (a warning diagnostic): an empty report would hide that the input was
// unusable. A trace with no events and nothing dropped (an empty capture) stays valid.
// docs/reliability.md.
Status CheckTraceUsable(const Trace& trace, const std::string& path);

}  // namespace sightline
