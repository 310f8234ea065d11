// `sightline redact` for a run's process tree (`sightline record`'s NAME.processes.json,
// docs/formats/recorder.md): its command lines may carry tokens and user paths as any other
// capture does. The identity is learned from the document itself (users from paths, secrets of
// every process's command line) and every string value of the JSON goes through the one
// Redactor; numbers and keys are kept, so `analyze` reads the copy as it reads the original.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "exporters/redact.h"
#include "exporters/redactor.h"

namespace sightline {

inline constexpr char kProcessesFormat[] = "sightline-processes";

// Whether the first bytes of a file are a processes document.
bool LooksLikeProcessesDocument(std::string_view head);

Status LearnProcessesIdentity(std::string_view json, const std::string& path, Redactor& redactor);

// The copy: the same document with every string value redacted (counts in `summary`).
StatusOr<std::string> RedactProcessesDocument(std::string_view json, const std::string& path,
                                              const Redactor& redactor, RedactSummary& summary);

// Every string value of a copy, checked for what `redactor` learned from the original.
Status ScanProcessesDocument(std::string_view json, const std::string& path,
                             const Redactor& redactor, RedactCheckResult& result);

}  // namespace sightline
