#!/bin/bash
# `sightline record --cuda-memory-usage` on the GPU machine, from the repository root:
#   bash cuda/recorder/tools/run_memory.sh
# Builds the recorder and memory_app standalone (cmake -S cuda -B /tmp/bm), then records
# 1. memory_app (NCCL, static, cudaMalloc, the default and an explicit stream-ordered pool) with
#    --cuda-memory-usage, and profiles it with nsys --cuda-memory-usage=true (exported to SQLite);
# 2. examples/gpu_memory/gpu_memory.py (PyTorch) in its capture window, with --cuda-memory-usage,
#    against the program's torch.cuda figures;
# 3. the overhead of --cuda-memory-usage on decode_loop (interleaved runs).
# The recordings, exports and the programs' own figures go to $OUT; they are analysed on the
# development machine. Needs the CPU sightline binary and its libraries in .device/sl/{bin,lib}
# (SL_DIR to change) and Nsight Systems' helper in .device/device (../shared/device/README.md).
set -u -o pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/memory-out}
SL_DIR=${SL_DIR:-.device/sl}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OUT
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  t=$(date +%s)
  cmake -S cuda -B /tmp/bm -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bm -j16 --target sightline_recorder memory_app decode_loop \
      >> "$OUT/build.log" 2>&1
  rc=$?
  echo "build rc=$rc in $(( $(date +%s) - t )) s"; tail -3 "$OUT/build.log"
  [ $rc -eq 0 ] || exit 1
  source .device/device/nsys-env.sh .device/device
  export LD_LIBRARY_PATH=$PWD/$SL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  SL=$PWD/$SL_DIR/bin/sightline
  export SIGHTLINE_RECORDER_LIB=/tmp/bm/recorder/libsightline_recorder.so
  APP=/tmp/bm/recorder/tools/memory_app
  DL=/tmp/bm/decode_loop/decode_loop
  $SL --version

  echo "== 1. memory_app: sightline record --cuda-memory-usage, then nsys --cuda-memory-usage=true"
  timeout 120 $SL record --cuda-memory-usage -o "$OUT/memory_app.slrec" -- $APP > "$OUT/app.json"
  echo "record rc=$?"; cat "$OUT/app.json"
  timeout 180 $NSYS profile -t cuda,nvtx -s none --cpuctxsw none --cuda-memory-usage=true \
    --force-overwrite true -o /tmp/mem_nsys $APP > "$OUT/app_nsys.json"
  echo "nsys rc=$?"; cat "$OUT/app_nsys.json"
  [ -f /tmp/mem_nsys.nsys-rep ] || $QDSTRM_IMPORTER -i /tmp/mem_nsys.qdstrm > /dev/null 2>&1
  $NSYS export --type sqlite --force-overwrite true -o "$OUT/memory_app.nsys.sqlite" \
    /tmp/mem_nsys.nsys-rep > /dev/null 2>&1
  echo "export rc=$?"; ls -la "$OUT"/memory_app.*

  echo "== 2. gpu_memory.py (PyTorch) in its capture window, --cuda-memory-usage"
  timeout 240 $SL record --cuda-memory-usage --capture-range cudaProfilerApi \
    --capture-range-end stop -o "$OUT/gpu_memory.slrec" -- \
    python3 examples/gpu_memory/gpu_memory.py --mode nsys --truth "$OUT/gpu_memory.truth.json" \
    > "$OUT/gpu_memory.txt" 2>&1
  echo "record rc=$?"; tail -3 "$OUT/gpu_memory.txt"

  echo "== 3. overhead: decode_loop, none / record / record --cuda-memory-usage (5 interleaved)"
  for rep in 1 2 3 4 5; do
    for mode in none rec mem; do
      case $mode in
        none) cmd=($DL --iterations 300 --warmup 50) ;;
        rec) cmd=($SL record -o /tmp/o.slrec -- $DL --iterations 300 --warmup 50) ;;
        mem) cmd=($SL record --cuda-memory-usage -o /tmp/o.slrec -- $DL --iterations 300 --warmup 50) ;;
      esac
      echo "$mode $rep $(timeout 120 "${cmd[@]}" 2>/dev/null | tail -1)"
    done
  done | tee "$OUT/overhead.txt"
} 2>&1 | tee "$OUT/log.txt"
