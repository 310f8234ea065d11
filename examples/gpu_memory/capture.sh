#!/usr/bin/env bash
# Runs gpu_memory.py on the GPU machine three times: without a profiler, under Nsight Systems with GPU
# metrics and CUDA memory usage (capture range = the program's cudaProfilerStart/Stop), and under the
# PyTorch profiler with profile_memory=True; exports the nsys report to SQLite and gzips the Kineto trace.
# Usage (repository root, nsys helper in .device/device):
#   bash examples/gpu_memory/capture.sh OUTDIR [gpu_memory.py options...]
# GPU_METRICS_HZ (default 10000) sets --gpu-metrics-frequency.
set -euo pipefail
out=${1:?usage: capture.sh OUTDIR [gpu_memory.py options...]}
shift
mkdir -p "$out"
dir=$(cd "$(dirname "$0")" && pwd)
source .device/device/nsys-env.sh .device/device
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.memory --format=csv | tee "$out/nvidia-smi.txt"
python3 "$dir/gpu_memory.py" --mode none --truth "$out/truth_none.json" "$@" | tee "$out/plain.txt"
$NSYS profile -t cuda,nvtx -s none --cpuctxsw none --gpu-metrics-devices=all \
  --gpu-metrics-frequency=${GPU_METRICS_HZ:-10000} --cuda-memory-usage=true \
  -c cudaProfilerApi --capture-range-end=stop -o "$out/gpu_memory" -f true \
  python3 "$dir/gpu_memory.py" --mode nsys --truth "$out/truth_nsys.json" "$@" > "$out/nsys.txt" 2>&1 || { tail -30 "$out/nsys.txt"; exit 1; }
tail -5 "$out/nsys.txt"
[ -f "$out/gpu_memory.nsys-rep" ] || $QDSTRM_IMPORTER -i "$out/gpu_memory.qdstrm"
$NSYS export --type sqlite -o "$out/gpu_memory.nsys.sqlite" -f true "$out/gpu_memory.nsys-rep"
rm -f "$out/gpu_memory.qdstrm"
python3 "$dir/gpu_memory.py" --mode torch --truth "$out/truth_torch.json" \
  --trace "$out/gpu_memory.pytorch.json.gz" "$@" | tee "$out/torch.txt"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
json.dump({m: json.load(open(f"{out}/truth_{m}.json")) for m in ("none", "nsys", "torch")},
          open(f"{out}/gpu_memory.truth.json", "w"), indent=1)
PY
ls -la "$out"
