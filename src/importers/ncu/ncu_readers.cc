#include "importers/ncu/ncu_readers.h"

#include "importers/ncu/ncu_source.h"

namespace sightline {

bool SniffNcuCsv(std::string_view head) {
  std::string_view rest = SkipBomAndSpace(head);
  while (!rest.empty()) {
    if (rest.starts_with("\"ID\",") || rest.starts_with("ID,")) {
      const std::string_view header = rest.substr(0, rest.find('\n'));
      if (header.find("Kernel Name") != std::string_view::npos) return true;
    }
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return false;
    rest = rest.substr(nl + 1);
  }
  return false;
}

bool SniffNcuSource(std::string_view head) { return LooksLikeNcuSourceCsv(head); }

}  // namespace sightline
