// docs/reliability.md, the limits every reader shares: durations longer than the trace, values that
// are not finite, strings too long to keep, and gzip streams that would inflate past the memory
// limit (a gzip bomb).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "base/file_io.h"
#include "base/input_limits.h"
#include "importers/importer.h"
#include "model/trace_builder.h"
#include "testing/cli_runner.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

// Waits for a forked test child and expects it to have exited with 0 (a check that needs its own
// process: a memory limit, a claimed allocation).
void ExpectChildSucceeded(pid_t pid) {
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

using testing::TraceFixture;

constexpr TimeNs kSecond = 1'000'000'000;

TEST(Reliability, DurationsLongerThanTheTraceAreDroppedAndCounted) {
  TraceFixture f;
  for (int i = 0; i < 10; ++i) f.Kernel("k", i * 100'000, i * 100'000 + 50'000);
  f.Range("whole run", 0, kSecond);               // as long as the trace: kept
  f.Kernel("corrupt", 200'000, TimeNs{1} << 50);  // 13 days: within the time window, too long
  f.Api("cudaLaunchKernel", 300'000, 300'000 + 100 * kSecond);  // past 2 x span + 1 min
  const Trace t = f.Build();
  EXPECT_EQ(t.kernels.size(), 10u);
  EXPECT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.api_calls.size(), 0u);
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdDuration), 2);
  EXPECT_EQ(t.end_ns(), kSecond) << "the corrupt end must not stretch the trace";
  for (const Diagnostic& d : t.diagnostics.items()) {
    if (d.code() == "absurd_duration") {
      EXPECT_NE(d.detail.find("1 kernels, 1 API calls"), std::string::npos) << d.detail;
    }
  }
}

// A duration that overflows int64 (an nsys kernel from INT64_MIN to INT64_MAX) was kept, and
// every end - start then came out negative: it is dropped and counted.
TEST(Reliability, DurationsBeyondInt64AreDropped) {
  TraceFixture f;
  for (int i = 0; i < 4; ++i) f.Kernel("k", i * 100'000, i * 100'000 + 50'000);
  f.Kernel("overflowing", std::numeric_limits<TimeNs>::min() + 5,
           std::numeric_limits<TimeNs>::max() - 5);
  const Trace t = f.Build();
  ASSERT_EQ(t.kernels.size(), 4u);
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    EXPECT_GT(t.kernels.end_ns[i] - t.kernels.start_ns[i], 0);
  }
  // Its ends are beyond +-2^62 ns: an absurd timestamp (issue 34: every difference of two times
  // must fit in int64).
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdTimestamp), 1);
  EXPECT_EQ(t.begin_ns(), 0);
}

// The median start time is taken from every second start over 2^17 and more rows, counted across
// the tables one after the other: 70,001 kernels give rows 0, 2, ..., 70,000 (35,001 samples),
// and the API calls after them rows 1, 3, ... of theirs (35,000), so the median is a kernel's and
// the calls, eight days later, are the far ones. Counting each table's rows from 0 again would
// take one call more and make the calls' time the median.
TEST(Reliability, MedianStartSamplesAcrossTables) {
  constexpr int kRows = 70'001;
  constexpr TimeNs kLater = 8 * 86'400 * kSecond;
  TraceFixture f;
  for (int i = 0; i < kRows; ++i) f.Kernel("k", i * 10, i * 10 + 5);
  for (int i = 0; i < kRows; ++i) f.Api("cudaFree", kLater + i * 10, kLater + i * 10 + 5);
  const Trace t = f.Build();
  EXPECT_EQ(t.kernels.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(t.api_calls.size(), 0u);
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdTimestamp), kRows);
}

// Found by whole-program fuzzing (issue 34): a range from -7.9e18 to 1.8e18 ns made the trace's
// span overflow in the overview, and calls of 6e18 ns each the sums of durations. Times at or
// beyond +-2^62 ns are dropped and counted, and so are events more than 2^49 ns (6.5 days) from
// the median start time.
TEST(Reliability, TimestampsBeyond2To62AreDropped) {
  constexpr TimeNs kEdge = TimeNs{1} << 62;
  TraceFixture f;
  for (int i = 0; i < 10; ++i) f.Kernel("k", i * 1000, i * 1000 + 100);  // the median start: ~0
  f.Kernel("far_start", -kEdge, 100);
  f.Kernel("far_end", 0, kEdge);
  f.Range("wide", -kEdge + 1, kEdge - 1);  // inside +-2^62, but 146 years from the rest
  f.Range("six days later", 6 * 86'400 * kSecond, 6 * 86'400 * kSecond + 1000);  // kept
  f.Api("eight days later", 8 * 86'400 * kSecond, 8 * 86'400 * kSecond + 1000);  // dropped
  const Trace t = f.Build();
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdTimestamp), 4);
  ASSERT_EQ(t.kernels.size(), 10u);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.api_calls.size(), 0u);
  TimeNs span = 0;
  EXPECT_FALSE(__builtin_sub_overflow(t.end_ns(), t.begin_ns(), &span));
}

