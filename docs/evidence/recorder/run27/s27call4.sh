#!/bin/bash
# Session 27, device call 4: the serving loop with many small CUDA graphs, in one process.
set -u
T0=$(date +%s)
mkdir -p $OUT/w
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
timeout 60 python3 examples/programs/graph_serving_loop.py --steps 2000 2>&1 | tail -3
echo "plain run: $(( $(date +%s) - T0 )) s"
left=$(( ${LIMIT:-215} - ($(date +%s) - T0) ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=2 BUDGET_S=$left \
  WORKLOADS="graph_serving" MODES="none sl_graph nsys_graph sl_node nsys_node sl_sampled16" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "rep [0-9]|====|^-- |^   " $OUT/w/window_log.txt | cut -c1-220 | tail -20
echo "total: $(( $(date +%s) - T0 )) s"
