#!/usr/bin/env bash
# Configures and builds Sightline (Release-with-debug-info) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# SIGHTLINE_CMAKE_ARGS: extra options (scripts/test.sh adds -DSIGHTLINE_WERROR=ON).
# shellcheck disable=SC2086
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${SIGHTLINE_CMAKE_ARGS:-} >/dev/null
# SIGHTLINE_BUILD_TARGETS: only these targets.
# shellcheck disable=SC2086
cmake --build build -j "$(nproc)" ${SIGHTLINE_BUILD_TARGETS:+--target $SIGHTLINE_BUILD_TARGETS}
