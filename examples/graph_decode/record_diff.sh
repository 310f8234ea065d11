#!/usr/bin/env bash
# Records a pair (and an unchanged repeat) for `sightline diff` on a GPU machine (issue 55): the
# graph-decode program under nsys --cuda-graph-trace=node, twice as it is and once with a 10% wider
# MLP (--inter 3104). Each trace holds two loops, graph_step_N and eager_step_N. Run from the
# repository root with ../shared/device/ copied to .device/device/:
#   OUT=out/graph_diff examples/graph_decode/record_diff.sh
# Writes into $OUT: graph_decode_node_{base,base2,mlp110}.sqlite.gz, timings_*.json, record.log.
set -uo pipefail
OUT=${OUT:-out/graph_diff}
DEV=${DEV:-.device/device}
STEPS=${STEPS:-20}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
script=examples/graph_decode/graph_decode.py
tmp=$(mktemp -d)

main() {
  set -e
  echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  # shellcheck disable=SC1090
  source "$DEV/nsys-env.sh" "$DEV"
  "$NSYS" --version
  # Interleaved, so that the unchanged pair (base, base2) straddles the changed run in time.
  for run in base:2816 mlp110:3104 base2:2816; do
    name=${run%%:*} inter=${run##*:}
    echo "== $name: --inter $inter, nsys --cuda-graph-trace=node, $STEPS steps per loop"
    "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none --cuda-graph-trace=node \
        -c cudaProfilerApi --capture-range-end=stop --force-overwrite true -o "$tmp/$name" \
        python3 "$script" --mode nsys --steps "$STEPS" --inter "$inter" \
        --timings "$OUT/timings_$name.json"
    [ -f "$tmp/$name.nsys-rep" ] || "$QDSTRM_IMPORTER" -i "$tmp/$name.qdstrm"
    "$NSYS" export --type sqlite --force-overwrite true -o "$tmp/$name.sqlite" "$tmp/$name.nsys-rep"
    gzip -9 -n -c "$tmp/$name.sqlite" > "$OUT/graph_decode_node_$name.sqlite.gz"
    ls -la "$OUT/graph_decode_node_$name.sqlite.gz"
  done
}

main 2>&1 | tee "$OUT/record.log"
