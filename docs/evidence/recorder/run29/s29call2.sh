#!/bin/bash
# Session 29, device call 2: more runs where ours was a little above nsys's at the median in run28:
# compiled HF generate() in graph mode (ours, nsys's, no profiler), up to 3 repetitions.
set -u
T0=$(date +%s)
mkdir -p $OUT/w
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
left=$(( ${LIMIT:-560} - ($(date +%s) - T0) ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=3 BUDGET_S=$left \
  WORKLOADS="hf_static" MODES="sl_graph none nsys_graph" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "^  rep [0-9]" $OUT/w/window_log.txt | sed -E "s/, 'cpu_out_ms.*//" | cut -c1-160
grep -E "^== |build rc|Traceback|Error" $OUT/w/log.txt | head -5
sed -n '/==== in-process/,$p' $OUT/w/window_log.txt
echo "total: $(( $(date +%s) - T0 )) s"
