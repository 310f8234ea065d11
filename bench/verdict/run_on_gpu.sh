#!/bin/bash
# The regression verdict's validation on the GPU machine (issue 31), from the repository root:
#   OUT=... bash bench/verdict/run_on_gpu.sh
# Builds the recorder and decode_loop standalone (cmake -S cuda -B /tmp/bv), then runs
# verdict_check.py: planted Attention slowdowns of 3, 5 and 10% of the step and unchanged runs,
# each recorded RUNS times, compared with `sightline diff ... --fail-if-slower T`. Needs the CPU
# sightline binary and its libraries in .device/recorder/{bin,lib} (SL_DIR to change).
# MODE=false runs false_alarm.py instead: many unchanged runs, the verdict over many unchanged pairs.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/verdict-out}
SL_DIR=${SL_DIR:-.device/recorder}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OUT
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  cmake -S cuda -B /tmp/bv -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bv -j16 --target sightline_recorder decode_loop >> "$OUT/build.log" 2>&1 ||
    { echo "build failed"; tail -20 "$OUT/build.log"; exit 1; }
  export LD_LIBRARY_PATH=$PWD/$SL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export SL=$PWD/$SL_DIR/bin/sightline
  export SIGHTLINE_RECORDER_LIB=/tmp/bv/recorder/libsightline_recorder.so
  export DL=/tmp/bv/decode_loop/decode_loop
  if [ "${MODE:-planted}" = false ]; then
    python3 bench/verdict/false_alarm.py
  else
    python3 bench/verdict/verdict_check.py
  fi
} 2>&1 | tee "$OUT/log.txt"
(cd "$OUT" && tar czf diffs.tgz diffs && rm -rf diffs)
if [ -d "$OUT/baselines" ]; then (cd "$OUT" && tar czf baselines.tgz baselines && rm -rf baselines); fi
