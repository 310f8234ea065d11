#!/usr/bin/env bash
# The all-reduce run on a GPU machine, in one go: build (standalone CMake, CUDA toolkit + NCCL),
# verify every strategy x dtype x fusion x mode at a few shapes, measure the NVLink peer copy
# bandwidth, then the size sweep (1K..256M, all dtypes) and the 2-D sweep (hidden x tokens, bf16,
# both fusions), both in eager and CUDA-graph mode. Stops at the first failing stage.
# Usage (repository root): cuda/allreduce/run_on_gpu.sh OUT_DIR
# Environment: NP (ranks, default: all GPUs), STAGES (default "check size pull grid"; "order" adds
# the two-shot peer-order comparison, "lamport" the Lamport one-shot's checks and its 1K..1M sweep
# beside NCCL, one-shot and two-shot, run twice, with a table of the two runs last; "lamportgrid"
# Lamport alone over the 2-D grid with --lamport-max LAMPORT_GRID_MAX, default 16M, into
# grid_wN_lamport_max.csv), BIN (a prebuilt sightline-allreduce-bench to use if it runs here),
# SIZE_DTYPES (default bf16,fp16,fp32), SIZE_ARGS / GRID_ARGS (extra flags), DEADLINE (epoch
# seconds: a stage that would start with less than MIN_STAGE_S (default 30; the 2-D sweep:
# MIN_GRID_S) left is skipped, and every mpirun is cut off at the deadline). The 2-D sweep ends
# with a table of the fastest strategy per cell (grid_summary.awk).
# Stage "quant" (about 4 minutes on 2 GPUs with the build): the quantizing fusions
# (residual_rmsnorm_fp8, residual_rmsnorm_fp8_per_token, residual_rmsnorm_nvfp4) checked bit for
# bit against the CPU reference (bf16/fp16 over hidden 16..8192 x tokens 1..256, fp32 and --pull
# on fewer shapes, uneven token counts), eager and CUDA graph, then timed at QUANT_SHAPES (default
# 1x4096,16x4096,128x8192,1024x8192; bf16) beside residual_rmsnorm, into quant_wN.csv, ending with
# a table: median us per call of NCCL + the unfused epilogue, fused one-shot and two-shot.
# Stage "quantgrid": the three quantizing fusions over the 2-D grid (hidden 128..8192 x tokens
# 1..16384, bf16, nccl/oneshot/twoshot, eager + graph) into grid_wN_quant.csv, for tune and plot.
# Stage "lib" (the library, libsightline_allreduce): sightline-allreduce-lib-test (every fusion
# and strategy, eager and graph, the override and fallbacks, against NCCL; a timing table of the
# table's choice against NCCL) and, when PyTorch is there, the example op
# cuda/allreduce/examples/torch_allreduce.py against torch.distributed. LIBDIR: a prebuilt
# library and test (else those built here). Stage "quickcheck": the check stage's first two
# commands (every strategy x dtype x mode, 1K..32M, push; bf16 --pull). Stage "big": two-shot
# against NCCL at 8M..256M (bf16) with the peer-copy probes, the link bound printed beside them.
set -u -o pipefail
out=${1:?usage: run_on_gpu.sh OUT_DIR}
mkdir -p "$out"
log="$out/log.txt"
np=${NP:-$(nvidia-smi -L | wc -l)}
stages=${STAGES:-check size pull grid}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
say() { echo "== $*" | tee -a "$log"; }

{
  date -u
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  nvidia-smi topo -m
  mpirun --version | head -1
  grep -m1 -E '#define NCCL_(MAJOR|VERSION_CODE)' /usr/include/nccl.h
} 2>&1 | tee -a "$log"

bin=${BIN:-}
if [ -z "$bin" ] || ! "$bin" --help > /dev/null 2>&1; then
  say "build (cmake -S cuda -B /tmp/bg)"
  start=$(date +%s)
  cmake -S cuda -B /tmp/bg -G Ninja -DCMAKE_BUILD_TYPE=Release > /tmp/bg-cmake.log 2>&1 &&
    cmake --build /tmp/bg --target sightline-allreduce-bench 2>&1 | tail -3 | tee -a "$log" || { cat /tmp/bg-cmake.log | tee -a "$log"; exit 1; }
  echo "built in $(( $(date +%s) - start )) s" | tee -a "$log"
  bin=/tmp/bg/allreduce/sightline-allreduce-bench
