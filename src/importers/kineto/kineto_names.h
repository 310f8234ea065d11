// Parses what Kineto encodes in GPU memory-operation names: "Memcpy HtoD (Pinned -> Device)",
// "Memcpy DtoH (Device -> Pageable)", "Memset (Device)". Kineto builds them from CUPTI's copy
// kind and memory kinds (memcpyKindString / memoryKindString in libkineto).
#pragma once

#include <string_view>

#include "model/trace.h"

namespace sightline::kineto {

struct MemOpName {
  MemOpKind kind = MemOpKind::kOther;
  MemoryKind src = MemoryKind::kUnknown, dst = MemoryKind::kUnknown;
};

// Copies: kind from the copy-kind token (array copies fold into the host/device direction they
// take: HtoA -> HtoD, AtoH -> DtoH, AtoA/AtoD/DtoA -> DtoD; src/dst then say "array"), memory
// kinds from the parenthesis. Sets: kind memset, dst = the memory set. False when the name does
// not have this shape (the row keeps kOther/kUnknown where a part is missing).
bool ParseMemcpyName(std::string_view name, MemOpName* out);
bool ParseMemsetName(std::string_view name, MemOpName* out);

// "Pinned" -> kPinned, "Device Static" -> kDevice, "Managed Static" -> kManaged, ...
MemoryKind ParseMemoryKind(std::string_view text);

}  // namespace sightline::kineto
