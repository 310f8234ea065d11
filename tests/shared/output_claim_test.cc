// The processes of one `sightline record` run share out output names through the run's manifest:
// a fixed -o reached by several processes (torch.compile's workers, a server's engine and workers)
// gives each its own file, never one file written twice.
#include "shared/output_claim.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace sightline::recenv {
namespace {

TEST(OutputClaim, PerProcessNameKeepsTheExtensionAndTheFolder) {
  EXPECT_EQ(PerProcessOutputName("run.slrec", 42), "run.42.slrec");
  EXPECT_EQ(PerProcessOutputName("/a.b/run", 42), "/a.b/run.42");
  EXPECT_EQ(PerProcessOutputName("/x/.hidden", 7), "/x/.hidden.7");
  EXPECT_EQ(PerProcessOutputName("dir/r.tar.slrec", 7), "dir/r.tar.7.slrec");
}

TEST(OutputClaim, ManifestLinesParseAndBadOnesAreSkipped) {
  const auto v = ParseManifest("12 /a b/c.slrec\nbad line\n 3 x\n7 \n99 /y\n");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].pid, 12);
  EXPECT_EQ(v[0].path, "/a b/c.slrec");
  EXPECT_EQ(v[1].pid, 99);
}

TEST(OutputClaim, WithoutManifestThePathIsKept) {
  int64_t taken = -1;
  EXPECT_EQ(ClaimOutput(nullptr, "r.slrec", 5, &taken), "r.slrec");
  EXPECT_EQ(taken, 0);
  EXPECT_EQ(ClaimOutput("/nonexistent/dir/manifest", "r.slrec", 5, &taken), "r.slrec");
}

// Eight processes claim one fixed name at once: one keeps it, each other gets its own name, and
// the manifest lists eight distinct files, each with the process that writes it.
TEST(OutputClaim, ConcurrentProcessesNeverShareAFile) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("sightline-claim-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string manifest = dir + "/manifest";
  std::ofstream(manifest).close();
  const std::string fixed = dir + "/run.slrec";
  constexpr int kProcesses = 8;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int64_t taken = 0;
      const std::string path = ClaimOutput(manifest.c_str(), fixed, getpid(), &taken);
      const bool renamed = path != fixed;
      _exit(renamed == (taken != 0) ? 0 : 1);
    }
  }
  for (int i = 0; i < kProcesses; ++i) {
    int status = 0;
    ASSERT_GT(wait(&status), 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream in(manifest);
  std::stringstream text;
  text << in.rdbuf();
  const auto claimed = ParseManifest(text.str());
  ASSERT_EQ(claimed.size(), static_cast<size_t>(kProcesses)) << text.str();
  std::set<std::string> paths;
  int kept = 0;
  for (const ClaimedOutput& c : claimed) {
    paths.insert(c.path);
    if (c.path == fixed) {
      ++kept;
    } else {
      EXPECT_EQ(c.path, PerProcessOutputName(fixed, c.pid));
    }
  }
  EXPECT_EQ(paths.size(), static_cast<size_t>(kProcesses));
  EXPECT_EQ(kept, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sightline::recenv