fi

left() {  # seconds to the deadline (a large number without one)
  if [ -n "${DEADLINE:-}" ]; then echo $(( DEADLINE - $(date +%s) )); else echo 100000; fi
}
mpi() {  # mpi SECONDS ARGS...: one rank per GPU
  local secs=$1; shift
  local l; l=$(left)
  [ "$l" -lt "$secs" ] && secs=$(( l > 1 ? l : 1 ))
  timeout "$secs" mpirun --allow-run-as-root -n "$np" --bind-to none -x NCCL_NVLS_ENABLE=0 \
    ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} "$bin" "$@"
}
stage() {  # stage NAME: whether to run it (listed in STAGES, and time left)
  [[ " $stages " == *" $1 "* ]] || return 1
  local need=${MIN_STAGE_S:-30}
  [ "$1" = grid ] && need=${MIN_GRID_S:-$need}
  if [ "$(left)" -lt "$need" ]; then say "$1 (world $np): skipped, deadline"; return 1; fi
}

# The big sizes' table: NCCL and two-shot per size and mode against two link bounds: the bytes each
# GPU must send, 2 (n-1)/n x size (reduce-scatter, then all-gather; size itself at world 2), over the
# one-way peer copy's bandwidth (rank 0 writes rank 1) and over the both-ways copy's (every rank
# writes the next at once; copy engines). Usage: big_summary CSV LOG
big_summary() {
  local one both
  one=$(sed -n 's/^peer_copy: rank 0 writes rank 1, [0-9]* bytes, \([0-9.]*\) GB\/s.*/\1/p' "$2")
  both=$(sed -n 's/^peer_copy: every rank writes the next at once, [0-9]* bytes, \([0-9.]*\) GB\/s.*/\1/p' "$2")
  echo "bf16, $np GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)), us per call;" \
    "bound1 = 2 ($np-1)/$np x size / ${one:-?} GB/s (one-way peer copy), bound2 = the same / ${both:-?} GB/s (both ways at once)"
  awk -F, -v one="${one:-0}" -v both="${both:-0}" -v np="$np" 'FNR > 1 { t[$3 "," $8 "," $6] = $9; sizes[$3] = 1 }
    END { printf "%10s %-6s %9s %9s %9s %9s %13s\n", "bytes", "mode", "nccl", "twoshot", "bound1", "bound2", "twoshot/bnd1"
          n = 0; for (s in sizes) list[++n] = s + 0
          for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (list[j] < list[i]) { x = list[i]; list[i] = list[j]; list[j] = x }
          f = 2 * (np - 1) / np
          for (i = 1; i <= n; ++i) for (m = 0; m < 2; ++m) {
            mode = m ? "graph" : "eager"; k = list[i] "," mode
            b1 = one > 0 ? f * list[i] / (one * 1e3) : 0; b2 = both > 0 ? f * list[i] / (both * 1e3) : 0
            printf "%10d %-6s %9.2f %9.2f %9.2f %9.2f %12.2fx\n", list[i], mode, t[k ",nccl"], t[k ",twoshot"], b1, b2, (b1 > 0 ? t[k ",twoshot"] / b1 : 0) } }' "$1"
}
if stage lib; then
  libdir=${LIBDIR:-$(dirname "$bin")}
  if [ ! -x "$libdir/sightline-allreduce-lib-test" ]; then
    say "lib: building the library and its test"
    cmake --build /tmp/bg --target sightline_allreduce_lib sightline-allreduce-lib-test 2>&1 | tail -2 | tee -a "$log"
    libdir=/tmp/bg/allreduce
  fi
  say "lib: sightline-allreduce-lib-test, $np ranks (library against NCCL, every fusion, eager + graph)"
  timeout 150 mpirun --allow-run-as-root -n "$np" --bind-to none -x NCCL_NVLS_ENABLE=0 \
    -x LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$libdir/sightline-allreduce-lib-test" > "$out/lib_test_w$np.log" 2>&1
  rc=$?
  grep -v '^  ' "$out/lib_test_w$np.log" | tee -a "$log"
  [ $rc -eq 0 ] || say "lib test FAILED (rc $rc; full log lib_test_w$np.log)"
  if python3 -c "import torch" 2> /dev/null; then
    say "lib: the PyTorch example op (torch_allreduce.py), $np ranks"
    timeout 200 mpirun --allow-run-as-root -n "$np" --bind-to none -x NCCL_NVLS_ENABLE=0 \
      -x PYTHONUNBUFFERED=1 python3 "$(dirname "$0")/examples/torch_allreduce.py" \
      --lib-dir "$libdir" > "$out/torch_example_w$np.log" 2>&1 ||
      say "torch example FAILED (full log torch_example_w$np.log)"
    grep -v -E 'Warning|warn\(' "$out/torch_example_w$np.log" | tail -40 | tee -a "$log"
  else
    say "lib: no PyTorch here, the example op not run"
  fi
