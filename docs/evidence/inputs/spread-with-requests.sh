#!/usr/bin/env bash
# Two traces with serving results (--requests) and their iteration log, under `mpirun -n 2`, with
# two sightline binaries: which process read which rank file (the report's `run` object: none when
# process 0 read them all), and whether the report apart from `run` equals the one of a single
# process (--jobs 1) of the same binary.
# Usage: bash docs/evidence/inputs/spread-with-requests.sh OLD_SIGHTLINE NEW_SIGHTLINE OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../../.."
OLD=$1; NEW=$2; OUT=$3; mkdir -p "$OUT"
S=examples/samples
args=(analyze "$S/serving_loop_h100.slrec" "$S/llama_decode_h100.nsys.sqlite"
      --requests "$S/serving_loop_h100.requests.jsonl"
      --iteration-log "$S/serving_loop_h100.iterations.jsonl" --format json)
for side in old new; do
  bin=$OLD; [ "$side" = new ] && bin=$NEW
  "$bin" "${args[@]}" --jobs 1 -o "$OUT/$side.jobs1.json"
  mpirun --oversubscribe --allow-run-as-root -n 2 "$bin" "${args[@]}" -o "$OUT/$side.mpi2.json"
  python3 - "$OUT/$side.jobs1.json" "$OUT/$side.mpi2.json" "$side" <<'PY'
import json, sys
one, mpi = (json.load(open(p)) for p in sys.argv[1:3])
run = mpi.pop("run", None)
one.pop("run", None)
print(f"{sys.argv[3]}: run={json.dumps(run)}; itl_by_gc joined: {'itl_by_gc' in json.dumps(one)}; "
      f"report apart from run equal to --jobs 1: {one == mpi}")
PY
done
cmp -s "$OUT/old.jobs1.json" "$OUT/new.jobs1.json" && echo "old and new --jobs 1 reports: identical" ||
  echo "old and new --jobs 1 reports: DIFFERENT"