// Found by fuzz_recorder from seeds cut to whole records (session 15): memory events near
// INT64_MIN reached the memory section's `time - origin`, and copies of INT64_MAX bytes its sums.
TEST(Reliability, FarInstantsAndCaptureTimesAndHugeCopiesAreDroppedAndCounted) {
  constexpr TimeNs kDay = 86'400 * kSecond;
  TraceBuilder b;
  const StringId k = b.Intern("k");
  for (int i = 0; i < 10; ++i) {
    KernelRow row;
    row.start_ns = i * 1000;
    row.end_ns = row.start_ns + 100;
    row.name = k;
    row.capture_ns = i == 0 ? std::numeric_limits<TimeNs>::min() + 1 : i == 1 ? 60 * kDay : 5;
    b.AddKernel(row);
  }
  for (TimeNs t : {TimeNs{500}, std::numeric_limits<TimeNs>::min() + 7, 70 * kDay}) {
    TraceBuilder::MemoryEventRow m;
    m.time_ns = t;
    m.bytes = 4096;
    b.AddMemoryEvent(m);
  }
  {  // an allocation of 8.5e18 bytes (the second run's input: memory.cc's totals overflowed)
    TraceBuilder::MemoryEventRow m;
    m.time_ns = 600;
    m.bytes = 8'457'583'078'829'796'584;
    b.AddMemoryEvent(m);
  }
  b.AddCounter(std::numeric_limits<TimeNs>::max(), 0, b.Intern("SM Active"), 1.0);
  for (int64_t bytes : {int64_t{1} << 20, std::numeric_limits<int64_t>::max(), int64_t{-5}}) {
    MemOpRow m;
    m.start_ns = 200;
    m.end_ns = 300;
    m.size_bytes = bytes;
    b.AddMemOp(m);
  }
  const Trace t = b.Finish();
  ASSERT_EQ(t.memory_events.size(), 1u);
  EXPECT_EQ(t.memory_events.time_ns[0], 500);
  EXPECT_EQ(t.counters.size(), 0u);
  ASSERT_EQ(t.kernels.size(), 10u);  // kept, their capture times unknown
  int unknown = 0;
  for (TimeNs c : t.kernels.capture_ns) unknown += c == -1;
  EXPECT_EQ(unknown, 2);
  // 2 memory events, 1 counter sample, 2 capture times.
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdTimestamp), 5);
  ASSERT_EQ(t.memops.size(), 1u);
  EXPECT_EQ(t.memops.size_bytes[0], 1 << 20);
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdSize), 3);  // 2 copies, 1 allocation
}

TEST(Reliability, LongButPossibleDurationsAreKept) {
  // A few events over a short span: a two-minute-long range still fits (the one-minute slack is
  // what keeps a sparse trace's real events).
  const Trace t = TraceFixture()
                      .Kernel("k", 0, 10)
                      .Range("loading", 5, 5 + 50 * kSecond)
                      .Kernel("k", 40 * kSecond, 41 * kSecond)
                      .Build();
  EXPECT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kAbsurdDuration), 0);
}

TEST(Reliability, NonFiniteCounterValuesAreDroppedAndCounted) {
  TraceBuilder b;
  const StringId m = b.Intern("SMs Active [Throughput %]");
  b.AddCounter(0, 0, m, 50.0);
  b.AddCounter(10, 0, m, std::numeric_limits<double>::quiet_NaN());
  b.AddCounter(20, 0, m, std::numeric_limits<double>::infinity());
  b.AddCounter(30, 0, m, -std::numeric_limits<double>::infinity());
  b.AddCounter(40, 0, m, 70.0);
  const Trace t = b.Finish();
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_EQ(t.counters.value[0], 50.0);
  EXPECT_EQ(t.counters.value[1], 70.0);
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kValueNotFinite), 3);
}

