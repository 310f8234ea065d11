#!/bin/bash
# Session 20, four H200s (nvidia-h200-x4): the 2-D sweeps the tuned table's world 4 is made from,
# with the pipelined two-shot (default --pipeline 4), Lamport and the quantizing fusions: stage grid
# (nccl, oneshot, twoshot, lamport x none, residual_rmsnorm) and stage quantgrid (nccl, oneshot,
# twoshot x the three quantizing fusions), eager + graph, bf16, every configuration verified before
# and after timing. CSVs and logs in $OUT/s20_ar1.tgz.
set -u
cd "$(dirname "$0")/../../../.."
O=${OUT:-/tmp/s20}
W=/tmp/s20g; mkdir -p "$W/g" "$O"
export NCCL_NVLS_ENABLE=0
T0=$(date +%s)
DEADLINE=$(( T0 + ${SECS:-575} )) NP=4 STAGES="${STAGES:-grid quantgrid}" MIN_GRID_S=60 \
  bash cuda/allreduce/run_on_gpu.sh "$W/g" > "$W/grid_run.log" 2>&1
echo "rc=$? after $(( $(date +%s) - T0 )) s"
grep -E "^==|FAIL|configurations|built in|rror" "$W/grid_run.log" | grep -v '^skip' | head -30
grep -v '^skip' "$W/grid_run.log" | tail -60
tar czf "$O/s20_ar1.tgz" -C "$W" .
