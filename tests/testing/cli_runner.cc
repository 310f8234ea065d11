#include "testing/cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "testing/files.h"

namespace sightline::testing {

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

}  // namespace sightline::testing
