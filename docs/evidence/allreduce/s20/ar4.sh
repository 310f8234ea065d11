#!/bin/bash
# Session 20, four H200s: the size sweep at world 4 with the current kernels (stage size: 1K..256M
# (x2), bf16/fp16/fp32, the harness's default strategies nccl, oneshot, twoshot, lamport (Lamport up
# to its 1 MB buffers), eager + graph, with the peer-copy probes). CSV and log in $OUT/s20_ar4.tgz.
set -u
cd "$(dirname "$0")/../../../.."
O=${OUT:-/tmp/s20}
W=/tmp/s20s; mkdir -p "$W/s" "$O"
export NCCL_NVLS_ENABLE=0
T0=$(date +%s)
DEADLINE=$(( T0 + ${SECS:-300} )) NP=4 STAGES=size bash cuda/allreduce/run_on_gpu.sh "$W/s" > "$W/size_run.log" 2>&1
echo "rc=$? after $(( $(date +%s) - T0 )) s"
grep -E "^==|FAIL|configurations|built in|rror|peer_copy" "$W/size_run.log" | grep -v '^skip' | head -20
tar czf "$O/s20_ar4.tgz" -C "$W" .
