// Parses the sizes users type for shared memory: "49152", "48K", "48k", "48KB", "48KiB",
// "1.5KiB", "0x0c000". K/KB/KiB all mean 1024 bytes (CUDA quotes shared memory in binary KB).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace sightline {

// InvalidArgument for anything else, negative values and fractions of a byte; `what` names the
// option in the message.
StatusOr<int64_t> ParseByteSize(std::string_view text, std::string_view what);

}  // namespace sightline
