// Threads where the system refuses them or gives them little stack (docs/reliability.md,
// "Resources"; issue 53).
#include "base/threads.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace sightline {
namespace {

TEST(Threads, ARefusedThreadIsFalseNotAnException) {
  std::vector<std::thread> pool;
  int ran = 0;
  FailThreadStartsForTesting(1);
  EXPECT_FALSE(TryStartThread(pool, [&] { ++ran; }));
  EXPECT_TRUE(pool.empty());
  EXPECT_TRUE(TryStartThread(pool, [&] { ++ran; }));
  ASSERT_EQ(pool.size(), 1u);
  pool[0].join();
  EXPECT_EQ(ran, 1);
}

// Uses about `kib` KiB of stack.
int Deep(int kib) {
  volatile char frame[1024];
  std::memset(const_cast<char*>(frame), kib & 0x7f, sizeof frame);
  return kib == 0 ? frame[0] : Deep(kib - 1) + (frame[kib % 1024] & 1);
}

// Under a 128 KiB stack limit, a body that needs 2 MiB of stack runs (on a thread given the usual
// 8 MiB); before, `sightline analyze` of any trace ended in SIGSEGV under `ulimit -s 128`.
TEST(Threads, RunWithEnoughStackOutlivesASmallStackLimit) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit r {};
    ::getrlimit(RLIMIT_STACK, &r);
    r.rlim_cur = 128 << 10;
    if (::setrlimit(RLIMIT_STACK, &r) != 0) _exit(3);
    size_t stack = 0;
    const int rc = RunWithEnoughStack([&stack] {
      pthread_attr_t attr;
      if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &stack);
        pthread_attr_destroy(&attr);
      }
      return Deep(2048) >= 0 ? 0 : 1;
    });
    _exit(rc == 0 && stack >= kMinThreadStackBytes ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace sightline
