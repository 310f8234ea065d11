// An output never replaces an input, appears only complete, leaves no temporary behind (also on
// SIGTERM), and a write that fails (to a file or to standard output) is an error with its own exit
// code (docs/reliability.md, "Outputs").
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/file_io.h"
#include "base/output_temps.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/sanitizers.h"

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

// Any signal that ends the run removes the temporaries (before: SIGINT, SIGTERM and SIGHUP only;
// SIGQUIT, an abort or a crash left OUT.XXXXXX.tmp), and the process still ends by that signal.
TEST(OutputSafety, EverySignalThatEndsTheRunRemovesTheTemporaries) {
  std::vector<int> signals = {SIGQUIT, SIGABRT, SIGPIPE, SIGUSR1, SIGALRM, SIGXCPU};
  if (!testing::kUnderSanitizer) signals.push_back(SIGSEGV);  // else the sanitizer's own
  for (int sig : signals) {
    const std::string dir = testing::MakeTempDir();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      StatusOr<AtomicFileWriter> w = AtomicFileWriter::Open(dir + "/out.json");
      if (!w.ok() || !w->Append("partial").ok()) _exit(1);
      if (!WriteFilesAtomically(dir + "/set", {{"a.svg", "a"}}).ok()) _exit(1);
      std::raise(sig);
      _exit(2);  // not reached
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << strsignal(sig) << ": " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(OtherFiles(dir, {"set"}), 0) << strsignal(sig);
  }
}

// A write past `ulimit -f` is an output error ("File too large", exit 3) that leaves nothing;
// before, SIGXFSZ ended the run and left the temporary.
TEST(OutputSafety, AFileSizeLimitIsAWriteErrorThatLeavesNothing) {
  const std::string dir = testing::MakeTempDir();
  const std::string trace = CopyTrace(dir, "t.json");
  const std::string cmd = "bash -c \"ulimit -f 2; exec '" + std::string(SIGHTLINE_BINARY) +
                          "' analyze '" + trace + "' -o '" + dir + "/r.html' --format html\" 2>'" +
                          dir + "/err'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_NE(Slurp(dir + "/err").find("File too large"), std::string::npos) << Slurp(dir + "/err");
  EXPECT_EQ(OtherFiles(dir, {"t.json", "err"}), 0);
}

// SIGKILL cannot be caught: the next output written to the folder removes what the killed run
// left, and only that (a temporary of a live process, of another machine, or a user's file
// named like one stays).
TEST(OutputSafety, TheNextWriteRemovesTheTemporariesOfAKilledRun) {
  const std::string dir = testing::MakeTempDir();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    StatusOr<AtomicFileWriter> w = AtomicFileWriter::Open(dir + "/report.json");
    if (!w.ok() || !w->Append("partial").ok()) _exit(1);
    std::raise(SIGKILL);
    _exit(2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::vector<std::string> left;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    left.push_back(e.path().filename().string());
  }
  ASSERT_EQ(left.size(), 1u);
  std::string host;
  long owner = 0;
  ASSERT_TRUE(ParseTemporaryName(left[0], &host, &owner)) << left[0];
  EXPECT_EQ(owner, pid);
  EXPECT_EQ(left[0].rfind("report.json.sightline-", 0), 0u) << left[0];
  const std::string live = "x.sightline-" + TemporaryHostTag() + "-1-abcdef.tmp";  // pid 1 runs
  const std::string other_host = std::string("x.sightline-") +
                                 (TemporaryHostTag() == "00000000" ? "11111111" : "00000000") +
                                 "-" + std::to_string(pid) + "-abcdef.tmp";
  for (const std::string& name :
       {live, other_host, std::string("report.json.tmp"), std::string("report.json.abcdef.tmp")}) {
    std::ofstream(dir + "/" + name) << "keep";
  }
  ASSERT_TRUE(WriteFileAtomically(dir + "/other.txt", "x").ok());
  EXPECT_FALSE(fs::exists(dir + "/" + left[0]));
  EXPECT_EQ(
      OtherFiles(dir, {"other.txt", live, other_host, "report.json.tmp", "report.json.abcdef.tmp"}),
      0);
  EXPECT_TRUE(fs::exists(dir + "/" + live));
  EXPECT_TRUE(fs::exists(dir + "/" + other_host));
}

