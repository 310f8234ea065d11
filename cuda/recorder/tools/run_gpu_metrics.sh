#!/bin/bash
# `sightline record --gpu-metrics` on the GPU machine, from the repository root:
#   bash cuda/recorder/tools/run_gpu_metrics.sh
# Builds the recorder, decode_loop and gpu_metrics_app standalone (cmake -S cuda -B /tmp/bg), then
# 1. records gpu_metrics_app with --gpu-metrics (10 kHz) and profiles it with nsys
#    --gpu-metrics-devices=0 at the same frequency; gpu_metrics_check.py prints the clock alignment,
#    the sampler's status and both per-phase tables;
# 2. measures the overhead (overhead_bench.py: none / sightline / sightline --gpu-metrics /
#    nsys -t cuda,nvtx --gpu-metrics-devices=0 / nsys -t cuda,nvtx) on decode_loop;
# 3. analyses the recording with the CPU sightline binary.
# Needs the CPU sightline binary and its libraries in .device/sl/{bin,lib} (SL_DIR to change) and
# Nsight Systems' helper in .device/device (../shared/device/README.md). Logs go to $OUT.
set -u -o pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/gpu-metrics-out}
SL_DIR=${SL_DIR:-.device/sl}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OUT
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  t=$(date +%s)
  cmake -S cuda -B /tmp/bg -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bg -j16 --target sightline_recorder decode_loop gpu_metrics_app \
      >> "$OUT/build.log" 2>&1
  rc=$?
  echo "build rc=$rc in $(( $(date +%s) - t )) s"; tail -3 "$OUT/build.log"
  [ $rc -eq 0 ] || exit 1
  source .device/device/nsys-env.sh .device/device
  export LD_LIBRARY_PATH=$PWD/$SL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export SL=$PWD/$SL_DIR/bin/sightline
  export SIGHTLINE_RECORDER_LIB=/tmp/bg/recorder/libsightline_recorder.so
  export DL=/tmp/bg/decode_loop/decode_loop
  APP=/tmp/bg/recorder/tools/gpu_metrics_app
  $SL --version

  # Runs `sightline record ARGS` with at most T seconds; a hung program gets its threads' stacks
  # printed (gdb, when the machine has it) and is killed, so no PM sampling session outlives it.
  rec() {
    local t=$1; shift
    SIGHTLINE_RECORD_DEBUG=1 $SL record "$@" &
    local pid=$! waited=0
    while kill -0 $pid 2>/dev/null && [ $waited -lt $t ]; do sleep 1; waited=$((waited + 1)); done
    if kill -0 $pid 2>/dev/null; then
      echo "HUNG after $t s: $*" >&2; HUNG=1
      for c in $(pgrep -P $pid); do
        command -v gdb > /dev/null && timeout 60 gdb -batch -p $c -ex "thread apply all bt 12" 2>&1 |
          grep -E "^#|^Thread" | head -80 >&2
        kill -9 $c
      done
      kill -9 $pid 2>/dev/null
    fi
    wait $pid; echo "record rc=$?" >&2
  }
  echo "== 1. gpu_metrics_app: sightline record --gpu-metrics (and without, for the kernel count)"
  rec 20 -o "$OUT/plain.slrec" -- $APP > /dev/null
  rec 20 --gpu-metrics -o "$OUT/gpu_metrics_app.slrec" -- $APP > "$OUT/app.json"
  cat "$OUT/app.json"
  echo "== 1a. decode_loop with --gpu-metrics"
  rec 20 --gpu-metrics -o "$OUT/decode_loop.slrec" -- $DL --iterations 400 --warmup 50 > "$OUT/dl.txt"
  tail -1 "$OUT/dl.txt"
  if [ -n "${HUNG:-}" ]; then echo "a run hung: stopping here"; exit 1; fi
  echo "== 1b. the same under nsys --gpu-metrics-devices=0 --gpu-metrics-frequency=10000"
  timeout 180 $NSYS profile -t cuda -s none --cpuctxsw none --gpu-metrics-devices=0 \
    --gpu-metrics-frequency=10000 --force-overwrite true -o /tmp/gm_nsys $APP > "$OUT/app_nsys.json"
  echo "nsys rc=$?"
  [ -f /tmp/gm_nsys.nsys-rep ] || $QDSTRM_IMPORTER -i /tmp/gm_nsys.qdstrm > /dev/null 2>&1
  $NSYS export --type sqlite --force-overwrite true -o /tmp/gm_nsys.sqlite /tmp/gm_nsys.nsys-rep \
    > /dev/null 2>&1
  echo "export rc=$?"
  python3 cuda/recorder/tools/gpu_metrics_check.py "$OUT/gpu_metrics_app.slrec" "$OUT/app.json" \
    --nsys /tmp/gm_nsys.sqlite
  echo "== 1c. sightline analyze of the recording (CPU binary)"
  timeout 60 $SL analyze "$OUT/gpu_metrics_app.slrec" > "$OUT/analyze.txt" 2>&1
  echo "analyze rc=$?"; grep -n -A14 -i "gpu metrics" "$OUT/analyze.txt" | head -40
  grep -n -i "recorder_gpu\|not sampled\|PM sampling" "$OUT/analyze.txt" | head

  echo "== 2. overhead on decode_loop"
  NSYS_METRICS=1 EXTRA_MODES="sl_metrics" DIAG_MODES="" REPS=${REPS:-3} BUDGET_S=${BUDGET_S:-240} \
    WORKLOADS="decode_loop_small_eager decode_loop_default_eager" \
    python3 cuda/recorder/tools/overhead_bench.py
} 2>&1 | tee "$OUT/log.txt"
