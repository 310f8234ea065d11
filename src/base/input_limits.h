// Limits that keep a hostile or mistaken input from exhausting memory (docs/reliability.md): how
// large an inflated gzip stream may grow, and how long one string the trace model keeps may be.
// Every reader that inflates or interns goes through these, so the rule is the same everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sightline {

// The environment variable that overrides the inflated-size limit: a byte count with an optional
// K, M, G or T suffix (powers of 1024), e.g. SIGHTLINE_MAX_INPUT_SIZE=64G.
inline constexpr const char* kMaxInputSizeEnv = "SIGHTLINE_MAX_INPUT_SIZE";

// The memory this process may use: the least of physical memory, its cgroup's memory limit (v2
// memory.max or v1 memory.limit_in_bytes, of its cgroup and every parent) and RLIMIT_AS /
// RLIMIT_DATA; `source` names the one that applies, for messages.
struct UsableMemoryInfo {
  uint64_t bytes = 0;
  std::string source;
};
UsableMemoryInfo UsableMemory();
// A cgroup memory limit file's value; nullopt for "max", v1's "no limit" or text that is no number.
std::optional<uint64_t> ParseCgroupMemoryLimit(std::string_view text);

// The most bytes one input may take when read or inflated: SIGHTLINE_MAX_INPUT_SIZE when set,
// otherwise half of UsableMemory() (the analysis needs the other half): in a 3 GiB container,
// 1.5 GiB, not half of the host's memory. InvalidArgument when the variable is set to something
// that is not a size.
StatusOr<uint64_t> MaxInflatedBytes();
// Where the limit comes from, for messages: "half of this container's memory limit (cgroup)".
std::string InputLimitSource();

// The error for an input that would inflate past `limit` bytes: names the file, its compression
// ("gzip", "zstd") and compressed size (0: not said), says it is a decompression bomb or a trace
// too large for this machine, and how to raise the limit.
Status InflatedTooLargeError(const std::string& path, uint64_t compressed_bytes, uint64_t limit,
                             std::string_view compression = "gzip");
// The error for `bytes` of an input's content that could not be allocated (std::bad_alloc): the
// input is within the limit, but this process has less memory left than that.
Status OutOfMemoryForInputError(const std::string& path, uint64_t bytes);

// Parses "123", "64K", "1.5G" (powers of 1024). False when it is not a size.
bool ParseByteCount(const std::string& text, uint64_t* bytes);

// The longest string (a name, a frame, a message) the trace model keeps: longer ones are cut to
// this many bytes plus a note of the cut, and counted (string_cut). Real kernel names stay under
// a few KiB; a megabyte-long name only wastes memory.
inline constexpr size_t kMaxStringBytes = size_t{64} << 10;

}  // namespace sightline
