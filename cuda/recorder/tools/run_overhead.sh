#!/bin/bash
# The recorder's overhead benchmark, run on the GPU machine from the repository root:
#   bash cuda/recorder/tools/run_overhead.sh
# Builds the recorder and examples/decode_loop standalone (cmake -S cuda -B /tmp/bg), then runs
# overhead_bench.py (interleaved runs: none / sightline record / nsys -t cuda,nvtx). Needs the CPU
# sightline binary and its libraries in .device/recorder2/{bin,lib} (SL_DIR to change) and Nsight
# Systems' helper in .device/device (see ../shared/device/README.md). Logs and JSON go to $OUT.
# GRAPH_CHECK=1 first runs graph_trace_check.py; SCRIPT=overhead_diag.py runs the diagnostic instead.
set -u -o pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/recorder-out}
SL_DIR=${SL_DIR:-.device/recorder2}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OUT
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | head -1)"
  t=$(date +%s)
  cmake -S cuda -B /tmp/bg -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bg -j16 --target sightline_recorder decode_loop >> "$OUT/build.log" 2>&1
  rc=$?
  echo "build rc=$rc in $(( $(date +%s) - t )) s"; tail -3 "$OUT/build.log"
  [ $rc -eq 0 ] || exit 1
  source .device/device/nsys-env.sh .device/device
  export LD_LIBRARY_PATH=$PWD/$SL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export SL=$PWD/$SL_DIR/bin/sightline
  export SIGHTLINE_RECORDER_LIB=/tmp/bg/recorder/libsightline_recorder.so
  export DL=/tmp/bg/decode_loop/decode_loop
  $SL --version
  if [ "${GRAPH_CHECK:-0}" = 1 ]; then
    $NSYS profile --help 2>&1 | grep -A6 -e '--cuda-graph-trace' | head -8
    python3 cuda/recorder/tools/graph_trace_check.py
  fi
  python3 cuda/recorder/tools/${SCRIPT:-overhead_bench.py}
} 2>&1 | tee "$OUT/log.txt"
