#!/usr/bin/env bash
# Configures build-asan/: clang, AddressSanitizer + UndefinedBehaviorSanitizer at -O1, the tests and
# the libFuzzer targets (SIGHTLINE_FUZZ) compiled from the same objects; warnings are errors. Used by
# scripts/sanitize.sh (CI) and scripts/fuzz.sh, so both build the one sanitizer configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
# A build-asan/ configured with another compiler (GCC, before clang built it) is started afresh.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER_ID:.*Clang\|^CMAKE_CXX_COMPILER:.*clang' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CXX=${CXX:-clang++} cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIGHTLINE_FUZZ=ON -DSIGHTLINE_WERROR=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF \
  >/dev/null
