#!/usr/bin/env bash
# Rewrites tests/golden/*.json from the current build; review `git diff tests/golden` afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build
SIGHTLINE_UPDATE_GOLDEN=1 ./build/tests/sightline_cli_tests --gtest_filter='Reports/Golden.*'
git status --short tests/golden