TEST(Reliability, StringsLongerThanTheLimitAreCutAtACharacterBoundary) {
  TraceBuilder b;
  // A two-byte UTF-8 character straddles the limit: the cut must not split it.
  std::string huge(kMaxStringBytes - 1, 'a');
  huge += "\xc3\xa9";  // é
  huge += std::string(3 << 20, 'b');
  const StringId id = b.Intern(huge);
  const StringId short_id = b.Intern("gemm");
  const Trace t = b.Finish();
  const std::string_view cut = t.str(id);
  EXPECT_LT(cut.size(), kMaxStringBytes + 64);
  EXPECT_EQ(cut.substr(0, kMaxStringBytes - 1), std::string(kMaxStringBytes - 1, 'a'));
  EXPECT_EQ(cut.substr(kMaxStringBytes - 1, 4), "... ") << "the é is dropped whole";
  EXPECT_NE(cut.find("[cut: " + std::to_string(huge.size()) + " bytes in all]"),
            std::string_view::npos)
      << cut.substr(kMaxStringBytes - 8);
  EXPECT_EQ(t.str(short_id), "gemm");
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kStringCut), 1);
}

TEST(Reliability, ByteCounts) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseByteCount("123", &v));
  EXPECT_EQ(v, 123u);
  EXPECT_TRUE(ParseByteCount("64K", &v));
  EXPECT_EQ(v, 64u << 10);
  EXPECT_TRUE(ParseByteCount("1.5G", &v));
  EXPECT_EQ(v, 3u << 29);
  EXPECT_TRUE(ParseByteCount("2TiB", &v));
  EXPECT_EQ(v, uint64_t{2} << 40);
  for (const char* bad : {"", "abc", "-1", "0", "12Q", "nan", "inf", "1e30T"}) {
    EXPECT_FALSE(ParseByteCount(bad, &v)) << bad;
  }
}

// Compresses `text` as one gzip member (level 6: runs of one byte shrink ~1000x).
std::string Gzip(const std::string& text) {
  std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> c(
      libdeflate_alloc_compressor(6), &libdeflate_free_compressor);
  std::string out(libdeflate_gzip_compress_bound(c.get(), text.size()), '\0');
  out.resize(libdeflate_gzip_compress(c.get(), text.data(), text.size(), out.data(), out.size()));
  return out;
}

// Sets SIGHTLINE_MAX_INPUT_SIZE for one test.
class InputLimitTest : public ::testing::Test {
 protected:
  void SetLimit(const char* value) { ::setenv(kMaxInputSizeEnv, value, 1); }
  void TearDown() override { ::unsetenv(kMaxInputSizeEnv); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::filesystem::path p = std::filesystem::path(::testing::TempDir()) / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

TEST_F(InputLimitTest, GzipBombIsRefusedBeforeItTakesTheMemory) {
  // 64 MiB of JSON whitespace in ~64 KiB of gzip, against a 16 MiB limit.
  const std::string bomb =
      Gzip(R"({"traceEvents": [)" + std::string(64 << 20, ' ') + R"(], "schemaVersion": 1})");
  ASSERT_LT(bomb.size(), 1u << 20);
  SetLimit("16M");
  StatusOr<std::string> plain = GunzipToString(bomb, "bomb.csv.gz");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(plain.status().message().find("bomb.csv.gz"), std::string::npos);
  EXPECT_NE(plain.status().message().find("gzip bomb"), std::string::npos);
  EXPECT_NE(plain.status().message().find("SIGHTLINE_MAX_INPUT_SIZE="), std::string::npos)
      << plain.status().message();
  // The trace importers (Kineto's streaming reader inflates on its own) say the same.
  StatusOr<Trace> trace = ImportTrace(Write("bomb.json.gz", bomb));
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("gzip bomb"), std::string::npos)
      << trace.status().message();
  // Raised, the same file is read.
  SetLimit("128M");
  EXPECT_TRUE(GunzipToString(bomb, "bomb.csv.gz").ok());
}

TEST_F(InputLimitTest, AnEndlessFileStopsAtTheLimit) {
  // /dev/zero never ends: reading it whole must stop with an error, not take all the memory (the
  // launcher once read back `-o /dev/full` this way and was killed).
  SetLimit("4M");
  StatusOr<std::string> s = ReadFileToString("/dev/zero");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.status().message().find("/dev/zero: larger than 4194304 bytes"), std::string::npos)
      << s.status().message();
}

