#!/usr/bin/env bash
# Records the graph-decode case of issue 29 on a GPU machine (examples/graph_decode/graph_decode.py):
# nsys with --cuda-graph-trace=node and =graph, the PyTorch profiler, and timings without a
# profiler. Run from the repository root with ../shared/device/ copied to .device/device/:
#   OUT=out/graph_decode examples/graph_decode/record.sh
# Writes into $OUT: graph_decode_node.sqlite.gz, graph_decode_graph.sqlite.gz (nsys exports),
# graph_decode.pytorch.json.gz, timings_*.json, record.log (versions, timings, the graph tables'
# schema and counts).
set -uo pipefail
OUT=${OUT:-out/graph_decode}
DEV=${DEV:-.device/device}
STEPS=${STEPS:-50}
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

  echo "== no profiler"
  python3 "$script" --mode none --steps "$STEPS" --timings "$OUT/timings_none.json"

  for trace in node graph; do
    echo "== nsys --cuda-graph-trace=$trace"
    "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none --cuda-graph-trace="$trace" \
        -c cudaProfilerApi --capture-range-end=stop --force-overwrite true -o "$tmp/$trace" \
        python3 "$script" --mode nsys --steps "$STEPS" --timings "$OUT/timings_nsys_$trace.json"
    [ -f "$tmp/$trace.nsys-rep" ] || "$QDSTRM_IMPORTER" -i "$tmp/$trace.qdstrm"
    "$NSYS" export --type sqlite --force-overwrite true -o "$tmp/graph_decode_$trace.sqlite" \
        "$tmp/$trace.nsys-rep"
    python3 - "$tmp/graph_decode_$trace.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
print("version", dict(db.execute("select name, value from META_DATA_EXPORT where name like 'EXPORT_%VERSION'")))
for t in sorted(tables):
    if "GRAPH" in t or t in ("CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"):
        cols = [r[1] for r in db.execute(f"pragma table_info({t})")]
        n = db.execute(f"select count(*) from {t}").fetchone()[0]
        print(f"{t}: {n} rows; columns {cols}")
for t in sorted(tables):
    if "GRAPH" in t:
        for row in db.execute(f"select * from {t} limit 4"):
            print("  ", t, row)
if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
    cols = [r[1] for r in db.execute("pragma table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    if "graphNodeId" in cols:
        print("kernels with a graph node:", db.execute(
            "select count(*), count(distinct graphNodeId) from CUPTI_ACTIVITY_KIND_KERNEL where graphNodeId is not null and graphNodeId <> 0").fetchone())
# The eventClass / event type names of the graph tables, if an enum table names them.
for t in sorted(tables):
    if t.startswith("ENUM_") and ("GRAPH" in t or "EVENT_TYPE" in t):
        rows = [r for r in db.execute(f"select * from {t}") if "raph" in str(r)]
        if rows: print(t, rows[:20])
PY
    gzip -c "$tmp/graph_decode_$trace.sqlite" > "$OUT/graph_decode_$trace.sqlite.gz"
    ls -la "$OUT/graph_decode_$trace.sqlite.gz"
  done

  echo "== PyTorch profiler"
  python3 "$script" --mode torch --steps 10 --trace "$OUT/graph_decode.pytorch.json.gz" \
      --timings "$OUT/timings_torch.json"
  ls -la "$OUT"
}

main 2>&1 | tee "$OUT/record.log"
