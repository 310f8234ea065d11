#!/bin/bash
# Session 28, device call 1 (LIMIT=540): the serving loop with many small CUDA graphs
# (graph_serving_loop.py), its first run, then every tracer and mode in one process
# (window_bench.py), up to 5 repetitions. (As run, the last part's lines were inline;
# cuda/recorder/tools/window_call.sh now holds them.)
set -u
export T0=$(date +%s)
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
(cd examples/programs && timeout 90 taskset -c 2-9 python3 graph_serving_loop.py --steps 2000 2>&1 | tail -3)
(cd examples/programs && timeout 90 taskset -c 2-9 python3 graph_serving_loop.py --steps 2000 --window-every 250 2>&1 | tail -3)
echo "plain runs: $(( $(date +%s) - T0 )) s"
bash cuda/recorder/tools/window_call.sh graph_serving \
  "none sl_graph nsys_graph sl_node nsys_node sl_sampled16" 5
