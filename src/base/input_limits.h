// Limits that keep a hostile or mistaken input from exhausting memory (docs/reliability.md): how
// large an inflated gzip stream may grow, and how long one string the trace model keeps may be.
// Every reader that inflates or interns goes through these, so the rule is the same everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace sightline {

// The environment variable that overrides the inflated-size limit: a byte count with an optional
// K, M, G or T suffix (powers of 1024), e.g. SIGHTLINE_MAX_INPUT_SIZE=64G.
inline constexpr const char* kMaxInputSizeEnv = "SIGHTLINE_MAX_INPUT_SIZE";

// The most bytes one gzip'd input may inflate to: SIGHTLINE_MAX_INPUT_SIZE when set, otherwise half
// of this machine's physical memory (the analysis needs the other half). InvalidArgument when the
// variable is set to something that is not a size.
StatusOr<uint64_t> MaxInflatedBytes();

// The error for an input that would inflate past `limit` bytes: names the file, the compressed
// size, says it is a gzip bomb or a trace too large for this machine, and how to raise the limit.
Status InflatedTooLargeError(const std::string& path, uint64_t compressed_bytes, uint64_t limit);

// Parses "123", "64K", "1.5G" (powers of 1024). False when it is not a size.
bool ParseByteCount(const std::string& text, uint64_t* bytes);

// The longest string (a name, a frame, a message) the trace model keeps: longer ones are cut to
// this many bytes plus a note of the cut, and counted (string_cut). Real kernel names stay under
// a few KiB; a megabyte-long name only wastes memory.
inline constexpr size_t kMaxStringBytes = size_t{64} << 10;

}  // namespace sightline
