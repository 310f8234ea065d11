#!/usr/bin/env bash
# README command 1: install what is missing, build, and analyze the shipped sample trace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
sample=examples/samples/llama_decode_h100.nsys.sqlite
./build/src/sightline analyze "$sample" "$@"
