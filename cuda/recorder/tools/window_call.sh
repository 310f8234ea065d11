#!/bin/bash
# One device call of the in-process tracer comparison (window_bench.py through run_overhead.sh), run
# from the repository root on the GPU machine with the pack of scripts/device_pack.sh in
# .device/pack.tgz and ../shared/device in .device/device:
#   LIMIT=540 bash cuda/recorder/tools/window_call.sh WORKLOADS "MODES" REPS
# Runs WORKLOADS x MODES, interleaved and rotated, pinned to CPUs 2-9 with PYTHONHASHSEED=0, for up
# to REPS repetitions while LIMIT seconds (default 560) from T0 (default: now) last; then prints each
# run's line, the build's and any error's lines, and the summary. Logs in $OUT/w.
set -u
T0=${T0:-$(date +%s)}
workloads=$1
modes=$2
reps=$3
mkdir -p "$OUT/w" .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
left=$(( ${LIMIT:-560} - ($(date +%s) - T0) ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=$reps BUDGET_S=$left \
  WORKLOADS="$workloads" MODES="$modes" bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "^  rep [0-9]" "$OUT/w/window_log.txt" | sed -E "s/, 'cpu_out_ms.*//" | cut -c1-160
grep -E "^== |build rc|Traceback|Error" "$OUT/w/log.txt" | head -5
sed -n '/==== in-process/,$p' "$OUT/w/window_log.txt"
echo "total: $(( $(date +%s) - T0 )) s"
