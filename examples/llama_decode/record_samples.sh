#!/usr/bin/env bash
# Records Sightline's shipped sample traces (examples/samples/) on a GPU machine.
#
# Run from the repository root, with /work/shared/device/ (or ../shared/device/) copied to .device/device/:
#   OUT=out/samples examples/llama_decode/record_samples.sh [extra make_samples.py args]
# Writes into $OUT:
#   $NAME.nsys.sqlite         nsys (cuda,nvtx) capture of make_samples.py --mode nsys, exported to SQLite
#   $NAME.nsys_kern_sum.csv   `nsys stats --report cuda_gpu_kern_sum --format csv` of that SQLite file
#   $NAME.pytorch.json.gz     torch.profiler (CPU+CUDA) Chrome trace of make_samples.py --mode torch
#   $NAME.nsys-rep            the raw nsys report (not shipped)
#   record.log                everything printed (versions, ITLs, stats)
set -uo pipefail
OUT=${OUT:-out/samples}
NAME=${NAME:-llama_decode_h100}
DEV=${DEV:-.device/device}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
script=examples/llama_decode/make_samples.py
tmp=$(mktemp -d)

main() {
  set -e
  echo "== date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(uname -m) $(uname -r)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  # shellcheck disable=SC1090
  source "$DEV/nsys-env.sh" "$DEV"
  echo "== nsys: $NSYS"; "$NSYS" --version

  echo "== baseline (no profiler)"
  python3 "$script" --mode none "$@"

  echo "== nsys profile"
  "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none --force-overwrite true -o "$tmp/$NAME" \
      python3 "$script" --mode nsys "$@"
  [ -f "$tmp/$NAME.nsys-rep" ] || "$QDSTRM_IMPORTER" -i "$tmp/$NAME.qdstrm"
  "$NSYS" export --type sqlite --force-overwrite true -o "$tmp/$NAME.sqlite" "$tmp/$NAME.nsys-rep"
  cp "$tmp/$NAME.sqlite" "$OUT/$NAME.nsys.sqlite"
  cp "$tmp/$NAME.nsys-rep" "$OUT/$NAME.nsys-rep"

  echo "== nsys stats cuda_gpu_kern_sum"
  "$NSYS" stats --report cuda_gpu_kern_sum --format csv --force-overwrite true \
      --output "$tmp/ks" "$tmp/$NAME.sqlite"
  cp "$tmp"/ks*cuda_gpu_kern_sum*.csv "$OUT/$NAME.nsys_kern_sum.csv"
  head -n 15 "$OUT/$NAME.nsys_kern_sum.csv"

  echo "== SQLite contents"
  python3 - "$OUT/$NAME.nsys.sqlite" <<'PY'
import sqlite3, sys, os
db = sqlite3.connect(sys.argv[1])
tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "StringIds"):
    print(f"{t}: {db.execute(f'select count(*) from {t}').fetchone()[0] if t in tables else 'absent'}")
print("distinct kernel names:", db.execute(
    "select count(distinct shortName) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])
print("iteration ranges:", db.execute(
    "select count(*) from NVTX_EVENTS where text like 'iteration_%'").fetchone()[0])
print("size bytes:", os.path.getsize(sys.argv[1]))
PY

  echo "== torch.profiler"
  python3 "$script" --mode torch --trace "$OUT/$NAME.pytorch.json.gz" "$@"
  ls -l "$OUT"
}

main "$@" 2>&1 | tee "$OUT/record.log"
rc=${PIPESTATUS[0]}
rm -rf "$tmp"
exit "$rc"
