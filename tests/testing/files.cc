#include "testing/files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sightline::testing {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string SharedTracesDir() {
  const char* env = std::getenv("SIGHTLINE_SHARED_TRACES");
  const std::string dir =
      env != nullptr && *env != 0 ? env : std::string(SIGHTLINE_SOURCE_DIR) + "/../shared/traces";
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir : std::string();
}

}  // namespace sightline::testing
