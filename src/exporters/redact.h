// `sightline redact IN -o OUT`: a copy of an Nsight Systems export or a Sightline recording that is
// safe to paste into a public issue, and `sightline redact --check COPY --against ORIGINAL`, which
// says whether a copy still holds any of the original's identity.
//
// What identifies the capturing machine and its user is learned from the file itself: the user
// name (capture and export records, USER/LOGNAME, the folder in /home/NAME/, /Users/NAME/,
// C:\Users\NAME\ paths), the host name (full and short, and its domain), every variable of the
// profiled process's environment, and the values of command-line options whose names suggest a
// secret. Every string of the copy then goes through one function (exporters/redactor.h), which
// replaces them wherever they appear, in any case; names of kernels, ranges and threads, times,
// ids and numbers are kept, so that the report of the copy equals the original's unless one of them
// holds a learned name. The host name becomes a pseudonym ("host-" and 8 hex digits of a hash of
// its short name), the same for every file of one host, so that ranks still group by host.
// exporters/redact_nsys.h says how an export's copy is made (a new database, table by table);
// exporters/redact_recording.h, a recording's. The copy is written whole or not at all
// (base/file_io.h), and only after the check below finds nothing in it; a compressed input gives a
// plain copy. docs/reliability.md, "Sharing a file".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "exporters/redactor.h"

namespace sightline {

struct RedactSummary {
  std::string format;                 // the reader that took the input ("nsys-sqlite")
  int64_t tables = 0;                 // nsys: tables copied
  int64_t schema_dropped = 0;         // nsys: views, triggers, indexes, virtual tables left out
  int64_t environment_values = 0;     // variables of the environment, and other strings that lost
                                      // a variable's value
  int64_t host_names = 0;             // strings whose host name or domain was replaced
  int64_t user_names = 0;             // strings whose user name or user folder was replaced
  int64_t secrets = 0;                // strings that lost a command-line or environment secret
  int64_t program_output_values = 0;  // captured stdout/stderr contents emptied
};

// Writes the redacted copy of `input` to `output`. InvalidArgument for a format redact does not
// handle (only nsys exports and recordings carry a machine's identity) or a damaged recording.
StatusOr<RedactSummary> RedactFile(const std::string& input, const std::string& output);

struct RedactCheckResult {
  std::string format;
  int64_t learned = 0;  // names and values learned from the original
  int64_t strings = 0;  // strings of the copy looked at
  // One line per thing found: where, and what it is, never the secret itself:
  // "StringIds.value, row 12 (and 3 more rows): the user name".
  std::vector<std::string> findings;
};

// Learns the identity of `original` as RedactFile does and looks for it, case-insensitively, in
// every string of `copy` and in its raw bytes (learned strings of 6 bytes or more: shorter ones
// turn up by chance in binary data); an export is also checked for views, triggers and free pages.
StatusOr<RedactCheckResult> CheckRedactedCopy(const std::string& copy, const std::string& original);

// The identity learned from `input` (an nsys export or a recording), as RedactFile learns it.
StatusOr<Redactor> LearnIdentity(const std::string& input);

}  // namespace sightline
