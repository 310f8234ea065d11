// Runs the sightline binary from tests and captures its exit code, stdout and stderr.
#pragma once

#include <string>

namespace sightline::testing {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `sightline ARGS` (args are shell-quoted by the caller where needed).
CliResult RunSightline(const std::string& args);

// A fresh empty directory under the system temp dir, removed at process exit.
std::string MakeTempDir();

}  // namespace sightline::testing
