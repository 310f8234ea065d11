#!/usr/bin/env bash
# Long libFuzzer runs on a machine with many cores (docs/evidence/fuzzing/, issue 17: at least 10^7
# executions per reader): each target runs as JOBS parallel libFuzzer jobs (default: one per core)
# sharing one corpus, until they have made RUNS executions together or SECONDS have passed.
#   scripts/fuzz_long.sh FUZZ_DIR SEEDS_DIR OUT_DIR SECONDS TARGET...
# FUZZ_DIR holds the target binaries (build-asan/fuzz/ of scripts/fuzz.sh), SEEDS_DIR the seeds
# (build-asan/fuzz-seeds/); a TARGET fuzz_reader.<reader> runs fuzz_reader on that reader. Prints one line per target: executions (the jobs' final stats summed),
# executions per second, crashes; a crash's input is kept in OUT_DIR/TARGET/.
set -uo pipefail
fuzz_dir=$1 seeds=$2 out=$3 seconds=$4
shift 4
jobs=${JOBS:-$(nproc)}
runs=${RUNS:-10000000}
source "$(dirname "$0")/fuzz_env.sh"
for t in "$@"; do
  work=$out/$t
  mkdir -p "$work/corpus"
  max_len=65536
  [ "$t" = fuzz_reader.nsys-sqlite ] && max_len=131072
  bin=${t%%.*}  # fuzz_reader.<reader>: the reader target on that reader (scripts/fuzz.sh)
  if [ "$bin" = fuzz_reader ]; then export SIGHTLINE_FUZZ_READER=${t#fuzz_reader.}; fi
  start=$(date +%s)
  (cd "$work" && "$fuzz_dir/$bin" corpus "$seeds/$t" -jobs="$jobs" -workers="$jobs" \
    -runs=$(( (runs + jobs - 1) / jobs )) -max_total_time="$seconds" -max_len="$max_len" \
    "${FUZZ_FLAGS[@]}" -artifact_prefix="$work/" \
    > "$work/driver.log" 2>&1)
  rc=$?
  took=$(( $(date +%s) - start ))
  execs=$(cat "$work"/fuzz-*.log 2>/dev/null | awk '/^stat::number_of_executed_units/ {s += $2} END {print s + 0}')
  crashes=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  echo "$t: $execs executions in $took s ($(( execs / (took > 0 ? took : 1) ))/s, $jobs jobs), crashes $crashes, rc $rc"
  if [ "$crashes" -gt 0 ]; then
    grep -h -A12 "ERROR: \|runtime error" "$work"/fuzz-*.log | head -40
  fi
done
