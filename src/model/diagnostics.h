// Diagnostics: what an importer or analysis could not use, counted instead of silently dropped.
// Every reporter shows them when any count is non-zero. Codes, severities and messages come from
// the catalogue in diagnostic_codes.h; docs/diagnostics.md explains each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/diagnostic_codes.h"

namespace sightline {

struct Diagnostic {
  DiagCode id = DiagCode::kNegativeDuration;
  // The variable part, when a code covers several cases (which Kineto category, how many bytes
  // were not read); empty otherwise. Reporters print it after the message.
  std::string detail;
  int64_t count = 0;

  const DiagnosticInfo& info() const { return Info(id); }
  std::string_view code() const { return info().code; }
  std::string_view message() const { return info().message; }
  DiagnosticSeverity severity() const { return info().severity; }
  // The message, then the detail in parentheses when there is one: what text reports print.
  std::string text() const;
};

class Diagnostics {
 public:
  // Adds n to the diagnostic (code, detail), creating it on first use; n == 0 adds nothing.
  // Diagnostics with the same code and different details are listed separately.
  void Add(DiagCode code, int64_t n = 1, std::string detail = {});
  void Merge(const Diagnostics& other);
  // The count of `code`, summed over its details.
  int64_t Count(DiagCode code) const;
  // In order of first use.
  const std::vector<Diagnostic>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace sightline
