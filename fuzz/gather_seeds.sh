#!/usr/bin/env bash
# Gathers the seed corpora of the fuzz targets (fuzz/fuzz_*.cc) into DIR/<target>/ (default
# build-asan/fuzz-seeds) from tests/data, examples/samples and fuzz/seeds. Large files are cut down: nsys
# exports to their first rows per table (StringIds included: names whose ids are gone become
# unknown-string diagnostics) in 512-byte pages; Nsight Compute CSVs and JSON-lines logs to their
# first lines; recorder files to their first 64 KiB (the reader reports a cut-off chunk as a damaged
# tail). Nothing here is committed; run it again after adding test data.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-asan/fuzz-seeds}
rm -rf "$out"
for t in nsys_sqlite nsys_rows kineto_json kineto_gzip recorder ncu_csv sweep_csv iteration_log \
         requests trt gpu_metrics_config torch_snapshot pipeline; do
  mkdir -p "$out/fuzz_$t"
done

# An nsys export with its first ROWS rows per table, vacuumed into 512-byte pages.
shrink_sqlite() {  # SRC DST ROWS
  python3 - "$1" "$2" "$3" <<'PY'
import shutil, sqlite3, sys
src, dst, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
for t in tables:
    if t.startswith("ENUM_"):
        continue  # the enums the kept rows refer to
    try:
        db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" LIMIT {rows})')
    except sqlite3.OperationalError:
        pass  # a table without rowid: kept whole
db.commit()
db.execute("PRAGMA page_size = 512")
db.execute("VACUUM")
db.close()
PY
}
n=0
for f in tests/data/nsys/*.sqlite examples/samples/*.sqlite; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  shrink_sqlite "$f" "$out/fuzz_nsys_sqlite/$n.sqlite" 8
done

cp tests/data/kineto/*.json tests/data/kineto/*.json.gz "$out/fuzz_kineto_json/"
cp tests/data/kineto/*.json "$out/fuzz_kineto_gzip/"

for f in tests/data/recorder/*.slrec examples/samples/*.slrec; do
  if [ -f "$f" ]; then head -c 65536 "$f" > "$out/fuzz_recorder/$(basename "$f")"; fi
done

for f in tests/data/ncu/*.csv; do cp "$f" "$out/fuzz_ncu_csv/"; done
for f in tests/data/ncu/*_details.csv.gz; do  # one row per metric
  (gzip -dc "$f" || true) | head -n 60 > "$out/fuzz_ncu_csv/$(basename "$f" .gz)"
done
for f in tests/data/ncu/*_raw.csv.gz; do  # header, units, then one row per kernel
  (gzip -dc "$f" || true) | head -n 4 > "$out/fuzz_ncu_csv/$(basename "$f" .gz)"
done
for f in examples/case_studies/fp8_block_quant/results/ncu_*_source_*.csv; do  # source page
  head -n 40 "$f" > "$out/fuzz_ncu_csv/$(basename "$f")"
done

cp fuzz/seeds/sweep_csv/* "$out/fuzz_sweep_csv/"

cp fuzz/seeds/gpu_metrics_config/* "$out/fuzz_gpu_metrics_config/"

cp fuzz/seeds/iteration_log/* "$out/fuzz_iteration_log/"
for f in examples/samples/*.iterations.jsonl; do
  if [ -f "$f" ]; then head -n 20 "$f" > "$out/fuzz_iteration_log/$(basename "$f")"; fi
done

cp tests/data/serving/*.json tests/data/serving/*.jsonl "$out/fuzz_requests/"
for f in examples/samples/*.requests.jsonl; do
  if [ -f "$f" ]; then head -n 20 "$f" > "$out/fuzz_requests/$(basename "$f")"; fi
done

cp tests/data/trt/*.json "$out/fuzz_trt/"

cp tests/data/torch_snapshot/*.pickle "$out/fuzz_torch_snapshot/"

# The inputs that once crashed a reader (tests/data/fuzz_regressions/<target>/) start its corpus too.
for d in tests/data/fuzz_regressions/*/; do
  t=$(basename "$d")
  if [ -d "$out/$t" ]; then cp "$d"* "$out/$t/"; fi
done

# The whole-program target reads any file through the front door: it starts from every reader's
# seeds (not the row and GPU-metrics-config fuzzers', which are value encodings).
for d in "$out"/fuzz_*/; do
  t=$(basename "$d")
  case $t in fuzz_pipeline | fuzz_nsys_rows | fuzz_gpu_metrics_config) continue ;; esac
  for f in "$d"*; do
    if [ -f "$f" ]; then cp "$f" "$out/fuzz_pipeline/${t#fuzz_}_$(basename "$f")"; fi
  done
done

# The row fuzzer's inputs are value encodings, not files: it starts from nothing.
du -sh "$out"/* | sed "s|$out/||"
