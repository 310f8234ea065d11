#!/usr/bin/env bash
# README command 2: install what is missing, build everything with warnings as errors (build/), and
# run every test. CI (.ci/run) runs this, then scripts/sanitize.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SIGHTLINE_CMAKE_ARGS="-DSIGHTLINE_WERROR=ON" bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
