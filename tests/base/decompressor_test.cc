// Decompression counts against the input limit before it takes memory, says which compression it
// is, and says what is wrong with a damaged file (docs/reliability.md, rule 7; issue 53).
#include "base/decompressor.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/input_limits.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/sanitizers.h"

namespace sightline {
namespace {

std::string Gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 19));
  return out;
}

// `head` then `mib` MiB of JSON blanks, as that many compressed pieces (members, frames) of one
// MiB each: a bomb of any size in little time.
std::string Bomb(Compression c, const std::string& head, int mib) {
  const std::string blanks(size_t{1} << 20, ' ');
  const std::string piece = c == Compression::kGzip ? Gzip(blanks) : Zstd(blanks);
  std::string out = c == Compression::kGzip ? Gzip(head) : Zstd(head);
  for (int i = 0; i < mib; ++i) out += piece;
  return out;
}

std::string Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

class DecompressorTest : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv(kMaxInputSizeEnv); }
};

void ExpectChildExitsZero(pid_t pid) {
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

long PeakRssKib() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Before, UnzstdToString doubled its output buffer before looking at the limit: a 1 GiB limit
// let a zstd bomb take 4.3 GB; the gzip readers filled a buffer of the limit's size first. Now
// the content is counted before any of it is kept: a 512 MiB bomb against a 256 MiB limit stops
// having grown the process by less than 64 MiB (its compressed bytes and a scratch buffer).
TEST_F(DecompressorTest, BombsStopAtTheLimitWithoutTakingItsMemory) {
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    const std::string bomb = Bomb(c, R"({"traceEvents": [)", 512);
    ASSERT_LT(bomb.size(), size_t{8} << 20);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setenv(kMaxInputSizeEnv, "256M", 1);
      const long before = PeakRssKib();
      StatusOr<std::string> s = DecompressToString(c, bomb, "bomb");
      const long grown_kib = PeakRssKib() - before;
      const std::string m = s.ok() ? "" : s.status().message();
      const std::string name = CompressionName(c);
      const bool ok = !s.ok() && s.status().code() == StatusCode::kInvalidInput &&
                      m.find("the " + name + " data") != std::string::npos &&
                      m.find(name + " bomb") != std::string::npos &&
                      m.find("more than 268435456 bytes") != std::string::npos &&
                      m.find(c == Compression::kZstd ? "gzip" : "zstd") == std::string::npos;
      if (!ok) std::fprintf(stderr, "%s: %s\n", name.c_str(), m.c_str());
      if (grown_kib >= 64 * 1024)
        std::fprintf(stderr, "%s: grew by %ld KiB\n", name.c_str(), grown_kib);
      _exit(ok && grown_kib < 64 * 1024 ? 0 : 1);
    }
    ExpectChildExitsZero(pid);
  }
}

// The content is exact however it is read: members and frames one after another, zero padding
// after the last gzip member, a skippable zstd frame, read a few bytes at a time.
TEST_F(DecompressorTest, ContentIsExactInAnyPieces) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"name\": \"kernel_" + std::to_string(i) + "\"},\n";
  const std::string a = text.substr(0, 100000), b = text.substr(100000);
  const std::string skippable("\x50\x2a\x4d\x18\x03\x00\x00\x00xyz", 11);
  const std::pair<Compression, std::string> inputs[] = {
      {Compression::kGzip, Gzip(a) + Gzip(b) + std::string(100, '\0')},
      {Compression::kGzip, Gzip(text)},
      {Compression::kZstd, Zstd(a) + skippable + Zstd(b)},
  };
  for (const auto& [c, bytes] : inputs) {
    StatusOr<std::string> whole = DecompressToString(c, bytes, "x");
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ(*whole, text);
    StatusOr<std::unique_ptr<Decompressor>> d = Decompressor::OverBytes(c, bytes, "x", 1 << 30);
    ASSERT_TRUE(d.ok());
    std::string pieces;
    char buf[7];
    for (size_t n = 1;; n = n % 7 + 1) {
      StatusOr<size_t> got = (*d)->Read(buf, n);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      if (*got == 0) break;
      pieces.append(buf, *got);
    }
    EXPECT_EQ(pieces, text);
  }
}

// Damaged files say what is wrong, and where. Before, a truncated zstd frame and a gzip file with
// a 20 MB file name in its header were both "the file is (once decompressed) empty".
TEST_F(DecompressorTest, DamagedFilesSayWhatIsWrong) {
  const std::string dir = testing::MakeTempDir();
  const std::string json = R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2}]})";
  const std::string zst = Zstd(json);
  const std::string cut_zst = Write(dir, "cut.json.zst", zst.substr(0, zst.size() - 5));
  // A file name of 20 MB in the header (FNAME), then a valid deflate stream and trailer.
  std::string fname = Gzip(json);
  fname[3] = 0x08;  // FLG.FNAME
  fname.insert(10, std::string(20 << 20, 'a') + '\0');
  const std::string long_name = Write(dir, "name.json.gz", fname);
  const std::string garbage = Write(dir, "garbage.json.gz", Gzip(json) + "trailing junk");
  struct Case {
    std::string path;
    std::string says;
  };
  for (const Case& k :
       {Case{cut_zst, "the zstd data is truncated: the file ends inside a zstd frame"},
        Case{long_name,
             "the gzip header's file name field (FNAME) runs on for more "
             "than 65536 bytes"},
        Case{garbage, "bytes that are not gzip data follow the compressed data"}}) {
    StatusOr<std::string> whole = ReadInput(k.path);
    ASSERT_FALSE(whole.ok()) << k.path;
    EXPECT_EQ(whole.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(whole.status().message().find(k.says), std::string::npos) << whole.status().message();
    EXPECT_EQ(whole.status().message().find(k.path), 0u) << whole.status().message();
    if (k.path == garbage) continue;  // the head ends before the garbage
    // Recognising the format reads the head: the same message, not "empty".
    StatusOr<InputHead> head = ReadInputHead(k.path, 64 << 10);
    ASSERT_FALSE(head.ok()) << k.path;
    EXPECT_NE(head.status().message().find(k.says), std::string::npos) << head.status().message();
  }
}

// In a process allowed 1 GiB of address space (`ulimit -v 1048576`), bombs of 16 GiB end with
// the limit's message and exit 2 (before: std::bad_alloc, SIGABRT), from the CLI.
TEST_F(DecompressorTest, SixteenGigabyteBombsUnderUlimitEndWithTheLimitsMessage) {
  if (testing::kUnderSanitizer)
    GTEST_SKIP() << "an address-space limit needs a build without sanitizers";
  const std::string dir = testing::MakeTempDir();
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    const std::string name = CompressionName(c);
    const std::string bomb =
        Write(dir, "bomb.json." + std::string(c == Compression::kGzip ? "gz" : "zst"),
              Bomb(c, R"({"traceEvents": [)", 16 << 10));
    const std::string out = dir + "/stdout", err = dir + "/stderr";
    const std::string cmd = "bash -c \"ulimit -v 1048576; exec '" + std::string(SIGHTLINE_BINARY) +
                            "' analyze '" + bomb + "'\" >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << name << ": " << testing::Slurp(err);
    EXPECT_EQ(WEXITSTATUS(status), 2) << name << ": " << testing::Slurp(err);
    const std::string e = testing::Slurp(err);
    EXPECT_NE(e.find("the " + name + " data"), std::string::npos) << e;
    EXPECT_NE(e.find("ulimit -v"), std::string::npos) << e;
    EXPECT_EQ(testing::Slurp(out), "");
  }
}

}  // namespace
}  // namespace sightline
