// An output never replaces an input, appears only complete, leaves no temporary behind (also on
// SIGTERM), and a write that fails (to a file or to standard output) is an error with its own exit
// code (docs/reliability.md, "Outputs").
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/file_io.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

using testing::Slurp;

// A copy of a shipped Kineto trace in a fresh directory.
std::string CopyTrace(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  fs::copy_file(std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/basic.json", path);
  return path;
}

// Files in dir other than the ones named.
int OtherFiles(const std::string& dir, std::initializer_list<std::string> known) {
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    bool is_known = false;
    for (const std::string& k : known) is_known |= e.path().filename() == k;
    if (!is_known) ++n;
  }
  return n;
}

TEST(OutputSafety, AnalyzeRefusesToWriteOverItsInput) {
  const std::string dir = testing::MakeTempDir();
  const std::string trace = CopyTrace(dir, "t.json");
  const std::string before = Slurp(trace);
  testing::CliResult r = testing::RunSightline("analyze '" + trace + "' -o '" + trace + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("refusing to write the output over an input"), std::string::npos) << r.err;
  EXPECT_EQ(Slurp(trace), before);
  // Through a symbolic link, and through a hard link.
  fs::create_symlink(trace, dir + "/link.json");
  r = testing::RunSightline("analyze '" + trace + "' -o '" + dir + "/link.json'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the same file as"), std::string::npos) << r.err;
  fs::create_hard_link(trace, dir + "/hard.json");
  r = testing::RunSightline("analyze '" + trace + "' -o '" + dir + "/hard.json' --format json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(Slurp(trace), before);
  EXPECT_EQ(OtherFiles(dir, {"t.json", "link.json", "hard.json"}), 0);
}

TEST(OutputSafety, ExportAndDiffRefuseToWriteOverTheirInputs) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = CopyTrace(dir, "a.json");
  const std::string b = CopyTrace(dir, "b.json");
  const std::string before = Slurp(a);
  testing::CliResult r = testing::RunSightline("export '" + a + "' --perfetto -o '" + a + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = testing::RunSightline("diff '" + a + "' '" + b + "' -o '" + b + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(Slurp(a), before);
  EXPECT_EQ(Slurp(b), before);
  EXPECT_EQ(OtherFiles(dir, {"a.json", "b.json"}), 0);
}

// The writer's temporary once had a fixed name, OUT.tmp: an input of that name was lost.
TEST(OutputSafety, AnInputNamedLikeATemporarySurvives) {
  const std::string dir = testing::MakeTempDir();
  const std::string trace = CopyTrace(dir, "out.json.tmp");
  const std::string before = Slurp(trace);
  const std::string out = dir + "/out.json";
  testing::CliResult r = testing::RunSightline("analyze '" + trace + "' -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(trace), before);
  EXPECT_NE(Slurp(out).find("Findings"), std::string::npos);
  EXPECT_EQ(OtherFiles(dir, {"out.json.tmp", "out.json"}), 0);
}

TEST(OutputSafety, AFailedWriteToStandardOutputIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::string dir = testing::MakeTempDir();
  const std::string trace = CopyTrace(dir, "t.json");
  for (const std::string& args :
       {"analyze '" + trace + "'", "export '" + trace + "' --perfetto",
        "diff '" + trace + "' '" + trace + "'", std::string("occupancy --help")}) {
    const std::string cmd =
        std::string("'") + SIGHTLINE_BINARY + "' " + args + " >/dev/full 2>'" + dir + "/err'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 3) << args;
    EXPECT_NE(Slurp(dir + "/err").find("No space left on device"), std::string::npos) << args;
  }
}

TEST(OutputSafety, WriterRefusesAFileReadInThisRun) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/in.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "input").ok());
  ASSERT_TRUE(ReadFileToString(path).ok());  // notes it as an input
  const Status s = WriteFileAtomically(path, "output");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(Slurp(path), "input");
  // An AtomicFileWriter opened before the input was read refuses at Commit.
  const std::string later = dir + "/later.txt";
  ASSERT_TRUE(WriteFileAtomically(later, "input").ok());
  StatusOr<AtomicFileWriter> w = AtomicFileWriter::Open(later);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->Append("output").ok());
  ASSERT_TRUE(ReadFileToString(later).ok());
  EXPECT_EQ(w->Commit().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Slurp(later), "input");
  EXPECT_EQ(OtherFiles(dir, {"in.txt", "later.txt"}), 0);
}

TEST(OutputSafety, FailuresAreOutputErrorsAndLeaveNothing) {
  const std::string dir = testing::MakeTempDir();
  Status s = WriteFileAtomically(dir + "/no/such/dir/out.json", "x");
  EXPECT_EQ(s.code(), StatusCode::kOutputError) << s.ToString();
  if (fs::exists("/dev/full")) {
    s = WriteFileAtomically("/dev/full", std::string(1 << 16, 'x'));
    EXPECT_EQ(s.code(), StatusCode::kOutputError) << s.ToString();
  }
  {
    StatusOr<AtomicFileWriter> w = AtomicFileWriter::Open(dir + "/abandoned.json");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Append("partial").ok());
  }  // destroyed without Commit
  EXPECT_EQ(OtherFiles(dir, {}), 0);
}

// An output gets the mode a plain open would give it (0666 less the umask), not the temporary's
// 0600; one that replaces a file keeps that file's mode.
TEST(OutputSafety, OutputsHaveTheUsualModeOrTheReplacedFilesMode) {
  const std::string dir = testing::MakeTempDir();
  const mode_t old = ::umask(027);
  Status s = WriteFileAtomically(dir + "/new.json", "x");
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s.ToString();
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ASSERT_EQ(::chmod((dir + "/new.json").c_str(), 0604), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/new.json", "y").ok());
  ASSERT_EQ(::stat((dir + "/new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0604u);
  EXPECT_EQ(Slurp(dir + "/new.json"), "y");
}

// Two writers of one path at once: each has its own temporary, and the path ends up whole.
TEST(OutputSafety, TwoWritersOfOnePathLeaveOneWholeFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/report.json";
  StatusOr<AtomicFileWriter> a = AtomicFileWriter::Open(path);
  StatusOr<AtomicFileWriter> b = AtomicFileWriter::Open(path);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string text_a(100000, 'a'), text_b(50000, 'b');
  ASSERT_TRUE(a->Append(text_a.substr(0, 50000)).ok());
  ASSERT_TRUE(b->Append(text_b).ok());
  ASSERT_TRUE(a->Append(text_a.substr(50000)).ok());
  ASSERT_TRUE(b->Commit().ok());
  EXPECT_EQ(Slurp(path), text_b);
  ASSERT_TRUE(a->Commit().ok());
  EXPECT_EQ(Slurp(path), text_a);
  EXPECT_EQ(OtherFiles(dir, {"report.json"}), 0);
}

// SIGTERM while an output is being written removes its temporary (the process still ends by the
// signal, as without Sightline).
TEST(OutputSafety, SigtermRemovesTheTemporary) {
  const std::string dir = testing::MakeTempDir();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    StatusOr<AtomicFileWriter> w = AtomicFileWriter::Open(dir + "/out.json");
    if (!w.ok() || !w->Append("partial").ok()) _exit(1);
    std::raise(SIGTERM);
    _exit(2);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(OtherFiles(dir, {}), 0);
}

}  // namespace
}  // namespace sightline
