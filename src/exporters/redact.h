// `sightline redact IN -o OUT`: a copy of an Nsight Systems export or a Sightline recording that is
// safe to paste into a public issue. It removes what identifies the capturing machine and its user
// and keeps everything an analysis reads, so that the report of the copy equals the original's:
//   - the environment: every variable of the profiled process (nsys: META_DATA_CAPTURE's
//     ENVIRONMENT_VARIABLE rows, TARGET_INFO_SYSTEM_ENV's DeviceEnvironment, and NAME=value strings
//     in StringIds, which keep their NAME=);
//   - the host name: replaced by a pseudonym ("host-" and 8 hex digits of its hash), the same for
//     every file of one host, so that ranks still group by host;
//   - the user: the user name, and the user's folder in every path (/home/NAME/ -> /home/user/,
//     /Users/NAME/ -> /Users/user/);
//   - the profiled program's own output (nsys ProcessStreams: its stdout and stderr).
// The copy is written whole or not at all (base/file_io.h); a compressed input gives a plain copy.
// docs/reliability.md, "Sharing a file".
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace sightline {

struct RedactSummary {
  std::string format;                 // the reader that took the input ("nsys-sqlite")
  int64_t environment_values = 0;     // variables removed
  int64_t host_names = 0;             // host names replaced by the pseudonym
  int64_t user_paths = 0;             // strings whose user folder or user name was replaced
  int64_t program_output_values = 0;  // captured stdout/stderr contents emptied
};

// The pseudonym of a host name: "host-" and the low 32 bits of its FNV-1a hash, in hex.
std::string HostPseudonym(const std::string& host);

// `text` with the user's folder in paths replaced (/home/NAME/ -> /home/user/, /Users/NAME/ ->
// /Users/user/); `changed` says whether anything was.
std::string RedactUserPaths(const std::string& text, bool* changed);

// Writes the redacted copy of `input` to `output`. InvalidArgument for a format redact does not
// handle (only nsys exports and recordings carry a machine's identity) or a damaged recording.
StatusOr<RedactSummary> RedactFile(const std::string& input, const std::string& output);

}  // namespace sightline
