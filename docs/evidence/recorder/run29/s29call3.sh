#!/bin/bash
# Session 29, device call 3: the same for the eager program in blocks of 2 (hf_eager_b2),
# node modes (ours, nsys's, no profiler), up to 3 repetitions.
set -u
T0=$(date +%s)
mkdir -p $OUT/w
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
left=$(( ${LIMIT:-560} - ($(date +%s) - T0) ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=3 BUDGET_S=$left \
  WORKLOADS="hf_eager_b2" MODES="sl_node none nsys_node" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "^  rep [0-9]" $OUT/w/window_log.txt | sed -E "s/, 'cpu_out_ms.*//" | cut -c1-160
grep -E "^== |build rc|Traceback|Error" $OUT/w/log.txt | head -5
sed -n '/==== in-process/,$p' $OUT/w/window_log.txt
echo "total: $(( $(date +%s) - T0 )) s"
