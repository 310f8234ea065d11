#!/usr/bin/env bash
# README command 2: install what is missing, build everything with warnings as errors, and run all
# tests (what CI runs); then the CPU side again under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/), its tests run the same way; then the tests of the code that runs on several threads
# under ThreadSanitizer (build-tsan/); then a short run of every fuzz target (build-fuzz/, clang +
# libFuzzer, SIGHTLINE_FUZZ_SECONDS each, default 60; docs/testing.md).
# SIGHTLINE_SKIP_SANITIZE=1 leaves the ASan build out, SIGHTLINE_SKIP_TSAN=1 the TSan build,
# SIGHTLINE_SKIP_FUZZ=1 the fuzz runs (quicker local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
SIGHTLINE_CMAKE_ARGS="-DSIGHTLINE_WERROR=ON" bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${SIGHTLINE_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_SANITIZE=ON \
    -DSIGHTLINE_WERROR=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j "$(nproc)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 900
fi
if [ "${SIGHTLINE_SKIP_TSAN:-0}" != 1 ]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_TSAN=ON \
    -DSIGHTLINE_WERROR=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_MPI=OFF \
    >/dev/null
  cmake --build build-tsan -j "$(nproc)" --target sightline_tests
  # The nsys reader's worker threads (for every export: SIGHTLINE_NSYS_THREADS=1), the rank
  # threads, one trace's analyses on several threads.
  SIGHTLINE_NSYS_THREADS=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    build-tsan/tests/sightline_tests \
    --gtest_filter='Nsys*:AnalyzeTrace.*:RankPipeline.*:ThreadWorkers.*'
fi
if [ "${SIGHTLINE_SKIP_FUZZ:-0}" != 1 ]; then
  SIGHTLINE_FUZZ_SEED=${SIGHTLINE_FUZZ_SEED:-1} bash scripts/fuzz.sh "${SIGHTLINE_FUZZ_SECONDS:-60}"
fi
