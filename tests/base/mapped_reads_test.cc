// A mapped input cut shorter while it is read is an error, not SIGBUS (docs/reliability.md,
// rule 7; issue 53).
#include "base/mapped_reads.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "testing/cli_runner.h"
#include "testing/sanitizers.h"

namespace sightline {
namespace {

TEST(MappedReads, APageCutOffWhileMappedReadsAsZerosAndIsReported) {
  if (testing::kUnderSanitizer) GTEST_SKIP() << "the sanitizer handles SIGBUS itself";
  const std::string path = testing::MakeTempDir() + "/export.sqlite";
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::ofstream(path, std::ios::binary) << std::string(3 * page, 'x');
  const MappedReadCheck check(path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, 3 * page, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  const volatile char* bytes = static_cast<const char*>(map);
  EXPECT_EQ(bytes[2 * page], 'x');
  EXPECT_TRUE(check.Check().ok());
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(page)), 0);  // another program cuts it
  EXPECT_EQ(bytes[0], 'x');
  EXPECT_EQ(bytes[page + 10], 0);      // before: SIGBUS
  EXPECT_EQ(bytes[2 * page + 10], 0);  // a second page, noted too
  ::munmap(map, 3 * page);
  ::close(fd);
  const Status s = check.Check();
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("export.sqlite: the file was cut shorter while it was read (2 pages"),
            std::string::npos)
      << s.message();
  // Another file's check is not disturbed.
  const std::string other = testing::MakeTempDir() + "/other.json";
  std::ofstream(other) << "{}";
  EXPECT_TRUE(MappedReadCheck(other).Check().ok());
}

}  // namespace
}  // namespace sightline
