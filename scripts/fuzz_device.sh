#!/usr/bin/env bash
# The many-core fuzz runs (docs/evidence/fuzzing/) on a lent machine (the GPU machine's 16
# cores), where the targets cannot be built: run from the repository root with a packed folder
# beside it,
#   FUZZ_PACK/bin/<target>   the targets of scripts/fuzz.sh (build-asan/fuzz/), strip --strip-debug'd
#   FUZZ_PACK/lib/           the shared libraries they need that the machine lacks (ldd)
#   FUZZ_PACK/seeds/<target> build-asan/fuzz-seeds/;  FUZZ_PACK/corpus/<target>  a corpus to start from
# and OUT set to a folder that comes back:
#   FUZZ_PACK=.device/fuzz OUT=... [RUNS=N] bash scripts/fuzz_device.sh TARGET:SECONDS ...
# Runs each target as one libFuzzer job per core (scripts/fuzz_long.sh, stopping at RUNS executions
# together or SECONDS) and leaves in OUT: summary.txt (executions, rate, crashes, job 0's coverage),
# each target's grown corpus (TARGET-corpus.tgz), job 0's log tail and any crash inputs.
set -u
D=$(cd "${FUZZ_PACK:?set FUZZ_PACK}" && pwd)
export LD_LIBRARY_PATH=$D/lib
W=${FUZZ_WORK:-/tmp/fuzz_device}
mkdir -p "$W" "$OUT"
nproc; lscpu | grep "Model name"
for spec in "$@"; do
  t=${spec%%:*}; s=${spec##*:}
  mkdir -p "$W/$t"
  rm -rf "$W/$t/corpus"
  if [ -d "$D/corpus/$t" ]; then cp -r "$D/corpus/$t" "$W/$t/corpus"; else mkdir -p "$W/$t/corpus"; fi
  JOBS=$(nproc) bash scripts/fuzz_long.sh "$D/bin" "$D/seeds" "$W" "$s" "$t" | tee -a "$OUT/summary.txt"
  grep -h "cov:" "$W/$t/fuzz-0.log" | tail -1 | tee -a "$OUT/summary.txt"
  tail -n 20 "$W/$t/fuzz-0.log" > "$OUT/$t-job0-tail.log"
  tar czf "$OUT/$t-corpus.tgz" -C "$W/$t" corpus
  crashes=$(ls "$W/$t" | grep -E '^(crash|leak|timeout|oom)-' || true)
  if [ -n "$crashes" ]; then tar czf "$OUT/$t-crashes.tgz" -C "$W/$t" $crashes; fi
done
