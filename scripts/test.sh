#!/usr/bin/env bash
# README command 2: install what is missing, build everything, and run all tests (what CI runs);
# then the CPU side again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/), its
# tests run the same way. SIGHTLINE_SKIP_SANITIZE=1 leaves the second build out (a quicker local run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${SIGHTLINE_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_SANITIZE=ON \
    -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j "$(nproc)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 900
fi
