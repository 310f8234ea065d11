#!/bin/bash
# Session 28, device call 1: the serving loop with many small CUDA graphs (graph_serving_loop.py),
# its first run, then every tracer and mode in one process (window_bench.py), up to 5 repetitions.
set -u
T0=$(date +%s)
mkdir -p $OUT/w
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0
(cd examples/programs && timeout 90 taskset -c 2-9 python3 graph_serving_loop.py --steps 2000 2>&1 | tail -3)
(cd examples/programs && timeout 90 taskset -c 2-9 python3 graph_serving_loop.py --steps 2000 --window-every 250 2>&1 | tail -3)
echo "plain runs: $(( $(date +%s) - T0 )) s"
left=$(( ${LIMIT:-560} - ($(date +%s) - T0) ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=5 BUDGET_S=$left \
  WORKLOADS="graph_serving" MODES="none sl_graph nsys_graph sl_node nsys_node sl_sampled16" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "^  rep [0-9]" $OUT/w/window_log.txt | sed -E "s/, 'cpu_out_ms.*//" | cut -c1-160
grep -E "^== |build rc|Traceback|Error" $OUT/w/log.txt | head -5
sed -n '/==== in-process/,$p' $OUT/w/window_log.txt
echo "total: $(( $(date +%s) - T0 )) s"
