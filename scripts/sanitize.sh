#!/usr/bin/env bash
# The sanitizer stages of CI (.ci/run runs them after scripts/test.sh; docs/testing.md):
#  1. build-asan/: the CPU side with clang under AddressSanitizer + UndefinedBehaviorSanitizer, the
#     tests and the libFuzzer targets from the same objects; every test runs there;
#  2. every fuzz target for a fixed number of executions from the committed seeds, into a fresh
#     corpus (scripts/fuzz.sh --ci), so that one commit gives one verdict on every machine;
#  3. build-tsan/: the tests of the code that runs on several threads under ThreadSanitizer.
# SIGHTLINE_SKIP_ASAN=1, SIGHTLINE_SKIP_FUZZ=1, SIGHTLINE_SKIP_TSAN=1 leave a stage out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
stage() { echo "== sanitize.sh: $1 ($(date +%T))"; }
if [ "${SIGHTLINE_SKIP_ASAN:-0}" != 1 ] || [ "${SIGHTLINE_SKIP_FUZZ:-0}" != 1 ]; then
  stage "build-asan (clang, ASan + UBSan, tests and fuzz targets)"
  bash scripts/configure-asan.sh
  cmake --build build-asan -j "$jobs"
fi
if [ "${SIGHTLINE_SKIP_ASAN:-0}" != 1 ]; then
  stage "tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900
fi
if [ "${SIGHTLINE_SKIP_FUZZ:-0}" != 1 ]; then
  stage "fuzz targets, fixed executions"
  bash scripts/fuzz.sh --ci
fi
if [ "${SIGHTLINE_SKIP_TSAN:-0}" != 1 ]; then
  stage "build-tsan (clang, ThreadSanitizer, the threaded code's tests)"
  CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_TSAN=ON \
    -DSIGHTLINE_WERROR=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_MPI=OFF \
    >/dev/null
  cmake --build build-tsan -j "$jobs" --target sightline_threaded_tests
  stage "threaded tests under TSan"
  # SIGHTLINE_NSYS_THREADS=1: every export, however small, is read by the nsys reader's workers.
  # ../shared/traces, where present, adds the real multi-rank traces (as ctest sets it).
  SIGHTLINE_SHARED_TRACES=${SIGHTLINE_SHARED_TRACES:-$PWD/../shared/traces} \
    SIGHTLINE_NSYS_THREADS=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    build-tsan/tests/sightline_threaded_tests
fi
stage "done"
