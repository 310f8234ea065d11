// ns per call of the clocks a tracer reads on every record (overhead study,
// docs/evidence/recorder/run9_h100_clocks.txt). Built with the recorder (target clock_bench); run
// on the GPU machine, no arguments.
#include <cuda.h>
#include <cupti.h>
#include <time.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdio>
template <class F>
double Time(F f) {
  const int n = 2000000;
  auto t0 = std::chrono::steady_clock::now();
  unsigned long long sink = 0;
  for (int i = 0; i < n; ++i) sink += f();
  auto t1 = std::chrono::steady_clock::now();
  if (sink == 42) std::puts("");
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}
static unsigned long long Clock(clockid_t id) {
  timespec t;
  clock_gettime(id, &t);
  return t.tv_nsec;
}
int main() {
  cuInit(0);
  std::printf("cuptiGetTimestamp %.1f ns\n", Time([] {
                uint64_t t;
                cuptiGetTimestamp(&t);
                return t;
              }));
  std::printf("CLOCK_REALTIME %.1f ns\n", Time([] { return Clock(CLOCK_REALTIME); }));
  std::printf("CLOCK_MONOTONIC %.1f ns\n", Time([] { return Clock(CLOCK_MONOTONIC); }));
  std::printf("CLOCK_MONOTONIC_RAW %.1f ns\n", Time([] { return Clock(CLOCK_MONOTONIC_RAW); }));
  std::printf("rdtsc %.1f ns\n", Time([] { return (unsigned long long)__rdtsc(); }));
}
