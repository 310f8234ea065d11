#!/usr/bin/env bash
# Scale figures for docs/PERFORMANCE.md ("Many ranks"): one job directory analysed by one process
# (one thread, then --jobs 2) and by `mpirun -n 2`; wall time and peak RSS per process
# (/usr/bin/time), and a check that the reports are equal apart from the MPI run record.
#   bash bench/scale_ranks.sh JOB_DIR [SIGHTLINE]   (JOB_DIR from bench/gen_rank_job.py)
set -euo pipefail
dir=$1
sightline=${2:-build/src/sightline}
out=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
files=$(find "$dir" -maxdepth 1 -name '*.json*' | wc -l)
bytes=$(du -sb "$dir" | cut -f1)
echo "job: $files rank files, $((bytes / 1000000)) MB; $(nproc) cores"
cat "$dir"/* >/dev/null  # into the page cache: every run reads warm files
fmt="%e s wall, %M KB peak RSS"
echo -n "1 process, --jobs 1: "
/usr/bin/time -f "$fmt" "$sightline" analyze -q -j 1 --format json "$dir" -o "$out/j1.json" 2>&1
echo -n "1 process, --jobs 2: "
/usr/bin/time -f "$fmt" "$sightline" analyze -q -j 2 --format json "$dir" -o "$out/j2.json" 2>&1
echo "mpirun -n 2 (per process):"
/usr/bin/time -f "  total: $fmt (mpirun)" mpirun --oversubscribe -n 2 \
  /usr/bin/time -f "  process: $fmt" "$sightline" analyze -q --format json "$dir" -o "$out/mpi.json" 2>&1
echo -n "1 process, --jobs 1, --ranks-only: "
/usr/bin/time -f "$fmt" "$sightline" analyze -q -j 1 --ranks-only --format json "$dir" \
  -o "$out/r1.json" 2>&1
echo "mpirun -n 2, --ranks-only (per process):"
/usr/bin/time -f "  total: $fmt (mpirun)" mpirun --oversubscribe -n 2 \
  /usr/bin/time -f "  process: $fmt" "$sightline" analyze -q --ranks-only --format json "$dir" \
  -o "$out/rmpi.json" 2>&1
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
a, b, m = (json.load(open(f"{d}/{n}.json")) for n in ("j1", "j2", "mpi"))
run = m.pop("run")
print("mpi run record:", json.dumps(run))
print("reports equal (1 thread, 2 threads, 2 MPI processes):", a == b == m)
r, rm = (json.load(open(f"{d}/{n}.json")) for n in ("r1", "rmpi"))
rm.pop("run")
print("--ranks-only reports equal (1 process, 2 MPI processes):", r == rm)
print("report sizes: %.1f MB JSON; --ranks-only %.1f MB"
      % (len(json.dumps(a)) / 1e6, len(json.dumps(r)) / 1e6))
PY
rm -rf "$out"
