// Diagnostics: what an importer or analysis could not use, counted instead of silently dropped.
// Every reporter shows them when any count is non-zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sightline {

enum class DiagnosticSeverity { kInfo, kWarning };

struct Diagnostic {
  std::string code;     // stable key, e.g. "kernel_without_launch"
  std::string message;  // what it means for the user, e.g. "kernels whose launching API call ..."
  DiagnosticSeverity severity = DiagnosticSeverity::kWarning;
  int64_t count = 0;
};

class Diagnostics {
 public:
  // Adds n to the diagnostic `code`, creating it with this message and severity on first use.
  void Add(const std::string& code, const std::string& message, int64_t n = 1,
           DiagnosticSeverity severity = DiagnosticSeverity::kWarning);
  void Merge(const Diagnostics& other);
  int64_t Count(const std::string& code) const;
  const std::vector<Diagnostic>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace sightline
