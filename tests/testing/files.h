// Files for tests: a whole file's bytes, and where the shared real traces are.
#pragma once

#include <string>

namespace sightline::testing {

// The bytes of the file at `path` as they are; "" when it cannot be read (the test's expectations
// on the content then say what is missing).
std::string Slurp(const std::string& path);

// Directory of ../shared/traces beside the source tree (SIGHTLINE_SHARED_TRACES, which ctest
// sets, names another), or "" when it is absent: tests that read it then GTEST_SKIP.
std::string SharedTracesDir();

}  // namespace sightline::testing
