// Unwrapping a StatusOr in a test.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "base/status.h"

namespace sightline::testing {

// The value of `r`. When `r` is an error the test fails here, with the status's message, and the
// value is T{}, so that a helper can return it and the test's own expectations go on (write
// ASSERT_TRUE(r.ok()) instead where nothing after it makes sense without the value).
template <typename T>
T ValueOrDie(StatusOr<T> r) {
  if (!r.ok()) {
    ADD_FAILURE() << r.status().ToString();
    return T{};
  }
  return std::move(r).value();
}

}  // namespace sightline::testing
