#!/usr/bin/env bash
# The MPI path of `analyze` gives the report of one process (ctest mpi_analyze; skipped, exit 77,
# when the build has no MPI). Generated ranks: 2 hosts' clocks, a straggler (rank 3).
#   mpi_analyze_test.sh SIGHTLINE MPIEXEC SOURCE_DIR WORK_DIR
set -euo pipefail
sightline=$1 mpiexec=$2 src=$3 work=$4
if [ -z "$mpiexec" ] || ! command -v "$mpiexec" >/dev/null; then
  echo "mpiexec not found: skipped"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
python3 "$src/bench/gen_rank_job.py" --ranks 6 --ranks-per-host 4 --kernels 400 --straggler 3 \
  --jobs 1 -o "$work/job" 2>/dev/null
# Open MPI refuses root unless told; CI containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Under the sanitizer build, Open MPI's own plugins leak by design (LeakSanitizer lists blocks from
# libmpi and its dlclose'd components): leak checks are off for the MPI runs only; the same analysis
# code runs leak-checked in the single-process runs above and below.
mpi=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$mpiexec" --oversubscribe -n 2)

"$sightline" analyze --format json -j 1 "$work/job" -o "$work/single.json"
"$sightline" analyze --format json -j 2 "$work/job" -o "$work/threads.json"
"${mpi[@]}" "$sightline" analyze --format json "$work/job" -o "$work/mpi.json"
"$sightline" analyze --format json --ranks-only "$work/job" -o "$work/single_ranks.json"
"${mpi[@]}" "$sightline" analyze --format json --ranks-only "$work/job" -o "$work/mpi_ranks.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
single, threads, mpi = (json.load(open(f"{w}/{n}.json")) for n in ("single", "threads", "mpi"))
assert "run" not in single and "run" not in threads, "one process: no run record"
run = mpi.pop("run")
assert run["mpi_processes"] == 2, run
assert run["ranks_per_process"] == [3, 3], run
assert run["slowest_process"] in (0, 1) and len(run["seconds_per_process"]) == 2, run
assert threads == single, "threads report differs from one thread"
assert mpi == single, "MPI report differs from the single-process one"
ranks = next(s for s in single["sections"] if s["key"] == "ranks")
facts = ranks["facts"]
assert facts["ranks"] == 6 and facts["straggler_rank"] == 3, facts
assert facts["collective_matching"].startswith("process group and sequence number"), facts
# Ranks 4 and 5 are on a second host whose clock is 1.712345 ms ahead.
offsets = {row["rank"]: row["clock_offset_ns"] for row in ranks["tables"]["ranks"]["rows"]}
assert all(abs(offsets[r] - 1_712_345) < 10_000 for r in (4, 5)), offsets
assert all(abs(offsets[r]) < 10_000 for r in (1, 2, 3)), offsets
# --ranks-only: the same ranks section, no per-rank sections, under MPI too.
sr, mr = (json.load(open(f"{w}/{n}.json")) for n in ("single_ranks", "mpi_ranks"))
mr.pop("run")
assert sr == mr, "--ranks-only: MPI report differs from the single-process one"
assert [s["key"] for s in sr["sections"]] == ["ranks"], [s["key"] for s in sr["sections"]]
assert sr["sections"][0] == ranks, "--ranks-only changes the ranks section"
assert len(sr["inputs"]) == 6
print("mpi_analyze: MPI (2 processes), 2 threads and 1 thread give the same report")
PY

# Hosts from tensorboard_trace_handler's file names ({hostname}_{pid}.{time}.pt.trace.json): one
# clock offset per host, the same under MPI; ranks 2 and 3 share host1's 1.712345 ms.
python3 "$src/bench/gen_rank_job.py" --ranks 4 --ranks-per-host 2 --kernels 200 --straggler 1 \
  --names tensorboard --jobs 1 -o "$work/tb" 2>/dev/null
"$sightline" analyze --format json --ranks-only -j 1 "$work/tb" -o "$work/tb_single.json"
"${mpi[@]}" "$sightline" analyze --format json --ranks-only "$work/tb" -o "$work/tb_mpi.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
single, mpi = (json.load(open(f"{w}/tb_{n}.json")) for n in ("single", "mpi"))
assert mpi.pop("run")["ranks_per_process"] == [2, 2]
assert mpi == single, "hosts from file names: MPI report differs from the single-process one"
ranks = single["sections"][0]
facts = ranks["facts"]
assert facts["host_source"] == "file name" and facts["hosts"] == 2, facts
assert facts["straggler_rank"] == 1, facts
hosts = {row["host"]: row for row in ranks["tables"]["hosts"]["rows"]}
assert hosts["host0"]["ranks"] == "0, 1" and hosts["host0"]["clock_offset_ns"] == 0, hosts
assert hosts["host1"]["ranks"] == "2, 3", hosts
assert abs(hosts["host1"]["clock_offset_ns"] - 1_712_345) < 10_000, hosts
assert all(row["host"] == ("host0" if row["rank"] < 2 else "host1")
           for row in ranks["tables"]["ranks"]["rows"]), ranks["tables"]["ranks"]["rows"]
print("mpi_analyze: hosts from file names, one offset per host, the same under MPI")
PY

# The shared HTA rank traces (real PyTorch traces of two ranks), when present.
shared="$src/../shared/traces"
if [ -e "$shared/kineto_hta_sampled_rank0.json.gz" ]; then
  hta=("$shared/kineto_hta_sampled_rank0.json.gz" "$shared/kineto_hta_sampled_rank1.json.gz")
  "$sightline" analyze --format json -j 1 "${hta[@]}" -o "$work/hta_single.json"
  "${mpi[@]}" "$sightline" analyze --format json "${hta[@]}" -o "$work/hta_mpi.json"
  python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
single, mpi = (json.load(open(f"{w}/{n}.json")) for n in ("hta_single", "hta_mpi"))
assert mpi.pop("run")["ranks_per_process"] == [1, 1]
assert mpi == single, "HTA ranks: MPI report differs from the single-process one"
print("mpi_analyze: the shared HTA ranks give the same report under MPI")
PY
fi

# A bad rank file: process 0 names it, exit 2, no report written.
cp "$work/job/rank00000.json" "$work/bad.json"
mkdir -p "$work/badjob" && cp "$work"/job/rank0000[0-2].json "$work/badjob/"
echo '{"traceEvents": [' > "$work/badjob/rank00003.json"
set +e
"${mpi[@]}" "$sightline" analyze --format json "$work/badjob" -o "$work/bad_report.json" \
  2>"$work/bad.err"
rc=$?
set -e
if [ "$rc" -ne 2 ] || [ -e "$work/bad_report.json" ] || ! grep -q "rank00003.json" "$work/bad.err"; then
  echo "bad input under MPI: want exit 2, no report, the file named; got $rc:"
  cat "$work/bad.err"
  exit 1
fi
echo "mpi_analyze: a bad rank under MPI exits 2 and writes nothing"
