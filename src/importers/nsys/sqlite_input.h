// How an input file is handed to SQLite: by a URI we build, so that the file opened is the file
// named, read-only and immutable, after refusing a database that has unfinished writes beside it
// (SQLite would have to change the file, or read it half-written). sqlite_db.cc opens with it.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sightline {

// "file:///abs/path?immutable=1" for `path`: the absolute path with symbolic links resolved (the
// file itself, where SQLite would look for its journal), every byte but [A-Za-z0-9/._~-]
// percent-escaped. So a name SQLite would take as a URI ("file:decoy.sqlite", "x?mode=rw") is read
// as a name, and no query parameter but ours reaches SQLite. immutable=1: no locks, no journal or
// WAL read or recovered, no -shm or -wal file created beside the input.
// InvalidInput, naming the file and what to do, when a hot rollback journal (NAME-journal) or a
// write-ahead log (NAME-wal) beside it holds writes not yet in the database; IoError when the
// path cannot be resolved.
StatusOr<std::string> ImmutableSqliteUri(const std::string& path);

// "%2F"-style escaping of every byte outside [A-Za-z0-9/._~-].
std::string PercentEscapePath(std::string_view path);

}  // namespace sightline
