#include "model/diagnostics.h"

namespace sightline {

void Diagnostics::Add(const std::string& code, const std::string& message, int64_t n,
                      DiagnosticSeverity severity) {
  if (n == 0) return;
  for (Diagnostic& d : items_) {
    if (d.code == code) {
      d.count += n;
      return;
    }
  }
  items_.push_back(Diagnostic{code, message, severity, n});
}

void Diagnostics::Merge(const Diagnostics& other) {
  for (const Diagnostic& d : other.items_) Add(d.code, d.message, d.count, d.severity);
}

int64_t Diagnostics::Count(const std::string& code) const {
  for (const Diagnostic& d : items_) {
    if (d.code == code) return d.count;
  }
  return 0;
}

}  // namespace sightline
