#!/bin/bash
# Session 19, two H200s: the 2-D sweeps the tuned table is made from, with the pipelined two-shot
# (default --pipeline 4): stage grid (nccl, oneshot, twoshot, lamport x none, residual_rmsnorm) and
# stage quantgrid (nccl, oneshot, twoshot x the three quantizing fusions), eager + graph, bf16.
set -u
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/s19}
W=/tmp/s19g; mkdir -p "$W/g"
export NCCL_NVLS_ENABLE=0
DEADLINE=$(( $(date +%s) + 550 )) NP=2 STAGES="grid quantgrid" MIN_GRID_S=60 \
  bash cuda/allreduce/run_on_gpu.sh "$W/g" > "$W/grid_run.log" 2>&1
echo "rc=$?"
grep -E "^==|FAIL|configurations|built in|skipped" "$W/grid_run.log" | head -20
tail -40 "$W/grid_run.log"
tar czf "$O/s19_ar3.tgz" -C "$W" .
