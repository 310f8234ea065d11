#!/bin/bash
# The FP8 block-quantization case study on the GPU machine, from the repository root:
#   bash examples/case_studies/fp8_block_quant/run.sh
# --driver-api: cuBLAS launches its GEMMs with cuLaunchKernelEx, which the recorder misses inside a
# capture range without it (gated_mlp/README.md).
# Builds fp8_block_quant (nvcc, -lineinfo), checks both kernels against the CPU reference and times the
# layer step (CUDA events, medians), records naive and optimized runs with `sightline record` and Nsight
# Systems, profiles one launch of each kernel with `ncu --set full`, exports the details, raw and
# source pages, and runs `sightline analyze/diff/ncu` on what it made. Results: $OUT/fp8_block_quant.tar.gz
# and $OUT/fp8_log.txt.
cd "$(dirname "$0")/../../.."
source examples/case_studies/common.sh
OUT=${OUT:-/tmp/case-out}
W=/tmp/fp8; R=$W/fp8_block_quant
rm -rf "$W"; mkdir -p "$R" "$OUT"
here=examples/case_studies/fp8_block_quant
ARGS=${FP8_ARGS:-}
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  nvcc $NVCC_FLAGS $here/fp8_block_quant.cu -o $W/fp8q -lcublasLt || exit 1
  echo "== 1. check and time (both variants)"
  $W/fp8q --variant both $ARGS | tee $R/timing.txt
  echo "== 2. sightline record"
  for v in naive opt; do
    $SL record --capture-range cudaProfilerApi --driver-api -o $R/record_$v.slrec -- $W/fp8q --variant $v --iters 40 $ARGS | tail -2
  done
  ls -la $R/*.slrec
  echo "== 3. nsys"
  for v in naive opt; do nsys_trace $W/nsys_$v $W/fp8q --variant $v --iters 40 $ARGS; done
  cp $W/nsys_*_cuda_gpu_kern_sum.csv $R/ 2>/dev/null
  for v in naive opt; do [ -f $W/nsys_$v.sqlite ] && [ $(stat -c %s $W/nsys_$v.sqlite) -lt 3000000 ] && cp $W/nsys_$v.sqlite $R/; done
  echo "== 4. ncu --set full (one launch of each kernel)"
  for v in naive opt; do
    tag=$([ $v = naive ] && echo before || echo after)
    ncu --set full --import-source yes -k regex:quant_ -c 1 -f -o $W/$tag $W/fp8q --variant $v --iters 1 --warmup 0 $ARGS > $W/ncu_$tag.log 2>&1
    tail -3 $W/ncu_$tag.log
    ncu --import $W/$tag.ncu-rep --page details --csv > $R/ncu_$tag.csv
    ncu --import $W/$tag.ncu-rep --page raw --csv > $R/ncu_${tag}_raw.csv
    ncu --import $W/$tag.ncu-rep --page source --csv --print-source sass > $R/ncu_${tag}_source_sass.csv
    ncu --import $W/$tag.ncu-rep --page source --csv --print-source cuda,sass > $R/ncu_${tag}_source_cuda_sass.csv
    ncu --import $W/$tag.ncu-rep --page source --csv --print-source cuda > $R/ncu_${tag}_source_cuda.csv
    cp $W/$tag.ncu-rep $R/
  done
  ls -la $R
  echo "== 5. sightline on what was made"
  $SL analyze $R/record_naive.slrec > $R/analyze_naive.txt 2>&1; echo "analyze rc=$?"
  grep -i -E "quant|small grid" $R/analyze_naive.txt | head -12
  $SL diff $R/record_naive.slrec $R/record_opt.slrec > $R/diff.txt 2>&1; echo "diff rc=$?"; head -40 $R/diff.txt
  $SL ncu $R/ncu_before.csv $R/ncu_after.csv > $R/sightline_ncu.txt 2>&1; echo "ncu rc=$?"; head -60 $R/sightline_ncu.txt
  echo "== table"
  grep -E "^(variant|naive|opt) " $R/timing.txt
} 2>&1 | tee $OUT/fp8_log.txt
cp $OUT/fp8_log.txt $R/log.txt
tar -C $W -czf $OUT/fp8_block_quant.tar.gz fp8_block_quant
ls -la $OUT