// A legal output name of 254 bytes: its temporary once took 254 + 11 bytes, past NAME_MAX, and
// the output was refused. The temporary's name is cut instead.
TEST(OutputSafety, AnOutputNameOfNearlyNameMaxBytesIsWritable) {
  const std::string dir = testing::MakeTempDir();
  const std::string name = std::string(249, 'r') + ".json";
  ASSERT_EQ(name.size(), 254u);
  const Status s = WriteFileAtomically(dir + "/" + name, "report");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Slurp(dir + "/" + name), "report");
  EXPECT_EQ(OtherFiles(dir, {name}), 0);
  const std::string trace = CopyTrace(dir, "t.json");
  testing::CliResult r =
      testing::RunSightline("analyze '" + trace + "' -o '" + dir + "/" + name + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A set of files (allreduce plot's) appears whole or not at all: into a new directory in one
// rename, into an existing one beside the files it holds; a write that fails leaves none of the
// set, and no temporary.
TEST(OutputSafety, SetsOfFilesAppearTogetherOrNotAtAll) {
  const std::string dir = testing::MakeTempDir();
  const std::vector<std::pair<std::string, std::string>> files = {
      {"a.svg", "<svg/>"}, {"index.html", std::string(200000, 'x')}};
  ASSERT_TRUE(WriteFilesAtomically(dir + "/new", files).ok());
  EXPECT_EQ(Slurp(dir + "/new/a.svg"), "<svg/>");
  EXPECT_EQ(OtherFiles(dir, {"new"}), 0);
  EXPECT_EQ(OtherFiles(dir + "/new", {"a.svg", "index.html"}), 0);
  std::ofstream(dir + "/new/mine.txt") << "mine";
  ASSERT_TRUE(WriteFilesAtomically(dir + "/new", {{"a.svg", "<svg>2</svg>"}}).ok());
  EXPECT_EQ(Slurp(dir + "/new/a.svg"), "<svg>2</svg>");
  EXPECT_EQ(Slurp(dir + "/new/mine.txt"), "mine");
  EXPECT_EQ(OtherFiles(dir + "/new", {"a.svg", "index.html", "mine.txt"}), 0);
  // A full disk, as a file size limit: the second file fails, the first does not appear either.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit r {};
    ::getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = 100000;
    if (::setrlimit(RLIMIT_FSIZE, &r) != 0) _exit(3);
    const Status a = WriteFilesAtomically(dir + "/full", files);
    const Status b =
        WriteFilesAtomically(dir + "/new", {{"b.svg", "b"}, {"c.html", files[1].second}});
    const bool ok = a.code() == StatusCode::kOutputError && b.code() == StatusCode::kOutputError &&
                    a.message().find("none of the 2 files was written") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(OtherFiles(dir, {"new"}), 0);
  EXPECT_EQ(OtherFiles(dir + "/new", {"a.svg", "index.html", "mine.txt"}), 0);
}

// `analyze DIR -o DIR/report.txt` run twice: the first run's report is an output, not an input;
// it is left out and listed, and the second run replaces it (before: refused, "refusing to write
// the output over an input of this run").
TEST(OutputSafety, AnalyzeOfADirectoryLeavesOutItsOwnReports) {
  const std::string dir = testing::MakeTempDir();
  CopyTrace(dir, "t.json");
  for (const char* format : {"text", "json", "html"}) {
    const std::string out = dir + "/report." + format;
    for (int run = 0; run < 2; ++run) {
      testing::CliResult r =
          testing::RunSightline("analyze '" + dir + "' -o '" + out + "' --format " + format);
      ASSERT_EQ(r.exit_code, 0) << format << " run " << run << ": " << r.err;
    }
  }
  testing::CliResult r = testing::RunSightline("analyze '" + dir + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"report.text", "report.json", "report.html"}) {
    EXPECT_NE(r.out.find(std::string(name) + ": skipped: a report Sightline wrote"),
              std::string::npos)
        << r.out.substr(0, 600);
  }
  EXPECT_NE(r.out.find("t.json: read as kineto-json"), std::string::npos);
}

}  // namespace
}  // namespace sightline