fi
if stage big; then
  say "big: two-shot and NCCL, bf16, 8M..256M (x2), eager + graph, with the peer-copy probes"
  mpi 200 -b 8M -e 256M -f 2 --strategy nccl,twoshot --budget-ms 40 --peer-bw \
    -o "$out/sizes_big_w$np.csv" 2>&1 | tee "$out/sizes_big_w$np.log" | grep -E -v '^\[' |
    tee -a "$log" || { say "big sweep FAILED"; exit 1; }
  big_summary "$out/sizes_big_w$np.csv" "$out/sizes_big_w$np.log" | tee -a "$log"
fi
if stage quickcheck; then
  say "quick check: $np ranks, all strategies x dtypes x modes, sizes 1K..32M (x8); bf16 --pull"
  mpi 150 --check-only --dtype bf16,fp16,fp32 -b 1K -e 32M -f 8 2>&1 | grep -v '^\[' | tee -a "$log" ||
    { say "check FAILED"; exit 1; }
  mpi 90 --check-only --pull --dtype bf16 -b 1K -e 32M -f 8 2>&1 | grep -v '^\[' |
    tee -a "$log" || { say "pull check FAILED"; exit 1; }
fi
if stage check; then
  say "check: $np ranks, all strategies x dtypes x modes, sizes 1K..32M (x8), then fused shapes"
  mpi 150 --check-only --dtype bf16,fp16,fp32 -b 1K -e 32M -f 8 2>&1 | tee -a "$log" ||
    { say "check FAILED"; exit 1; }
  mpi 150 --check-only --pull --dtype bf16,fp16,fp32 -b 1K -e 32M -f 8 2>&1 | grep -v '^\[' |
    tee -a "$log" || { say "pull check FAILED"; exit 1; }
  mpi 150 --check-only --pull --grid --dtype bf16 --hidden 128:8192 --tokens 1:64 2>&1 |
    grep -v '^\[' | tee -a "$log" || { say "pull fused check FAILED"; exit 1; }
  mpi 150 --check-only --grid --dtype bf16,fp16,fp32 --hidden 128:8192 --tokens 1:16 2>&1 |
    grep -v '^\[' | tee -a "$log" || { say "fused check FAILED"; exit 1; }
  # Odd shapes: sizes that do not split evenly over the ranks, many rows.
  mpi 150 --check-only --grid --dtype bf16 --hidden 1024:1024 --tokens 1024:8192 2>&1 |
    grep -v '^\[' | tee -a "$log" || { say "row check FAILED"; exit 1; }
