#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/testing.md) in build-asan/ (clang, ASan + UBSan, the one
# sanitizer build: scripts/configure-asan.sh) and runs them, one of two ways:
#   scripts/fuzz.sh --ci [TARGET...]
#       CI's fuzz stage: each target for a fixed number of executions (the table below) with a
#       fixed seed, from the committed seeds only, into a fresh corpus, two targets at a time. The
#       same commit gives the same verdict on any machine; new ground is the long runs' business.
#   scripts/fuzz.sh SECONDS [TARGET...]        e.g. scripts/fuzz.sh 600 fuzz_recorder
#       Exploration: each target for SECONDS, growing the corpus kept in build-asan/fuzz-corpus/.
#       SIGHTLINE_FUZZ_SEED=N fixes libFuzzer's seed (default 0: a new one each run).
# Both fail at the first crash, leak, sanitizer report, timeout (25 s per input) or out-of-memory
# (2 GiB); the input is left in build-asan/fuzz-artifacts/<target>/ and the log's end is printed.
# The targets are the fuzz/fuzz_*.cc files; fuzz_reader runs once per reader of the registry
# (fuzz_reader.<reader>). Long runs on many cores: scripts/fuzz_long.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=explore
if [ "${1:-}" = --ci ]; then
  mode=ci
  shift
else
  seconds=${1:-30}
  shift || true
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.cc; do
    t=$(basename "$f" .cc)
    [ "$t" = fuzz_support ] || targets+=("$t")
  done
fi

# CI's executions per target: the "CI executions: N" line of its source (about 10-20 s each on
# one of the 2-core machine's cores, measured with scripts/fuzz.sh --ci; docs/testing.md); for
# fuzz_reader, per reader. A target without that line gets 10000.
ci_runs() {
  local n
  n=$(grep -m1 -o 'CI executions: [0-9]*' "fuzz/${1%%.*}.cc" 2>/dev/null | grep -o '[0-9]*$' || true)
  echo "${n:-10000}"
}

bash scripts/configure-asan.sh
binaries=()
for t in "${targets[@]}"; do binaries+=("${t%%.*}"); done
# fuzz_reader needed in any case: it classifies the seeds.
cmake --build build-asan -j "${SIGHTLINE_FUZZ_BUILD_JOBS:-$(nproc)}" --target \
  $(printf '%s\n' "${binaries[@]}" fuzz_reader | sort -u)
seeds=build-asan/fuzz-seeds
bash fuzz/gather_seeds.sh "$seeds" build-asan/fuzz/fuzz_reader >/dev/null

# fuzz_reader is run once per reader of the registry: fuzz_reader.<reader> (its seeds, corpus and
# artifacts are kept under that name). Naming one, e.g. fuzz_reader.ncu-csv, runs that reader only.
units=()
for t in "${targets[@]}"; do
  if [ "$t" = fuzz_reader ]; then
    while read -r r; do units+=("fuzz_reader.$r"); done < <(SIGHTLINE_FUZZ_READER=list build-asan/fuzz/fuzz_reader)
  else
    units+=("$t")
  fi
done

source scripts/fuzz_env.sh

# Runs one target; its log goes to build-asan/fuzz-logs/<target>.log.
run_target() {
  local t=$1 corpus artifacts log max_len=65536
  source scripts/fuzz_env.sh  # again: xargs' shells get no arrays
  artifacts=build-asan/fuzz-artifacts/$t
  log=build-asan/fuzz-logs/$t.log
  mkdir -p "$artifacts" build-asan/fuzz-logs
  [ "$t" = fuzz_reader.nsys-sqlite ] && max_len=131072  # whole small exports
  local bin=${t%%.*}
  if [ "$bin" = fuzz_reader ]; then export SIGHTLINE_FUZZ_READER=${t#fuzz_reader.}; fi
  local limit
  if [ "$mode" = ci ]; then
    corpus=build-asan/fuzz-ci-corpus/$t
    rm -rf "$corpus"
    limit=(-runs="$(ci_runs "$t")" -seed=1)
  else
    corpus=build-asan/fuzz-corpus/$t
    limit=(-max_total_time="$seconds" -seed="${SIGHTLINE_FUZZ_SEED:-0}")
  fi
  mkdir -p "$corpus"
  local start=$SECONDS
  # New inputs go to the first directory; the seeds are read, never written.
  if ! build-asan/fuzz/"$bin" "$corpus" "$seeds/$t" "${limit[@]}" -max_len="$max_len" \
    "${FUZZ_FLAGS[@]}" -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz.sh: $t failed; the input is in $artifacts/ (see $log)" >&2
    return 1
  fi
  echo "$t: $(awk '/^stat::number_of_executed_units/ {print $2}' "$log") executions in" \
    "$((SECONDS - start)) s, peak RSS $(awk '/^stat::peak_rss_mb/ {print $2}' "$log") MB"
}

# Two targets at a time (one per core of the 2-core machine), in the order listed.
export mode seeds seconds="${seconds:-0}"
export -f run_target ci_runs
printf '%s\n' "${units[@]}" |
  xargs -P "${SIGHTLINE_FUZZ_JOBS:-$(nproc)}" -I{} bash -c 'run_target "$1"' _ {}
