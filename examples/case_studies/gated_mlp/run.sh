#!/bin/bash
# The gated-MLP fusion case study on the GPU machine, from the repository root:
#   bash examples/case_studies/gated_mlp/run.sh
# --driver-api: every driver call of cuBLAS's GEMM launches (cuLaunchKernelEx is recorded without it
# too since the recorder fix, gated_mlp/README.md).
# Builds gated_mlp, checks both variants (CPU samples, after against before) and times them at several
# token counts, records before/after with `sightline record` and Nsight Systems at one token count, and
# runs `sightline analyze/diff` on them. Results: $OUT/gated_mlp.tar.gz and $OUT/mlp_log.txt.
cd "$(dirname "$0")/../../.."
source examples/case_studies/common.sh
OUT=${OUT:-/tmp/case-out}
W=/tmp/mlp; R=$W/gated_mlp
rm -rf "$W"; mkdir -p "$R" "$OUT"
here=examples/case_studies/gated_mlp
TOKENS=${MLP_TOKENS:-16,64,256,1024,4096}
REC_TOKENS=${MLP_REC_TOKENS:-256}
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  nvcc $NVCC_FLAGS $here/gated_mlp.cu -o $W/gmlp -lcublas -lcublasLt || exit 1
  echo "== 1. check and time (tokens $TOKENS)"
  $W/gmlp --variant both --tokens $TOKENS | tee $R/timing.txt
  echo "== 1b. the same with each GEMM tuned (fastest cuBLASLt algorithm per shape)"
  $W/gmlp --variant both --tokens $TOKENS --tune | tee $R/timing_tuned.txt
  echo "== 2. sightline record and nsys (tokens $REC_TOKENS)"
  for v in before after; do
    $SL record --capture-range cudaProfilerApi --driver-api -o $R/trace_$v.slrec -- $W/gmlp --variant $v --tokens $REC_TOKENS --iters 20 | tail -1
    nsys_trace $W/nsys_$v $W/gmlp --variant $v --tokens $REC_TOKENS --iters 20
    [ -f $W/nsys_$v.sqlite ] && [ $(stat -c %s $W/nsys_$v.sqlite) -lt 3000000 ] && cp $W/nsys_$v.sqlite $R/trace_$v.nsys.sqlite
    cp $W/nsys_${v}_cuda_gpu_kern_sum.csv $R/ 2>/dev/null
  done
  ls -la $R
  echo "== 2b. recorder check: driver-API launches (cuBLAS's cuLaunchKernelEx) in a capture range"
  for mode in "" "--driver-api"; do
    $SL record --capture-range cudaProfilerApi $mode -o $W/check.slrec -- $W/gmlp --variant after --tokens 64 --iters 3 > /dev/null
    echo "record $mode:"; $SL analyze $W/check.slrec | grep -E "CUDA driver calls|Kernels without a launching call|Kernels launched inside"
  done
  $SL record -o $W/check.slrec -- $W/gmlp --variant after --tokens 64 --iters 3 > /dev/null
  echo "record without capture range:"; $SL analyze $W/check.slrec | grep -E "CUDA driver calls|Kernels without a launching call|Kernels launched inside"
  echo "== 3. sightline on what was made"
  $SL analyze $R/trace_before.slrec > $R/analyze_before.txt 2>&1; echo "analyze rc=$?"
  grep -i -E "chain|fus" $R/analyze_before.txt | head -12
  $SL diff $R/trace_before.slrec $R/trace_after.slrec > $R/diff.txt 2>&1; echo "diff rc=$?"; head -50 $R/diff.txt
  echo "== table"
  grep -E "^(variant|before|after) " $R/timing.txt
  echo "tuned:"; grep -E "^(variant|before|after) " $R/timing_tuned.txt
} 2>&1 | tee $OUT/mlp_log.txt
cp $OUT/mlp_log.txt $R/log.txt
tar -C $W -czf $OUT/gated_mlp.tar.gz gated_mlp
ls -la $OUT
