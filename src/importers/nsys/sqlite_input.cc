#include "importers/nsys/sqlite_input.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace sightline {
namespace {

// A regular file of more than 0 bytes at `path`; its first byte in *first when it can be read
// (-1 when not).
bool NonEmptyFile(const std::string& path, int* first) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
  *first = -1;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    *first = std::fgetc(f);
    std::fclose(f);
  }
  return true;
}

// `path` as one word of a shell command, for advice the user can paste: as it is when it holds
// nothing the shell reads specially, else in single quotes.
std::string ShellWord(std::string_view path) {
  bool plain = !path.empty();
  for (const char c : path) {
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      std::string_view("/._~+,:=@%-").find(c) != std::string_view::npos);
  }
  if (plain) return std::string(path);
  std::string out = "'";
  for (const char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Immutable reading ignores a journal and a WAL, so they are looked at here. A rollback journal is
// hot (SQLite would roll it back on the next read) when it has a header: not empty, and its first
// byte is not 0 (journal_mode=PERSIST zeroes the header of a finished one; TRUNCATE empties it).
// A write-ahead log that is not empty may hold commits not yet copied into the database; whether
// they were is kept in the -shm file of the writer, not something to trust, so any is refused.
Status CheckNoUnfinishedWrites(const std::string& path, const std::string& real) {
  // The advice names the file by its absolute path: `sqlite3 file:x.sqlite` would open x.sqlite.
  const std::string db = ShellWord(real);
  int first = 0;
  const std::string journal = real + "-journal";
  if (NonEmptyFile(journal, &first) && first != 0) {
    return InvalidInputError(fmt::format(
        "{}: {} beside it holds unfinished writes (a hot rollback journal: a write that was cut "
        "short, or one still going on). Sightline reads an input without changing it, so it "
        "cannot roll the journal back. If nsys export or another program is still writing the "
        "file, wait for it to finish; otherwise let SQLite roll it back with one read, "
        "`sqlite3 {} 'SELECT count(*) FROM sqlite_master;'` (this changes the file), and analyze "
        "again; or copy the database with `sqlite3 {} '.backup copy.sqlite'` and analyze the copy",
        path, journal, db, db));
  }
  const std::string wal = real + "-wal";
  if (NonEmptyFile(wal, &first)) {
    return InvalidInputError(fmt::format(
        "{}: {} beside it holds unfinished writes (a write-ahead log not yet copied into the "
        "database). Sightline reads an input without changing it, so it cannot copy them in. "
        "Fold them in once with `sqlite3 {} 'PRAGMA wal_checkpoint;'` (this changes the file) and "
        "analyze again; or copy the database with `sqlite3 {} '.backup copy.sqlite'` and analyze "
        "the copy",
        path, wal, db, db));
  }
  return Status::Ok();
}

}  // namespace

std::string PercentEscapePath(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    const auto b = static_cast<unsigned char>(c);
    const bool plain = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                       b == '/' || b == '.' || b == '_' || b == '~' || b == '-';
    if (plain) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
  return out;
}

StatusOr<std::string> ImmutableSqliteUri(const std::string& path) {
  std::error_code ec;
  // Symbolic links resolved: SQLite names a journal after the file it opens, so the journal of a
  // linked database lies beside the link's target.
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) {
    return IoError(fmt::format(
        "{}: cannot open the file ({}); check that it exists and is readable", path, ec.message()));
  }
  RETURN_IF_ERROR(CheckNoUnfinishedWrites(path, real.string()));
  // An empty authority ("file://" then the absolute path): a path that starts with "//" stays a
  // path, not a host name.
  return "file://" + PercentEscapePath(real.string()) + "?immutable=1";
}

}  // namespace sightline
