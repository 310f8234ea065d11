#include "testing/cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sightline::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

std::string MakeTempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sightline_test_XXXXXX").string();
  char* dir = mkdtemp(pattern.data());
  return dir ? std::string(dir) : std::string();
}

CliResult RunSightline(const std::string& args) {
  const std::string dir = MakeTempDir();
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string cmd =
      std::string("'") + SIGHTLINE_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out);
  r.err = Slurp(err);
  std::filesystem::remove_all(dir);
  return r;
}

std::string SharedTracesDir() {
  const char* env = std::getenv("SIGHTLINE_SHARED_TRACES");
  std::string dir = env ? env : std::string(SIGHTLINE_SOURCE_DIR) + "/../shared/traces";
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir : std::string();
}

}  // namespace sightline::testing
