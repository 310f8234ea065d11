#!/usr/bin/env bash
# Runs host_loop.py on the GPU machine without a profiler and under Nsight Systems with the host-side
# capture of issue 14, and exports the report to SQLite with the Python samples' stacks.
# Usage (repository root, nsys helper in .device/device):
#   bash examples/host_loop/capture.sh OUTDIR [host_loop.py options...]
set -euo pipefail
out=${1:?usage: capture.sh OUTDIR [host_loop.py options...]}
shift
mkdir -p "$out"
loop_dir=$(cd "$(dirname "$0")" && pwd)
source .device/device/nsys-env.sh .device/device
python3 "$loop_dir/host_loop.py" "$@" | tee "$out/plain.txt"
$NSYS profile -t cuda,nvtx,osrt,python-gil --python-sampling=true --python-sampling-frequency=${SAMPLING_HZ:-200} \
  -s none --cpuctxsw none -o "$out/host_loop" -f true python3 "$loop_dir/host_loop.py" "$@" | tee "$out/nsys.txt"
[ -f "$out/host_loop.nsys-rep" ] || $QDSTRM_IMPORTER -i "$out/host_loop.qdstrm"
$NSYS export --type sqlite --include-json=true -o "$out/host_loop.sqlite" -f true "$out/host_loop.nsys-rep"
rm -f "$out/host_loop.qdstrm"
ls -la "$out"
