// The recording side of `sightline redact` (exporters/redact.h). A recording (.slrec,
// recording/recorder_format.h) keeps its strings in string records that other records name by id:
// the executable's path and the host name (process record), kernel, API, range and domain names,
// thread names, device and metric names, memory records' variable names and source libraries.
// What is learned: the host (the process record's host name) and the users of every path. The copy
// has every record as it was but its string records, each rewritten through Redactor::Redact under
// the same id, in new chunks (new checksums). A damaged recording is refused: the copy of part of
// one would not have the original's report.
#pragma once

#include <string>

#include "base/status.h"
#include "exporters/redact.h"
#include "exporters/redactor.h"

namespace sightline {

// `file` is the whole recording (decompressed); `name` names it in errors.
Status LearnRecordingIdentity(std::string_view file, const std::string& name, Redactor& redactor);

StatusOr<std::string> RedactRecording(std::string_view file, const std::string& name,
                                      const Redactor& redactor, RedactSummary& sum);

// Looks for what `redactor` learned in every string record of the recording `file`.
Status ScanRecording(std::string_view file, const std::string& name, const Redactor& redactor,
                     RedactCheckResult& result);

}  // namespace sightline