TEST_F(InputLimitTest, ALimitThatIsNotASizeIsAnError) {
  SetLimit("lots");
  StatusOr<std::string> s = GunzipToString(Gzip("a,b\n1,2\n"), "x.csv.gz");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("SIGHTLINE_MAX_INPUT_SIZE='lots' is not a size"),
            std::string::npos)
      << s.status().message();
}

TEST_F(InputLimitTest, TheDefaultLimitIsHalfOfUsableMemory) {
  StatusOr<uint64_t> limit = MaxInflatedBytes();
  ASSERT_TRUE(limit.ok());
  EXPECT_GE(*limit, uint64_t{256} << 20);
  EXPECT_EQ(*limit, UsableMemory().bytes / 2);
  EXPECT_LE(UsableMemory().bytes, static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                                      static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_TRUE(GunzipToString(Gzip(std::string(1 << 20, 'x')), "ok.gz").ok());
}

// In a container the limit is what the process may use, not half of the host's memory: a gzip
// bomb in a 3 GiB container was OOM-killed without a word. The cgroup files' values, and the
// address-space limit (checked in a child process, which sets it).
TEST_F(InputLimitTest, TheLimitFollowsCgroupsAndRlimits) {
  EXPECT_EQ(ParseCgroupMemoryLimit("3221225472\n"), std::optional<uint64_t>(3221225472));
  EXPECT_EQ(ParseCgroupMemoryLimit("max\n"), std::nullopt);
  EXPECT_EQ(ParseCgroupMemoryLimit("9223372036854771712"), std::nullopt);  // v1: no limit
  EXPECT_EQ(ParseCgroupMemoryLimit(""), std::nullopt);
  EXPECT_EQ(ParseCgroupMemoryLimit("12abc"), std::nullopt);

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIGHTLINE_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIGHTLINE_TEST_UNDER_ASAN 1
#endif
#ifdef SIGHTLINE_TEST_UNDER_ASAN
  // AddressSanitizer's shadow memory already exceeds any data limit below physical memory.
  GTEST_SKIP() << "the rlimit part needs a build without AddressSanitizer";
#endif
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit r {};
    ::getrlimit(RLIMIT_DATA, &r);
    r.rlim_cur = rlim_t{3} << 30;  // 3 GiB of data segment: the limit becomes 1.5 GiB
    if (::setrlimit(RLIMIT_DATA, &r) != 0) _exit(3);
    StatusOr<uint64_t> limit = MaxInflatedBytes();
    const bool ok = limit.ok() && *limit == (uint64_t{3} << 30) / 2 &&
                    InputLimitSource().find("ulimit -d") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  ExpectChildSucceeded(pid);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// A gzip trailer states the inflated size (mod 2^32); a damaged or hostile one claiming 4 GiB
// for 20 bytes used to size the first allocation: in a process allowed 1 GiB of data that was
// std::bad_alloc (GunzipToString) or "out of memory" (the Kineto reader). Now the guess is held
// to what deflate can produce, and the file is the corrupt input it is (checked in a child
// process, which sets the limit; the input-size limit is raised so that it does not decide).
TEST(Reliability, AGzipTrailerClaimingGigabytesTakesNoGigabytes) {
#ifdef SIGHTLINE_TEST_UNDER_ASAN
  GTEST_SKIP() << "the rlimit needs a build without AddressSanitizer";
#endif
  const std::string dir = testing::MakeTempDir();
  const std::string text = R"({"traceEvents": []})";
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string gz(libdeflate_gzip_compress_bound(c, text.size()), '\0');
  gz.resize(libdeflate_gzip_compress(c, text.data(), text.size(), gz.data(), gz.size()));
  libdeflate_free_compressor(c);
  gz[gz.size() - 1] = '\xff';  // ISIZE's two high bytes: about 4.29e9 bytes claimed
  gz[gz.size() - 2] = '\xff';
  const std::string path = dir + "/claims.json.gz";
  std::ofstream(path, std::ios::binary).write(gz.data(), static_cast<std::streamsize>(gz.size()));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit r {};
    ::getrlimit(RLIMIT_DATA, &r);
    r.rlim_cur = rlim_t{1} << 30;
    if (::setrlimit(RLIMIT_DATA, &r) != 0) _exit(3);
    ::setenv("SIGHTLINE_MAX_INPUT_SIZE", "16G", 1);
    try {
      StatusOr<std::string> plain = GunzipToString(gz, path);
      StatusOr<Trace> trace = ImportTrace(path);
      const bool ok = !plain.ok() && plain.status().code() == StatusCode::kInvalidInput &&
                      !trace.ok() && trace.status().code() == StatusCode::kInvalidInput;
      _exit(ok ? 0 : 1);
    } catch (...) {
      _exit(2);  // std::bad_alloc: the claimed size was allocated
    }
  }
  ExpectChildSucceeded(pid);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// `-o /dev/null` and other special files: written in place. A temporary file renamed over them
// would replace the device with a regular file (as root, /dev/null itself). Checked on a FIFO.
TEST(AtomicOutput, SpecialFilesAreWrittenInPlace) {
  const std::string dir = testing::MakeTempDir();
  const std::string fifo = dir + "/out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Held open for reading (and writing, so the writer's open does not block) while written.
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFileAtomically(fifo, "report\n").ok());
  {
    StatusOr<AtomicFileWriter> w = AtomicFileWriter::Open(fifo);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Append("more\n").ok());
    ASSERT_TRUE(w->Commit().ok());
  }
  char buf[64] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "report\nmore\n");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  EXPECT_FALSE(std::filesystem::exists(fifo + ".tmp"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Every kernel carrying the correlation id of one cudaLaunchKernel: linked, and counted.
TEST(Reliability, KernelsSharingOneLaunchCallAreCounted) {
  TraceFixture f;
  f.Api("cudaLaunchKernel", 0, 1'000, ApiKind::kRuntime, {}, 7);
  for (int i = 0; i < 4; ++i) f.Kernel("k", 2'000 + i * 1'000, 2'500 + i * 1'000, {}, 7);
  f.Api("cudaGraphLaunch", 10'000, 11'000, ApiKind::kRuntime, {},
        8);  // a graph's kernels share its launch: fine
  for (int i = 0; i < 3; ++i) f.Kernel("g", 12'000 + i * 1'000, 12'500 + i * 1'000, {}, 8);
  const Trace t = f.Build();
  EXPECT_EQ(t.diagnostics.Count(DiagCode::kSharedLaunchCall), 3);
}

// A kernel table the reader did not find (renamed in an nsys export): the launches are there and
// no kernel is; that is said, and no finding reads the GPU as idle.
TEST(Reliability, LaunchesWithoutKernelsAreSaidAndNoGpuFindingFollows) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/renamed.sqlite";
  std::filesystem::copy_file(
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite", path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO "
                         "CUPTI_ACTIVITY_KIND_KERNEL_V2",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->kernels.size(), 0u);
  EXPECT_GT(t->diagnostics.Count(DiagCode::kLaunchesWithoutKernels), 15'000);
  testing::CliResult r = testing::RunSightline("analyze --format json '" + path + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"findings\": []"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("launches_without_kernels"), std::string::npos);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Thousands of kernels of days each, every one within the trace's window, add up to more than
// 2^63 ns: every total and share of them would saturate (shares of 137% and a negative kernel
// time in the report before). The trace is refused with what is wrong, exit 2 from the CLI.
TEST(Reliability, TraceWhoseKernelSumsPastInt64IsRefused) {
  const std::string dir = testing::MakeTempDir();
  std::string json = R"({"schemaVersion": 1, "traceEvents": [)";
  const int n = 8000;
  const double center_us = (std::ldexp(1.0, 49) + 1e12) / 1000,
               half_us = std::ldexp(1.0, 49) * 0.98 / 1000;
  const double dur_us = std::ldexp(1.0, 50) * 1.4 / 1000;
  for (int i = 0; i < n; ++i) {
    json += fmt::format(
        R"({}{{"ph": "X", "cat": "kernel", "name": "k{}", "pid": 0, "tid": 7, "ts": {:.3f}, "dur": {:.3f}, "args": {{"device": 0, "stream": 7}}}})",
        i ? ",\n" : "", i % 2, center_us - half_us + i * (2 * half_us / (n - 1)), dur_us);
  }
  json += "]}";
  const std::string path = dir + "/sums.json";
  std::ofstream(path) << json;
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(t.status().message().find("the durations of its 8000 kernels add up to more than 2^63"),
            std::string::npos)
      << t.status().message();
  testing::CliResult r = testing::RunSightline("analyze '" + path + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace sightline
