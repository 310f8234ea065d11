#!/bin/bash
# Session 20, four H200s: correctness and the 1-D sweeps at world 4 with this session's kernels
# (pipelined two-shot, Lamport, quantizing fusions), then world 3 (a world that splits unevenly).
# World 4: stage check (every strategy x dtype x mode, push and pull, fused shapes, odd row counts),
# quant (the three quantizing fusions bit for bit against the CPU reference, and their timing at
# four shapes), lamport (Lamport checks against ncclAllReduce, two 1K..1M sweeps), big (two-shot
# vs NCCL 8M..256M with the peer-copy probes), lamportgrid (Lamport alone up to 16 MB cells).
# World 3: quickcheck. One deadline; CSVs and logs in $OUT/results.tar.gz.
set -u
cd "$(dirname "$0")/../../../.."
O=${OUT:-/tmp/s20}
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0
T0=$(date +%s)
[ -x /tmp/bg/allreduce/sightline-allreduce-bench ] && export BIN=/tmp/bg/allreduce/sightline-allreduce-bench
PLAN="${PLAN:-4:check+quant+lamport+big+lamportgrid 3:quickcheck}" \
  bash cuda/allreduce/run_worlds.sh "$O" "${SECS:-560}" 2>&1 | grep -v '^skip'
echo "all after $(( $(date +%s) - T0 )) s"
