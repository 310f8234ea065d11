#include "base/threads.h"

#include <pthread.h>
#include <sys/resource.h>

#include <atomic>
#include <system_error>

namespace sightline {
namespace {

std::atomic<int> g_fail_starts{0};

struct Body {
  const std::function<int()>* body;
  int result;
};

void* RunBody(void* arg) {
  Body* b = static_cast<Body*>(arg);
  b->result = (*b->body)();
  return nullptr;
}

// Threads created from now on get at least kMinThreadStackBytes (glibc sizes them by
// RLIMIT_STACK: 128 KiB under `ulimit -s 128`).
void RaiseDefaultThreadStack() {
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return;
  size_t size = 0;
  if (pthread_attr_getstacksize(&attr, &size) == 0 && size < kMinThreadStackBytes &&
      pthread_attr_setstacksize(&attr, kMinThreadStackBytes) == 0) {
    pthread_setattr_default_np(&attr);
  }
  pthread_attr_destroy(&attr);
}

}  // namespace

bool TryStartThread(std::vector<std::thread>& pool, std::function<void()> fn) {
  for (int n = g_fail_starts.load(); n > 0;) {
    if (g_fail_starts.compare_exchange_weak(n, n - 1)) return false;
  }
  try {
    pool.emplace_back(std::move(fn));
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

void FailThreadStartsForTesting(int n) { g_fail_starts = n; }

int RunWithEnoughStack(const std::function<int()>& body) {
  RaiseDefaultThreadStack();
  struct rlimit r {};
  if (::getrlimit(RLIMIT_STACK, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
      r.rlim_cur >= kMinThreadStackBytes) {
    return body();
  }
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return body();
  Body b{&body, 0};
  pthread_t thread;
  const bool started = pthread_attr_setstacksize(&attr, kMinThreadStackBytes) == 0 &&
                       pthread_create(&thread, &attr, &RunBody, &b) == 0;
  pthread_attr_destroy(&attr);
  if (!started) return body();
  pthread_join(thread, nullptr);
  return b.result;
}

}  // namespace sightline
