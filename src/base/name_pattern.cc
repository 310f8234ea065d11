#include "base/name_pattern.h"

#include <cctype>

namespace sightline {

std::string DigitRunsToN(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      out.push_back('N');
      while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    } else {
      out.push_back(name[i++]);
    }
  }
  return out;
}

}  // namespace sightline
