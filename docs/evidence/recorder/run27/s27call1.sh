#!/bin/bash
# Session 27, device call 1: traced against untraced calls in one process (window_bench.py), the
# compiled HF program in graph, node and sampled modes, then the eager one in node mode.
set -u
T0=$(date +%s)
mkdir -p $OUT/w
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=2 BUDGET_S=${BUDGET:-400} \
  WORKLOADS="hf_static" MODES="none sl_graph nsys_graph sl_node nsys_node sl_sampled16" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
echo "static done: $(( $(date +%s) - T0 )) s"
left=$(( 560 - ($(date +%s) - T0) ))
if [ $left -gt 100 ]; then
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=1 BUDGET_S=$left \
  WORKLOADS="hf_eager" MODES="none sl_node nsys_node" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
fi
grep -E "rep [0-9]|====|^-- |^   " $OUT/w/window_log.txt | tail -40
echo "total: $(( $(date +%s) - T0 )) s"
