// `sightline redact` on a run's process tree (NAME.processes.json): command-line secrets and user
// folders go, in the process commands and in the program's own arguments; the copy still reads as
// a process tree with the same numbers.
#include "exporters/redact_processes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "importers/recorder/run_processes.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr char kDoc[] = R"({"sightline_processes": 1, "clock": "CLOCK_MONOTONIC",
 "start_ns": 1000000000, "end_ns": 1000005000, "scans": 3, "watch_cpu_ns": 7,
 "program": ["python3", "/home/alice/serve.py", "--api-key", "sk-live-A1b2C3d4E5f6",
             "--hf-token=hf_QwErTyUiOp123456", "--max-tokens", "512"],
 "processes": [
  {"pid": 40, "ppid": 1, "name": "python3",
   "command": "python3 /home/alice/serve.py --api-key sk-live-A1b2C3d4E5f6 --hf-token=hf_QwErTyUiOp123456 --max-tokens 512",
   "start_ns": 1000000000, "end_ns": 1000004000, "cpu_user_ns": 300, "cpu_system_ns": 100,
   "max_threads": 2, "recording": "/home/alice/runs/run.slrec",
   "threads": [[40, "python3", 400]], "cpu_samples": [[1000002000, 150], [1000004000, 250]]}]}
)";

TEST(RedactProcesses, SecretsAndUserFoldersGoNumbersStay) {
  const std::string dir = testing::MakeTempDir();
  const std::string in = dir + "/run.processes.json", out = dir + "/shared.processes.json";
  std::ofstream(in) << kDoc;
  testing::CliResult r = testing::RunSightline("redact '" + in + "' -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string copy = Lower(Slurp(out));
  for (const char* secret : {"sk-live-a1b2c3d4e5f6", "hf_qwertyuiop123456", "alice"}) {
    EXPECT_EQ(copy.find(secret), std::string::npos) << secret << " in " << copy;
  }
  EXPECT_NE(copy.find("--max-tokens"), std::string::npos);  // not a secret: kept
  EXPECT_NE(copy.find("512"), std::string::npos);
  // The copy is still a process tree with the same figures.
  const auto procs = ParseRunProcesses(Slurp(out), 0);
  ASSERT_TRUE(procs.ok()) << procs.status().ToString();
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ((*procs)[0].cpu_ns, 400);
  EXPECT_EQ((*procs)[0].recording, "/home/user/runs/run.slrec");
  // --check finds nothing in the copy, and the secrets in the original.
  EXPECT_EQ(testing::RunSightline("redact --check '" + out + "' --against '" + in + "'").exit_code,
            0);
  testing::CliResult self =
      testing::RunSightline("redact --check '" + in + "' --against '" + in + "'");
  EXPECT_EQ(self.exit_code, 1) << self.out;
  EXPECT_EQ(self.out.find("sk-live"), std::string::npos);  // findings never quote the secret
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sightline
