#!/bin/bash
# The recorder's GPU verification, run on the GPU machine from the repository root:
#   bash cuda/recorder/tools/run_on_gpu.sh [all|mpi|graph]
# Builds the GPU parts standalone (cmake -S cuda -B /tmp/bg), then runs gpu_checks.py: kernel count
# and total kernel time against Nsight Systems, capture windows, overhead, and (mpi) mpirun -n 2 with
# --ranks 1. Needs the CPU sightline binary and its libraries in .device/recorder/{bin,lib} and
# Nsight Systems' helper in .device/device (see ../shared/device/README.md). Full logs go to $OUT.
set -u -o pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/recorder-out}
mkdir -p "$OUT"
what=${1:-all}
export NCCL_NVLS_ENABLE=0
export PYTHONUNBUFFERED=1
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -2 | tr '\n' ' ')"
  targets="--target sightline_recorder recorder_test_app decode_loop"
  [ "$what" = mpi ] && targets="--target sightline_recorder recorder_test_app"
  t=$(date +%s)
  cmake -S cuda -B /tmp/bg -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bg -j16 $targets >> "$OUT/build.log" 2>&1
  rc=$?
  echo "build rc=$rc in $(( $(date +%s) - t )) s"; tail -5 "$OUT/build.log"
  [ $rc -eq 0 ] || exit 1
  if [ -f .device/device/nsys-env.sh ]; then source .device/device/nsys-env.sh .device/device; fi
  export LD_LIBRARY_PATH=$PWD/.device/recorder/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export SL=$PWD/.device/recorder/bin/sightline
  export SIGHTLINE_RECORDER_LIB=/tmp/bg/recorder/libsightline_recorder.so
  export APP=/tmp/bg/recorder/tools/recorder_test_app
  export DL=$(ls /tmp/bg/decode_loop/decode_loop 2>/dev/null || true)
  $SL --version
  python3 cuda/recorder/tools/gpu_checks.py "$what"
} 2>&1 | tee "$OUT/log.txt"