fi
quant_fusions=residual_rmsnorm_fp8,residual_rmsnorm_fp8_per_token,residual_rmsnorm_nvfp4
if stage quant; then
  say "quant check: $np ranks, nccl/oneshot/twoshot x 3 quantizing fusions x bf16/fp16 x eager/graph," \
    "hidden 16..8192 x tokens 1..256; every row's quantized bytes and scales against the CPU reference"
  mpi 180 --check-only --grid --strategy nccl,oneshot,twoshot --fusion $quant_fusions \
    --dtype bf16,fp16 --hidden 16:8192 --tokens 1:256 2>&1 | grep -v '^\[' | tee -a "$log" ||
    { say "quant check FAILED"; exit 1; }
  say "quant check: fp32 (hidden 16..1024 x tokens 1..64), the pull kernels (bf16), uneven token counts"
  mpi 90 --check-only --grid --strategy nccl,oneshot,twoshot --fusion $quant_fusions \
    --dtype fp32 --hidden 16:1024 --tokens 1:64 2>&1 | grep -v '^\[' | tee -a "$log" ||
    { say "quant fp32 check FAILED"; exit 1; }
  mpi 90 --check-only --pull --grid --strategy oneshot,twoshot --fusion $quant_fusions \
    --dtype bf16 --hidden 64:4096 --tokens 1:128 2>&1 | grep -v '^\[' | tee -a "$log" ||
    { say "quant pull check FAILED"; exit 1; }
  mpi 90 --check-only --strategy nccl,oneshot,twoshot --fusion $quant_fusions --dtype bf16,fp16 \
    --shapes 3x16,333x2048,1000x8192,4095x1024 2>&1 | grep -v '^\[' | tee -a "$log" ||
    { say "quant shapes check FAILED"; exit 1; }
  shapes=${QUANT_SHAPES:-1x4096,16x4096,128x8192,1024x8192}
  say "quant timing: bf16, $shapes, residual_rmsnorm + the 3 quantizing fusions, nccl/oneshot/twoshot," \
    "eager + graph (each verified before and after, 256 rows against the CPU reference)"
  mpi 150 --shapes "$shapes" --strategy nccl,oneshot,twoshot --fusion residual_rmsnorm,$quant_fusions \
    --budget-ms 25 -o "$out/quant_w$np.csv" 2>&1 | tee "$out/quant_w$np.log" | grep -E -v '^\[' |
    tee -a "$log" || { say "quant timing FAILED"; tail -5 "$out/quant_w$np.log"; exit 1; }
fi
if stage quantgrid; then
  say "2-D sweep of the quantizing fusions: hidden 128..8192 x tokens 1..16384, bf16, nccl/oneshot/twoshot, eager + graph"
  mpi 420 --grid --strategy nccl,oneshot,twoshot --fusion $quant_fusions --budget-ms 15 \
    -o "$out/grid_w${np}_quant.csv" 2>&1 | tee "$out/grid_w${np}_quant.log" | grep -E -v '^\[' |
    tee -a "$log" || { say "quant 2-D sweep FAILED"; tail -5 "$out/grid_w${np}_quant.log"; exit 1; }
fi
if stage size; then
  say "size sweep: -b 1K -e 256M -f 2, ${SIZE_DTYPES:-bf16,fp16,fp32}, eager + graph"
  mpi 240 -b 1K -e 256M -f 2 --dtype "${SIZE_DTYPES:-bf16,fp16,fp32}" --budget-ms 25 --peer-bw \
    ${SIZE_ARGS:-} \
    -o "$out/sizes_w$np.csv" 2>&1 | tee "$out/sizes_w$np.log" | grep -E -v '^\[' | tee -a "$log" ||
    { say "size sweep FAILED"; tail -5 "$out/sizes_w$np.log"; exit 1; }
fi
if stage pull; then
  say "size sweep with the pull kernels (--pull), bf16, for comparison (not for the tuner)"
  mpi 120 --pull -b 1K -e 256M -f 2 --strategy oneshot,twoshot --budget-ms 25 \
    -o "$out/sizes_w${np}_pull.csv" 2>&1 | grep -E -v '^\[' | tee -a "$log" ||
    { say "pull sweep FAILED"; exit 1; }
