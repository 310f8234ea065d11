#!/usr/bin/env bash
# README command 2: install what is missing, build everything, and run all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
