#!/bin/bash
# Session 20, four H200s: the library (libsightline_allreduce) with the table regenerated from this
# session's world-4 sweeps: the quick check, then sightline-allreduce-lib-test and the PyTorch
# example at world 4 (the table's own world) and world 3 (looked up in world 4's tables).
# CSVs and logs in $OUT/results.tar.gz.
set -u
cd "$(dirname "$0")/../../../.."
O=${OUT:-/tmp/s20}
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0
T0=$(date +%s)
PLAN="${PLAN:-4:quickcheck+lib 3:lib}" bash cuda/allreduce/run_worlds.sh "$O" "${SECS:-540}" 2>&1 | grep -v '^skip'
for w in 4 3; do
  echo "=== world $w: lib test and example"
  grep -v '^  ' /tmp/allreduce-worlds/w$w/lib_test_w$w.log 2>/dev/null | tail -30
  grep -v -E 'Warning|warn\(' /tmp/allreduce-worlds/w$w/torch_example_w$w.log 2>/dev/null | tail -15
done
echo "all after $(( $(date +%s) - T0 )) s"
