// The recorder's thread names (thread_names.h): read from /proc for a live named thread, asked once
// per thread, empty for a thread that does not exist.
#include "thread_names.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace sightline::recorder {
namespace {

TEST(ThreadNames, NamesALiveThreadOnceAndNotAGoneOne) {
  std::atomic<uint32_t> tid{0};
  std::atomic<bool> done{false};
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "sl-responder");
    tid = static_cast<uint32_t>(syscall(SYS_gettid));
    while (!done) std::this_thread::yield();
  });
  while (tid == 0) std::this_thread::yield();
  const uint32_t pid = static_cast<uint32_t>(getpid());
  EXPECT_EQ(ThreadNameFromProc(pid, tid), "sl-responder");
  ThreadNamer namer;
  EXPECT_EQ(namer.NameIfNew(pid, tid), "sl-responder");
  EXPECT_EQ(namer.NameIfNew(pid, tid), "");  // already named
  done = true;
  worker.join();
  EXPECT_EQ(ThreadNameFromProc(pid, 0x3fffffff), "");  // above pid_max: no such thread
  EXPECT_EQ(namer.NameIfNew(pid, 0), "");              // CUPTI's "no thread"
}

}  // namespace
}  // namespace sightline::recorder
