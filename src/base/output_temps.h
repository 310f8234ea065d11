// The temporaries outputs are written to before they are renamed into place (base/file_io.h): their
// names, their removal when a run ends by a signal, and the removal of those a killed run left.
//
// A temporary is named `STEM.sightline-HOST-PID-XXXXXX.tmp` beside the output (HOST: 8 hex digits
// of a hash of this machine's name; PID: the writing process; XXXXXX: random), a file or, for a
// set of files, a directory. STEM is the output's name, cut (at a character boundary) so that the
// whole stays within the file system's NAME_MAX: a legal 254-byte output name stays writable.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sightline {

// A new, unique temporary beside `path` (in its directory), created exclusively: a file (mode
// 0600, opened for writing into *fd) or, with `directory`, a directory (mode 0700). First the
// stale temporaries of that directory are removed (RemoveStaleTemporaries). Tracked for removal
// on a signal until UntrackTemporary. OutputError when it cannot be created.
struct Temporary {
  std::string path;
  bool directory = false;
  int slot = -1;  // in the list the signal handler removes; -1: not tracked (too many, too long)
};
StatusOr<Temporary> CreateTemporary(const std::string& path, bool directory, int* fd);
void UntrackTemporary(Temporary& temp);
// Removes a temporary (a directory with the files in it) and untracks it.
void RemoveTemporary(Temporary& temp);

// Whether `name` (a file name, no directory) is a temporary of this pattern; its host tag and pid.
bool ParseTemporaryName(std::string_view name, std::string* host, long* pid);
// This machine's host tag (8 hex digits).
const std::string& TemporaryHostTag();

// Removes, in `dir`, the temporaries of this machine whose process no longer runs (a run killed
// by SIGKILL, or by a signal on a thread without the handler's stack): regular files and
// directories of the exact pattern, owned by this user. How many were removed.
int RemoveStaleTemporaries(const std::string& dir);

// Removes every tracked temporary; async-signal-safe. For handlers of signals that end the
// process (the mapped-read guard's, base/mapped_reads.h, for a SIGBUS that is not its own).
void RemoveLiveTemporaries();

// The signals after which the live temporaries are removed (the process then ends by the signal,
// as it would have): every signal whose default ends the process and that can be caught (SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGPIPE, SIGALRM, SIGUSR1, ...). SIGXFSZ (a write
// past `ulimit -f`) is caught and does nothing, so the write fails with EFBIG and the output's
// error says "File too large". A signal the user ignores (nohup) or the program handles is left
// alone.
void InstallTemporaryCleanupOnSignals();

}  // namespace sightline