fi
if stage order; then
  # The default is --peer-order spread; the same two-shot sweeps with the other orders, so that
  # one run shows what the order does (not for the tuner).
  say "peer order: two-shot bf16 size sweep with --peer-order fixed and rank (push), fixed (pull)"
  for ord in fixed rank; do
    mpi 90 --peer-order $ord --strategy twoshot -b 1K -e 256M -f 2 --budget-ms 25 \
      -o "$out/sizes_w${np}_order_$ord.csv" 2>&1 | grep -E -v '^\[' | tee -a "$log" ||
      { say "order $ord sweep FAILED"; exit 1; }
  done
  mpi 90 --pull --peer-order fixed --strategy twoshot -b 1K -e 256M -f 2 --budget-ms 25 \
    -o "$out/sizes_w${np}_pull_order_fixed.csv" 2>&1 | grep -E -v '^\[' | tee -a "$log" ||
    { say "pull order fixed sweep FAILED"; exit 1; }
  say "peer order: fused + plain two-shot, hidden 1024..8192 x tokens 256..16384, --peer-order fixed"
  mpi 120 --grid --peer-order fixed --strategy twoshot --hidden 1024:8192 --tokens 256:16384 \
    --budget-ms 20 -o "$out/grid_w${np}_order_fixed.csv" 2>&1 | grep -E -v '^\[' |
    tee -a "$log" || { say "order grid FAILED"; exit 1; }
fi
if stage lamport; then
  all4=nccl,oneshot,twoshot,lamport
  say "lamport check: $np ranks, $all4 x bf16/fp16/fp32 x eager/graph (32 calls a graph), 16 B..1M (x4);" \
    "every custom output also compared bit for bit with ncclAllReduce's"
  mpi 150 --check-only --strategy $all4 --dtype bf16,fp16,fp32 -b 16 -e 1M -f 4 --batch 32 2>&1 |
    grep -v '^\[' | tee -a "$log" || { say "lamport check FAILED"; exit 1; }
  for rep in 1 2; do
    say "lamport sweep $rep: $all4, bf16, 1K..1M (x2), eager + graph"
    mpi 120 --strategy $all4 -b 1K -e 1M -f 2 --budget-ms 25 \
      -o "$out/sizes_w${np}_lamport_$rep.csv" 2>&1 | tee "$out/sizes_w${np}_lamport_$rep.log" |
      grep -E -v '^\[' | tee -a "$log" || { say "lamport sweep $rep FAILED"; exit 1; }
  done
fi
if stage grid; then
  say "2-D sweep: hidden 128..8192 x tokens 1..16384, bf16, none + residual_rmsnorm, eager + graph" \
    "(strategies: the harness's default, nccl,oneshot,twoshot,lamport)"
  mpi 420 --grid --budget-ms 20 ${GRID_ARGS:-} -o "$out/grid_w$np.csv" 2>&1 |
    tee "$out/grid_w$np.log" | grep -E -v '^\[' | tee -a "$log" ||
    { say "2-D sweep FAILED"; tail -5 "$out/grid_w$np.log"; exit 1; }
fi
if stage lamportgrid; then
  # Lamport alone over the same grid with larger buffers, to see where it stops winning; a separate
  # file (its cells up to 1M repeat the grid's lamport rows), not for the tuner as it stands.
  lmax=${LAMPORT_GRID_MAX:-16M}
  say "2-D sweep, lamport only, --lamport-max $lmax: hidden 128..8192 x tokens 1..16384, bf16, none, eager + graph"
  mpi 120 --grid --strategy lamport --fusion none --lamport-max "$lmax" --budget-ms 20 \
    -o "$out/grid_w${np}_lamport_max.csv" 2>&1 | tee "$out/grid_w${np}_lamport_max.log" |
    grep -E -v '^\[' | tee -a "$log" || { say "lamport 2-D sweep FAILED"; exit 1; }
fi

