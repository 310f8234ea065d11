#!/usr/bin/env bash
# README command 1: install what is missing, build the sightline binary (only what this needs; the
# test command builds the rest), and analyze the shipped sample trace.
set -euo pipefail
cd "$(dirname "$0")/.."
SIGHTLINE_BUILD_TARGETS=sightline bash scripts/build.sh
sample=examples/samples/llama_decode_h100.nsys.sqlite
./build/src/sightline analyze "$sample" "$@"
