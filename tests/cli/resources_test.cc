// Running short of memory or stack ends in a clear error, never an abort or a crash
// (docs/reliability.md, "Resources"; issue 53).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/sanitizers.h"

namespace sightline {
namespace {

const std::string kRoot = SIGHTLINE_SOURCE_DIR;

struct ShellResult {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

// `sightline ARGS` after `ulimit LIMIT` in a shell of its own.
ShellResult RunUnder(const std::string& limit, const std::string& args) {
  const std::string dir = testing::MakeTempDir();
  const std::string cmd = "bash -c \"ulimit " + limit + "; exec '" + SIGHTLINE_BINARY + "' " +
                          args + "\" >'" + dir + "/out' 2>'" + dir + "/err'";
  const int status = std::system(cmd.c_str());
  ShellResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = testing::Slurp(dir + "/out");
  r.err = testing::Slurp(dir + "/err");
  return r;
}

// With a 128 KiB stack every command ran out of it at once (SIGSEGV: the import's frames hold
// traces by value, 180 KiB deep for a Kineto file).
TEST(Resources, ASmallStackLimitIsNoCrash) {
  const std::string kineto = "'" + kRoot + "/tests/data/kineto/basic.json'";
  const std::string nsys = "'" + kRoot + "/tests/data/nsys/graph_decode_node_h100.sqlite.gz'";
  for (const std::string& args :
       {"analyze " + kineto, "analyze " + kineto + " --format json",
        "diff " + kineto + " " + kineto,
        "analyze '" + kRoot + "/tests/data/kineto/basic.json.gz' --format html", "analyze " + nsys,
        "ncu '" + kRoot + "/tests/data/ncu/h100_torch_full_details.csv.gz'"}) {
    const ShellResult r = RunUnder("-s 128", args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << args;
  }
}

// A trace whose tables do not fit in 100 MB of address space: before, std::bad_alloc ended the
// program (SIGABRT, "terminate called"); now it is an error that says so, exit 2.
TEST(Resources, OutOfMemoryIsAClearErrorWithExit2) {
  if (testing::kUnderSanitizer)
    GTEST_SKIP() << "an address-space limit needs a build without sanitizers";
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/big.json";
  {
    std::ofstream f(path);
    f << "{\"schemaVersion\": 1, \"traceEvents\": [\n";
    for (int i = 0; i < 1000000; ++i) {
      f << "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k" << i % 50
        << "\",\"pid\":0,\"tid\":7,\"ts\":" << 1000 + i * 5
        << ",\"dur\":3,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" << i << "}},\n";
    }
    f << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"x\"}}]}\n";
  }
  const ShellResult r = RunUnder("-v 100000", "analyze '" + path + "' -o '" + dir + "/r.txt'");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("sightline: error: out of memory"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  EXPECT_EQ(testing::Slurp(dir + "/r.txt"), "");
}

// With no thread to be had (`ulimit -u 2` for a user of its own: the shell and sightline), two
// ranks are read on the calling thread; before, std::thread's std::system_error aborted the run
// ("terminate called ... Resource temporarily unavailable", SIGABRT). Needs root, to run as
// nobody (root is not held to RLIMIT_NPROC).
TEST(Resources, NoThreadToBeHadIsNoAbort) {
  if (::geteuid() != 0 || std::system("command -v runuser >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs root and runuser, to run as nobody under ulimit -u";
  }
  const std::string dir = testing::MakeTempDir();
  ::chmod(dir.c_str(), 0755);
  const std::string bin = dir + "/sightline";
  std::filesystem::copy_file(SIGHTLINE_BINARY, bin);
  std::vector<std::string> traces;
  for (const char* name : {"rank0.json", "rank1.json"}) {
    traces.push_back(dir + "/" + name);
    std::filesystem::copy_file(kRoot + "/tests/data/kineto/basic.json", traces.back());
    ::chmod(traces.back().c_str(), 0644);
  }
  const std::string probe = "runuser -u nobody -- bash -c 'ulimit -u 2; /bin/true' 2>/dev/null";
  if (std::system(probe.c_str()) != 0) GTEST_SKIP() << "nobody cannot start even one process";
  const std::string cmd =
      "runuser -u nobody -- bash -c \"ulimit -u 2; SIGHTLINE_NO_HUGEPAGES=1 "
      "'" +
      bin + "' analyze '" + traces[0] + "' '" + traces[1] + "' --quiet --jobs 2\" >/dev/null 2>'" +
      dir + "/err'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << testing::Slurp(dir + "/err");
  EXPECT_EQ(testing::Slurp(dir + "/err").find("terminate called"), std::string::npos);
}

}  // namespace
}  // namespace sightline