for csv in "$out/sizes_w$np.csv" "$out/sizes_w${np}_pull.csv" "$out/sizes_w${np}_order_fixed.csv" \
  "$out/sizes_w${np}_order_rank.csv" "$out/sizes_w${np}_pull_order_fixed.csv"; do
  [ -f "$csv" ] || continue
  say "summary of $(basename "$csv"): bf16 all-reduce, time per call, busbw"
  awk -F, 'NR > 1 && $2 == "bf16" && ($3 == 1024 || $3 == 262144 || $3 == 4194304 ||
           $3 == 67108864 || $3 == 268435456) {
             printf "%10d %-8s %-6s %9.2f us %8.1f GB/s\n", $3, $6, $8, $9, $11 }' "$csv" |
    tee -a "$log"
done
# The Lamport sweeps last, as one table: per size and mode, each strategy's time in the two runs.
if [ -f "$out/sizes_w${np}_lamport_1.csv" ]; then
  say "summary: bf16 all-reduce, $np GPUs, median us per call, sweep 1 / sweep 2 (lamport stage)"
  awk -F, 'FNR > 1 { t[$3 "," $8 "," $6] = t[$3 "," $8 "," $6] (t[$3 "," $8 "," $6] == "" ? "" : "/") sprintf("%.2f", $9)
                     sizes[$3] = 1 }
           END {
             printf "%8s %-6s %13s %13s %13s %13s\n", "bytes", "mode", "nccl", "oneshot", "twoshot", "lamport"
             n = 0; for (s in sizes) list[++n] = s + 0
             for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (list[j] < list[i]) { x = list[i]; list[i] = list[j]; list[j] = x }
             for (i = 1; i <= n; ++i) for (m = 0; m < 2; ++m) {
               mode = m ? "graph" : "eager"; k = list[i] "," mode
               printf "%8d %-6s %13s %13s %13s %13s\n", list[i], mode, t[k ",nccl"], t[k ",oneshot"], t[k ",twoshot"], t[k ",lamport"]
             }
           }' $(ls "$out/sizes_w${np}_lamport_"[12].csv) | tee -a "$log"
fi
# The quantizing fusions' timing: per fusion, cell and mode, each strategy's median us per call
# (nccl = ncclAllReduce + the same epilogue as a separate kernel) and the best fused kernel's time
# over NCCL's.
if [ -f "$out/quant_w$np.csv" ]; then
  say "summary of quant_w$np.csv: bf16, $np GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)), median us per call"
  awk -F, 'FNR > 1 { k = $7 "," $4 "x" $5 "," $8; t[k "," $6] = $9
                     if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
           END {
             printf "%-31s %-10s %-6s %9s %9s %9s %10s\n", "fusion", "tokens x h", "mode", "nccl+epi", "oneshot", "twoshot", "fused/nccl"
             for (i = 1; i <= n; ++i) {
               split(order[i], p, ","); k = order[i]
               best = ""; if ((k ",oneshot") in t) best = t[k ",oneshot"]
               if ((k ",twoshot") in t && (best == "" || t[k ",twoshot"] + 0 < best + 0)) best = t[k ",twoshot"]
               r = (best != "" && (k ",nccl") in t) ? sprintf("%.2fx", best / t[k ",nccl"]) : "-"
               printf "%-31s %-10s %-6s %9s %9s %9s %10s\n", p[1], p[2], p[3], t[k ",nccl"], t[k ",oneshot"], t[k ",twoshot"], r
             }
           }' "$out/quant_w$np.csv" | tee -a "$log"
fi
if [ -f "$out/grid_w${np}_quant.csv" ]; then
  say "summary of grid_w${np}_quant.csv: bf16, fastest strategy per cell, $np GPUs"
  awk -F, -f "$(dirname "$0")/grid_summary.awk" "$out/grid_w${np}_quant.csv" | tee -a "$log"
fi
# The 2-D sweep last: per fusion and mode, how many cells each strategy wins; then, unfused, the
# winner of every cell (N nccl, 1 one-shot, 2 two-shot, L lamport) and its time in us.
if [ -f "$out/grid_w$np.csv" ]; then
  say "summary of grid_w$np.csv: bf16, fastest strategy per cell, $np GPUs"
  awk -F, -f "$(dirname "$0")/grid_summary.awk" "$out/grid_w$np.csv" | tee -a "$log"
fi
