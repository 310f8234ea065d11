#include "report/report_schema.h"

#include <vector>

namespace sightline {

std::span<const std::string_view> EnumNames<DiagCode>::Names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const DiagnosticInfo& info : DiagnosticCatalogue()) v.push_back(info.code);
    return v;
  }();
  return names;
}

}  // namespace sightline
