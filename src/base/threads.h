// Threads where the system may refuse them or give them little stack: a pool takes the threads it
// can get and does the rest of the work on the calling thread (ulimit -u, little memory), and a
// small stack limit (ulimit -s 128) does not become a crash (docs/reliability.md, "Resources").
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace sightline {

// Starts fn on a new thread appended to pool. False, with nothing started, when the system
// refuses the thread (std::system_error): the caller then does the work itself.
bool TryStartThread(std::vector<std::thread>& pool, std::function<void()> fn);

// For tests: the next n calls of TryStartThread fail as if the system refused them.
void FailThreadStartsForTesting(int n);

// The stack every thread gets at least: the main thread's usual 8 MiB.
inline constexpr size_t kMinThreadStackBytes = size_t{8} << 20;

// Runs body with at least kMinThreadStackBytes of stack and returns its result: on this thread
// when the stack limit (RLIMIT_STACK) allows that much, else on a new thread given that stack
// (the limit holds only the main thread's stack); on this thread too when no thread can be made.
// Also raises the default stack of threads created later (which glibc takes from the same limit)
// to kMinThreadStackBytes. For main().
int RunWithEnoughStack(const std::function<int()>& body);

}  // namespace sightline
