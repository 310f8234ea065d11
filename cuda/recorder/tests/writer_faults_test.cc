// The recorder's writer under faults (issue 17), without a GPU: records posted the way the
// injection library posts its own (PostRecord), then the process is killed, the disk is full or the
// output directory disappears. What was flushed must stay readable, and nothing may crash: the
// recorded program's exit status is the application's, so the writer never exits or aborts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "shared/recorder_format.h"
#include "writer.h"

namespace sightline::recorder {
namespace {

namespace fs = std::filesystem;
namespace recfmt = sightline::recfmt;

// Enough capture-window records (32 bytes each with their header) to pass the writer's 1 MiB
// chunk threshold, so one chunk is written without waiting for the one-second flush.
constexpr uint32_t kRecordsPastOneChunk = 40'000;

void PostWindows(Writer& w, uint32_t first, uint32_t n) {
  for (uint32_t i = first; i < first + n; ++i) {
    recfmt::CaptureWindowBody b{};
    b.start_ns = 1000 + i;
    b.end_ns = 2000 + i;
    b.index = i;
    w.PostRecord(recfmt::RecordType::kCaptureWindow, &b, sizeof b);
  }
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Contents {
  std::string error;
  recfmt::ReadSummary summary;
  uint64_t windows = 0;
  uint32_t last_index = 0;
  bool have_end = false;
};

Contents ReadBack(const std::string& bytes) {
  Contents c;
  c.error = recfmt::ReadRecords(bytes, &c.summary, [&](recfmt::RecordType t, std::string_view b) {
    if (t == recfmt::RecordType::kCaptureWindow) {
      const auto w = recfmt::DecodeBody<recfmt::CaptureWindowBody>(b);
      EXPECT_EQ(w.index, c.windows) << "records out of order or lost inside a flushed chunk";
      c.last_index = w.index;
      ++c.windows;
    }
    if (t == recfmt::RecordType::kEnd) c.have_end = true;
  });
  return c;
}

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(WriterFaults, KilledMidRunKeepsWhatWasFlushed) {
  const fs::path dir = TempDir("slrec_kill");
  const fs::path file = dir / "killed.slrec";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The recorded program: records flowing, then SIGKILL (no exit handler runs, as with the OOM
    // killer or a scheduler's kill) while more records wait in the writer's queue and chunk.
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) ::_exit(3);
    Writer* w = new Writer(fd, 1 << 16, 64);  // never destroyed: the process dies holding it
    w->Start();
    PostWindows(*w, 0, kRecordsPastOneChunk);
    // Wait until the first chunk is wholly on disk. The file's size alone is not enough: it grows
    // page by page while the writer thread's write() is still copying the chunk (CI once killed
    // the process mid-write, leaving no complete chunk).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      recfmt::ReadSummary s;
      const std::string error = recfmt::ReadRecords(ReadAll(file), &s, [](auto, auto) {});
      if (error.empty() && s.complete_chunks >= 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    PostWindows(*w, kRecordsPastOneChunk, 1000);
    ::kill(::getpid(), SIGKILL);
    ::_exit(4);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  const Contents c = ReadBack(ReadAll(file));
  EXPECT_EQ(c.error, "");
  EXPECT_FALSE(c.have_end) << "a killed process cannot have written its end record";
  EXPECT_GE(c.summary.complete_chunks, 1u);
  // Every record of every flushed chunk is there, in order, from the first one on.
  EXPECT_GE(c.windows, 1u);
  EXPECT_EQ(c.last_index + 1, c.windows);
  EXPECT_LE(c.windows, kRecordsPastOneChunk + 1000u);
  fs::remove_all(dir);
}

TEST(WriterFaults, DiskFullStopsWritingWithoutFailingTheProgram) {
  // /dev/full answers every write with ENOSPC.
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "/dev/full is not available";
  testing::internal::CaptureStderr();
  {
    Writer w(fd, 1 << 16, 64);
    w.Start();
    PostWindows(w, 0, kRecordsPastOneChunk);
    PostWindows(w, kRecordsPastOneChunk, 100);
    w.Finish(0);
    w.Finish(0);  // idempotent, also after a failed write
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("sightline-recorder: cannot write the recording"), std::string::npos) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_NE(err.find("recording stops here"), std::string::npos) << err;
  // Said once (the header's write fails and the writer stops), not once per chunk.
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(WriterFaults, OutputDirectoryRemovedWhileRecording) {
  const fs::path dir = TempDir("slrec_rmdir");
  const fs::path file = dir / "gone.slrec";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  Writer w(fd, 1 << 16, 64);
  w.Start();
  PostWindows(w, 0, 1000);
  fs::remove_all(dir);  // the open file lives on, unlinked: writes succeed and go nowhere
  PostWindows(w, 1000, kRecordsPastOneChunk);
  w.Finish(0);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_GE(w.records_written(), 1000u + kRecordsPastOneChunk);
}

}  // namespace
}  // namespace sightline::recorder
