#!/bin/bash
# The serving diff's validation runs on the GPU machine (issue 31), from the repository root:
#   OUT=... [N=10] [M=4] [REQUESTS=200] bash bench/verdict/serving_runs.sh
# examples/serving_loop/serving_loop.py (PyTorch, continuous batching; the same seeded workload in
# every run) N times unchanged (its default planted GC every 50 iterations) and M times with a
# planted tail cause (a garbage collection every 10 iterations), interleaved, each writing its
# request log (SIGHTLINE_REQUEST_LOG); no profiler. Builds libsightline_instrument standalone
# (cmake -S cuda -B /tmp/bv). Leaves $OUT/logs.tgz (base_K.jsonl, gc10_K.jsonl) and run.log; the
# diffs run anywhere: bench/verdict/serving_check.py.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/serving-out}
N=${N:-10}
M=${M:-4}
REQUESTS=${REQUESTS:-200}
mkdir -p "$OUT/logs"
{
  echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  python3 -c "import torch; print('torch', torch.__version__)"
  cmake -S cuda -B /tmp/bv -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/bv -j16 --target sightline_instrument >> "$OUT/build.log" 2>&1 ||
    { echo "build failed"; tail -20 "$OUT/build.log"; exit 1; }
  lib=$(dirname "$(find /tmp/bv -name 'libsightline_instrument.so*' | head -1)")
  export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONPATH=$PWD/python
  for k in $(seq 1 "$N"); do
    for v in base gc10; do
      [ "$v" = gc10 ] && [ "$k" -gt "$M" ] && continue
      extra=""
      [ "$v" = gc10 ] && extra="--gc-every 10"
      start=$(date +%s.%N)
      SIGHTLINE_REQUEST_LOG=$OUT/logs/${v}_$k.jsonl python3 examples/serving_loop/serving_loop.py \
        --requests "$REQUESTS" $extra > "$OUT/logs/${v}_$k.out" 2>&1
      echo "run $k $v rc=$? $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f s", e - s}') $(tail -1 "$OUT/logs/${v}_$k.out")"
    done
  done
} 2>&1 | tee "$OUT/run.log"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
