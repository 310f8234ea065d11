#include "model/diagnostics.h"

#include <utility>

namespace sightline {

std::string Diagnostic::text() const {
  std::string out(message());
  if (!detail.empty()) out += " (" + detail + ")";
  return out;
}

void Diagnostics::Add(DiagCode code, int64_t n, std::string detail) {
  if (n == 0) return;
  for (Diagnostic& d : items_) {
    if (d.id == code && d.detail == detail) {
      d.count += n;
      return;
    }
  }
  items_.push_back(Diagnostic{code, std::move(detail), n});
}

void Diagnostics::Merge(const Diagnostics& other) {
  for (const Diagnostic& d : other.items_) Add(d.id, d.count, d.detail);
}

int64_t Diagnostics::Count(DiagCode code) const {
  int64_t n = 0;
  for (const Diagnostic& d : items_) {
    if (d.id == code) n += d.count;
  }
  return n;
}

}  // namespace sightline
