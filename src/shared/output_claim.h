// How the processes of one `sightline record` run share out output names, so that no process
// replaces another's recording. `sightline record` creates the run's manifest (one line per file:
// "PID PATH"); libsightline_recorder.so in each process claims its expanded output path there under
// an exclusive lock before it creates the file. A path an earlier process of the run claimed (a
// fixed `-o run.slrec` reached by torch.compile's workers, a server's engine and workers) becomes
// this process's own name, "run.PID.slrec". Header-only, POSIX.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sightline::recenv {

// Where the file name's extension begins ("dir/run.slrec" -> 9); the path's size when it has
// none (a dot in a folder's name or at the name's start, ".hidden", is no extension).
inline size_t ExtensionStart(std::string_view path) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = path.rfind('.');
  return dot == std::string_view::npos || dot <= base ? path.size() : dot;
}

// "dir/run.slrec" -> "dir/run.PID.slrec"; a name without an extension gets ".PID" at its end.
inline std::string PerProcessOutputName(std::string_view path, int64_t pid) {
  const size_t dot = ExtensionStart(path);
  std::string out(path.substr(0, dot));
  out += '.';
  out += std::to_string(pid);
  out += path.substr(dot);
  return out;
}

// One line of the manifest: the process and the file it writes.
struct ClaimedOutput {
  int64_t pid = 0;
  std::string path;
};

// Parses the manifest's text ("PID PATH" lines); lines that do not parse are skipped.
inline std::vector<ClaimedOutput> ParseManifest(std::string_view text) {
  std::vector<ClaimedOutput> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t space = line.find(' ');
    if (space == 0 || space == std::string_view::npos || space + 1 >= line.size()) continue;
    int64_t pid = 0;
    bool digits = true;
    for (char c : line.substr(0, space)) {
      if (c < '0' || c > '9' || pid > (int64_t{1} << 40)) digits = false;
      pid = pid * 10 + (c - '0');
    }
    if (digits) out.push_back({pid, std::string(line.substr(space + 1))});
  }
  return out;
}

// Claims `path` for process `pid` in the manifest at `manifest_path` and returns the path this
// process must write: `path` itself, or its per-process name when another process of the run
// claimed it first (`*taken_by` is then that process). Without a manifest (the library used
// without `sightline record`) or when it cannot be opened, returns `path`.
inline std::string ClaimOutput(const char* manifest_path, const std::string& path, int64_t pid,
                               int64_t* taken_by) {
  *taken_by = 0;
  if (manifest_path == nullptr || *manifest_path == '\0') return path;
  const int fd = open(manifest_path, O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) return path;
  while (flock(fd, LOCK_EX) != 0) {
  }
  std::string text;
  char buf[4096];
  for (off_t at = 0;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  const std::vector<ClaimedOutput> claimed = ParseManifest(text);
  auto owner = [&claimed](const std::string& p) -> int64_t {
    for (const ClaimedOutput& c : claimed) {
      if (c.path == p) return c.pid;
    }
    return 0;
  };
  std::string chosen = path;
  if (const int64_t first = owner(path); first != 0) {
    *taken_by = first;
    chosen = PerProcessOutputName(path, pid);
    // A reused pid within one run: count on until the name is free.
    for (int i = 2; owner(chosen) != 0; ++i) {
      chosen = PerProcessOutputName(path, pid) + "." + std::to_string(i);
    }
  }
  const std::string line = std::to_string(pid) + " " + chosen + "\n";
  (void)!write(fd, line.data(), line.size());  // O_APPEND, one write, under the lock
  flock(fd, LOCK_UN);
  close(fd);
  return chosen;
}

}  // namespace sightline::recenv
