#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/testing.md) in build-fuzz/ with clang and runs each for
# SECONDS_PER_TARGET seconds (default 30), one after the other, from the seeds that
# fuzz/gather_seeds.sh collects. Fails at the first crash, leak, sanitizer report, timeout or
# out-of-memory; the input that caused it is left in build-fuzz/artifacts/<target>/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      e.g. scripts/fuzz.sh 600 fuzz_recorder
# SIGHTLINE_FUZZ_SEED=N fixes libFuzzer's seed (scripts/test.sh uses 1).
# Corpora grown by earlier runs are kept in build-fuzz/corpus/<target>/ and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_nsys_sqlite fuzz_nsys_rows fuzz_kineto_json fuzz_kineto_gzip fuzz_recorder
           fuzz_ncu_csv fuzz_sweep_csv fuzz_iteration_log fuzz_requests fuzz_trt
           fuzz_gpu_metrics_config fuzz_torch_snapshot)
fi
jobs=${SIGHTLINE_FUZZ_BUILD_JOBS:-$(nproc)}
# SIGHTLINE_FUZZ_SEED: libFuzzer's random seed (0 = a new one each run, libFuzzer's default).
# scripts/test.sh fixes it, so that CI explores the same inputs on every run and a failure there
# reproduces: new ground is covered by the long runs, not by CI.
seed=${SIGHTLINE_FUZZ_SEED:-0}

CXX=${CXX:-clang++} cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIGHTLINE_FUZZ=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_TESTS=OFF \
  -DSIGHTLINE_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$jobs" --target "${targets[@]}"
bash fuzz/gather_seeds.sh build-fuzz/seeds >/dev/null

# Inflated gzip input stays far below the 2 GiB RSS limit: a bomb is then the reader's clear error
# (docs/reliability.md), not an out-of-memory stop of the fuzzer.
export SIGHTLINE_MAX_INPUT_SIZE=256M
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  artifacts=build-fuzz/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  max_len=65536
  [ "$t" = fuzz_nsys_sqlite ] && max_len=131072  # whole small exports
  echo "== $t: ${seconds}s"
  # New inputs go to the first directory (the kept corpus); the seeds are read, never written.
  build-fuzz/fuzz/"$t" "$corpus" "build-fuzz/seeds/$t" -max_total_time="$seconds" -seed="$seed" \
    -max_len="$max_len" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" 2>build-fuzz/"$t".log || {
    tail -n 60 build-fuzz/"$t".log
    echo "fuzz.sh: $t failed; the input is in $artifacts/ (see build-fuzz/$t.log)" >&2
    exit 1
  }
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' build-fuzz/"$t".log
done
