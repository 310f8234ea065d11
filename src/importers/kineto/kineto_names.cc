#include "importers/kineto/kineto_names.h"

namespace sightline::kineto {
namespace {

bool ParseCopyKind(std::string_view t, MemOpKind* kind) {
  struct Entry {
    std::string_view text;
    MemOpKind kind;
  };
  static constexpr Entry kKinds[] = {
      {"HtoD", MemOpKind::kHtoD}, {"DtoH", MemOpKind::kDtoH}, {"DtoD", MemOpKind::kDtoD},
      {"HtoH", MemOpKind::kHtoH}, {"PtoP", MemOpKind::kPtoP}, {"HtoA", MemOpKind::kHtoD},
      {"AtoH", MemOpKind::kDtoH}, {"AtoA", MemOpKind::kDtoD}, {"AtoD", MemOpKind::kDtoD},
      {"DtoA", MemOpKind::kDtoD},
  };
  for (const Entry& e : kKinds) {
    if (t == e.text) {
      *kind = e.kind;
      return true;
    }
  }
  return false;
}

// The text between the first '(' and the last ')', or empty.
std::string_view Parenthesised(std::string_view name) {
  const size_t open = name.find('(');
  const size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return name.substr(open + 1, close - open - 1);
}

}  // namespace

MemoryKind ParseMemoryKind(std::string_view t) {
  if (t == "Pageable") return MemoryKind::kPageable;
  if (t == "Pinned") return MemoryKind::kPinned;
  if (t == "Device" || t == "Device Static") return MemoryKind::kDevice;
  if (t == "Array") return MemoryKind::kArray;
  if (t == "Managed" || t == "Managed Static") return MemoryKind::kManaged;
  return MemoryKind::kUnknown;
}

bool ParseMemcpyName(std::string_view name, MemOpName* out) {
  *out = MemOpName{};
  constexpr std::string_view kPrefix = "Memcpy ";
  if (!name.starts_with(kPrefix)) return false;
  std::string_view rest = name.substr(kPrefix.size());
  const size_t space = rest.find(' ');
  if (!ParseCopyKind(rest.substr(0, space), &out->kind)) return false;
  const std::string_view kinds = Parenthesised(rest);
  constexpr std::string_view kArrow = " -> ";
  const size_t arrow = kinds.find(kArrow);
  if (arrow == std::string_view::npos) return false;
  out->src = ParseMemoryKind(kinds.substr(0, arrow));
  out->dst = ParseMemoryKind(kinds.substr(arrow + kArrow.size()));
  return true;
}

bool ParseMemsetName(std::string_view name, MemOpName* out) {
  *out = MemOpName{};
  out->kind = MemOpKind::kMemset;
  if (!name.starts_with("Memset")) return false;
  const std::string_view kind = Parenthesised(name);
  if (kind.empty()) return false;
  out->dst = ParseMemoryKind(kind);
  return true;
}

}  // namespace sightline::kineto
