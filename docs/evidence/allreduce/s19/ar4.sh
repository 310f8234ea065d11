#!/bin/bash
# Session 19, two H200s: main after the merges (the table regenerated, so the library's AUTO now
# takes Lamport for small unfused bf16 calls at world 2; one names table): build, quick check, the
# library's test and the PyTorch example.
set -u
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/s19}
W=/tmp/s19l; mkdir -p "$W/ar"
export NCCL_NVLS_ENABLE=0
NP=2 STAGES="quickcheck lib" timeout 560 bash cuda/allreduce/run_on_gpu.sh "$W/ar" > "$W/run.log" 2>&1
echo "rc=$?"
grep -E "^==|FAIL|PASS|configurations|built in|auto|AUTO" "$W/run.log" | head -40
grep -E "lamport|AUTO|auto" "$W/ar/lib_test_w2.log" | head -20
tar czf "$O/s19_ar4.tgz" -C "$W" .
