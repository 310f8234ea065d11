// Session 28 (helper read): the cost of first touch of fresh anonymous memory on the development VM.
// g++ -O2 -o /tmp/fresh_pages read_fresh_pages.cc; /tmp/fresh_pages (4 KiB pages); /tmp/fresh_pages huge (MADV_HUGEPAGE).
// Three rounds: map 1 GiB, write one byte per 4 KiB page (the first touch), memset it again, unmap.
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  const size_t n = size_t{1} << 30;
  bool huge = argc > 1;
  auto now = [] { return std::chrono::steady_clock::now(); };
  for (int round = 0; round < 3; ++round) {
    char* p = (char*)mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (huge) madvise(p, n, MADV_HUGEPAGE);
    auto t0 = now();
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
    auto t1 = now();
    memset(p, 2, n);
    auto t2 = now();
    std::printf("fresh touch %.3f s (%.2f GB/s), memset again %.3f s\n",
                std::chrono::duration<double>(t1 - t0).count(), 1.0 / std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count());
    munmap(p, n);
  }
}
