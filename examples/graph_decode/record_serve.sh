#!/usr/bin/env bash
# Records the serving loop of issue 29 (examples/graph_decode/graph_serve.py: graphs of batch
# sizes 1, 2, 4, 8 replayed with real batches padded to a bucket) on a GPU machine, from the
# repository root, with ../shared/device/ copied to .device/device/:
#   OUT=out/graph_serve bash examples/graph_decode/record_serve.sh
# Builds the recorder (cmake -S cuda -B /tmp/bserve), then records with Nsight Systems
# (--cuda-graph-trace=node and =graph) and with the recorder's library injected directly (graph
# node and whole-graph modes; the variables `sightline record` sets), each in a cudaProfilerApi
# window opened before the captures; and, for a second-trace eager reference, a graph-only run
# (graph mode, no eager steps) and an eager-only run (no graphs). Each run writes its iteration log
# and plan. Everything goes to $OUT/files.tgz; $OUT/log.txt holds what was printed.
set -u -o pipefail
OUT=${OUT:-out/graph_serve}
DEV=${DEV:-.device/device}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
script=examples/graph_decode/graph_serve.py
tmp=$(mktemp -d)
files=$tmp/files
mkdir -p "$files"

nsys_run() {  # name trace-mode args...
  local name=$1 trace=$2
  shift 2
  local t=$(date +%s)
  "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none --cuda-graph-trace="$trace" \
      -c cudaProfilerApi --capture-range-end=stop --force-overwrite true -o "$tmp/$name" \
      python3 "$script" --mode nsys --log "$files/$name.iterations.jsonl" \
      --plan "$files/$name.plan.json" "$@" > "$tmp/$name.log" 2>&1
  local rc=$?
  grep -E "^mode=|rror" "$tmp/$name.log" | head -5
  [ -f "$tmp/$name.nsys-rep" ] || "$QDSTRM_IMPORTER" -i "$tmp/$name.qdstrm" > /dev/null 2>&1
  "$NSYS" export --type sqlite --force-overwrite true -o "$tmp/$name.sqlite" \
      "$tmp/$name.nsys-rep" > /dev/null 2>&1
  gzip -c "$tmp/$name.sqlite" > "$files/$name.sqlite.gz"
  echo "$name: rc=$rc in $(( $(date +%s) - t )) s; $(ls -la "$files/$name.sqlite.gz" | awk '{print $5}') bytes gzipped"
}

rec_run() {  # name graph-trace args...
  local name=$1 trace=$2
  shift 2
  local t=$(date +%s)
  CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB SIGHTLINE_RECORD_OUTPUT=$files/$name.slrec \
  SIGHTLINE_RECORD_CAPTURE_RANGE=cudaProfilerApi SIGHTLINE_RECORD_CAPTURE_RANGE_END=stop \
  SIGHTLINE_RECORD_DRIVER_API=0 SIGHTLINE_RECORD_GRAPH_TRACE=$trace SIGHTLINE_RECORD_CUDA_MEMORY=0 \
      python3 "$script" --mode nsys --log "$files/$name.iterations.jsonl" \
      --plan "$files/$name.plan.json" "$@" > "$tmp/$name.log" 2>&1
  local rc=$?
  grep -E "^mode=|rror|sightline-recorder" "$tmp/$name.log" | head -5
  echo "$name: rc=$rc in $(( $(date +%s) - t )) s; $(ls -la "$files/$name.slrec" | awk '{print $5}') bytes"
}

main() {
  echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  local t=$(date +%s)
  cmake -S cuda -B /tmp/bserve -G Ninja -DCMAKE_BUILD_TYPE=Release > "$tmp/build.log" 2>&1 &&
    cmake --build /tmp/bserve -j16 --target sightline_recorder >> "$tmp/build.log" 2>&1
  local rc=$?
  echo "recorder build rc=$rc in $(( $(date +%s) - t )) s"
  [ $rc -eq 0 ] || { tail -20 "$tmp/build.log"; return 1; }
  LIB=/tmp/bserve/recorder/libsightline_recorder.so
  # shellcheck disable=SC1090
  source "$DEV/nsys-env.sh" "$DEV"
  "$NSYS" --version
  rec_run serve_rec_graph graph
  rec_run serve_rec_node node
  nsys_run serve_node node
  nsys_run serve_graph graph
  nsys_run serve_graph_only graph --eager-per-bucket 0
  nsys_run serve_eager_only node --steps 0 --no-graphs
  python3 - "$tmp" <<'PY'
import sqlite3, sys, glob, os
for path in sorted(glob.glob(os.path.join(sys.argv[1], "serve_*.sqlite"))):
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    row = [os.path.basename(path)]
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
              "CUDA_GRAPH_NODE_EVENTS", "CUDA_GRAPH_EVENTS"):
        row.append(f"{t.split('_')[-1] if 'KIND' in t else t}="
                   f"{db.execute(f'select count(*) from {t}').fetchone()[0] if t in tables else 0}")
    if "CUDA_GRAPH_EVENTS" in tables:
        row.append(str(db.execute("select s.value, e.graphId, e.originalGraphId, e.graphExecId "
                                  "from CUDA_GRAPH_EVENTS e join StringIds s on s.id = e.nameId "
                                  "order by e.start").fetchall()))
    if "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in tables:
        row.append("graph trace ids " + str(db.execute(
            "select graphId, count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE group by graphId").fetchall()))
    print(" ".join(row))
PY
  ls -la "$files"
}

main 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$files/log.txt"
tar czf "$OUT/files.tgz" -C "$files" .
ls -la "$OUT"
