#!/usr/bin/env bash
# README command 1: install what building and running the sightline binary needs, build the binary
# alone, quickly, into build-sample/, and analyze the shipped sample trace. The test command builds
# everything, optimized and with debug info, into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh sample
# The quickest cold build of the CLI (docs/PERFORMANCE.md, "The first command"): the stages in unity
# batches, -O1 without debug info, no tests, benchmarks, GPU or MPI parts.
config=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
        -DSIGHTLINE_BUILD_TESTS=OFF -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_MPI=OFF)
cmake -S . -B build-sample "${config[@]}" -DSIGHTLINE_UNITY_BUILD=ON >/dev/null
if ! cmake --build build-sample -j "$(nproc)" --target sightline; then
  # Two files of one stage that define the same name in their anonymous namespaces cannot share a
  # batch: list the later one in src/CMakeLists.txt (SIGHTLINE_UNITY_SKIP). Meanwhile, file by file.
  if [ "${SIGHTLINE_UNITY_STRICT:-0}" = 1 ]; then
    echo "run-sample: the unity build failed (above); SIGHTLINE_UNITY_STRICT=1 (CI): stopping" >&2
    exit 1
  fi
  echo "run-sample: the unity build failed (above); building file by file" >&2
  cmake -S . -B build-sample "${config[@]}" -DSIGHTLINE_UNITY_BUILD=OFF >/dev/null
  cmake --build build-sample -j "$(nproc)" --target sightline
fi
sample=examples/samples/llama_decode_h100.nsys.sqlite
./build-sample/src/sightline analyze "$sample" "$@"
