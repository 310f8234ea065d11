#!/bin/bash
# Session 27, device call 3: gpu_checks.py graph (whole graphs with windows), then more
# repetitions of the in-process bench (compiled: graph, sampled, node; eager: node).
set -u
T0=$(date +%s)
mkdir -p $OUT/g $OUT/w
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
OUT=$OUT/g bash cuda/recorder/tools/run_on_gpu.sh graph > /dev/null 2>&1
grep -E "PASS|FAIL" $OUT/g/log.txt
echo "checks: $(( $(date +%s) - T0 )) s"
left=$(( ${LIMIT:-560} - ($(date +%s) - T0) - 120 ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=3 BUDGET_S=$left \
  WORKLOADS="hf_static" MODES="nsys_graph sl_node none sl_graph nsys_node sl_sampled16" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
left=$(( ${LIMIT:-560} - ($(date +%s) - T0) ))
[ $left -gt 100 ] && OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=1 BUDGET_S=$left \
  WORKLOADS="hf_eager" MODES="nsys_node none sl_node" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "rep [0-9]|====|^-- |^   " $OUT/w/window_log.txt | tail -24
echo "total: $(( $(date +%s) - T0 )) s"
