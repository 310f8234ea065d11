#!/bin/bash
# The recorder's graph node records on the GPU machine (issue 29), from the repository root:
#   bash cuda/recorder/tools/run_graph_nodes.sh
# Builds the recorder and decode_loop standalone (cmake -S cuda -B /tmp/bgn), then runs
# graph_nodes_check.py: `sightline record` of examples/graph_decode/graph_decode.py (PyTorch; all
# recorded, and in a cudaProfilerApi window opened after the capture) and of decode_loop
# --cuda-graph in an iteration window, checked with `sightline analyze --format json`: per NVTX
# range at capture, kernels per replay = the eager step's. Needs the CPU sightline binary and its
# libraries in .device/recorder/{bin,lib} (as run_on_gpu.sh; SL to use another binary). The
# recordings, reports and logs go to $OUT (as files.tgz); a short table and PASS/FAIL lines are
# printed last.
set -u -o pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/graph-nodes-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OUT
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  t=$(date +%s)
  cmake -S cuda -B /tmp/bgn -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bgn -j16 --target sightline_recorder decode_loop >> "$OUT/build.log" 2>&1
  rc=$?
  echo "build rc=$rc in $(( $(date +%s) - t )) s"; tail -3 "$OUT/build.log"
  [ $rc -eq 0 ] || exit 1
  export LD_LIBRARY_PATH=$PWD/.device/recorder/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export SL=${SL:-$PWD/.device/recorder/bin/sightline}
  export SIGHTLINE_RECORDER_LIB=/tmp/bgn/recorder/libsightline_recorder.so
  export DL=$(ls /tmp/bgn/decode_loop/decode_loop 2>/dev/null || true)
  $SL --version
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 cuda/recorder/tools/graph_nodes_check.py
} 2>&1 | tee "$OUT/log.txt"
# The device returns a few files only: the recordings, reports and logs go back as one archive.
tar czf /tmp/graph_nodes_files.tgz -C "$OUT" --exclude=log.txt --exclude=files.tgz . &&
  find "$OUT" -type f ! -name log.txt ! -name graph_nodes_check.json -delete &&
  mv /tmp/graph_nodes_files.tgz "$OUT/files.tgz"
