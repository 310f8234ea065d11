#!/usr/bin/env bash
# The benchmark behind docs/PERFORMANCE.md, in one run: builds Sightline (Release), generates the
# synthetic traces, then for each trace measures wall time and peak RSS of
#   sightline analyze FILE --format json -o OUT
# (median of $RUNS runs; Kineto pinned to one core, nsys on all cores and on one) and, in the same
# run, what a user would otherwise run:
#   Kineto .json    python3 bench/py_kernel_summary.py FILE   (json module + kernel summary)
#   Kineto .json.gz gzip -dc FILE > /dev/null                 (the inflater alone)
#   nsys .sqlite    sqlite3 FILE < bench/nsys_kern_sum.sql    (nsys's cuda_gpu_kern_sum in SQL)
# then the Google Benchmark suite (bench/analyze_bench.cc) for the per-stage breakdown.
# The table is printed last and written to $RESULTS/table.md, with the raw logs beside it.
#
# Usage: bash bench/run_benchmarks.sh
# Environment (defaults in brackets):
#   BUILD_DIR [build-bench]  DATA_DIR [$BUILD_DIR/bench-data]  RUNS [3]  CPU [0] (taskset core)
#   NSYS_SIZES ["100000 1000000 10000000"]  KINETO_SIZES ["100000 500000 1000000"]  (kernels;
#     empty: none; gen_kineto_json.py writes ~1.8 KB of JSON per kernel: 10^6 kernels = 1.8 GB)
#   NSYS_ONE_CORE [1] also measure the nsys files pinned to one core
#   PY_MAX_MB [auto: min(1000, MemAvailable / 8)] skip the Python comparison above this JSON size
#     (json.load peaks at ~6x the file and runs at a few MB/s)
#   PROFILE [1] perf-profile the largest file of each format (when perf works)
#   NO_HUGEPAGES_ROW [1] add a diagnostic row: the largest nsys file with SIGHTLINE_NO_HUGEPAGES=1
#   GBENCH [1] run sightline_bench   KEEP_DATA [1] 0 deletes the generated traces at the end
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build-bench}
DATA_DIR=${DATA_DIR:-$BUILD_DIR/bench-data}
RUNS=${RUNS:-3}
CPU=${CPU:-0}
NSYS_SIZES=${NSYS_SIZES-"100000 1000000 10000000"}
KINETO_SIZES=${KINETO_SIZES-"100000 500000 1000000"}
GBENCH=${GBENCH:-1}
NSYS_ONE_CORE=${NSYS_ONE_CORE:-1}
PROFILE=${PROFILE:-1}
NO_HUGEPAGES_ROW=${NO_HUGEPAGES_ROW:-1}
KEEP_DATA=${KEEP_DATA:-1}
MEM_AVAIL_MB=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
PY_MAX_MB=${PY_MAX_MB:-$((MEM_AVAIL_MB / 8 < 1000 ? MEM_AVAIL_MB / 8 : 1000))}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=${RESULTS:-$BUILD_DIR/bench-results/$STAMP}
PIN=(taskset -c "$CPU")

log() { echo "run_benchmarks: $*" >&2; }

# --- dependencies and build ------------------------------------------------------------------
bash scripts/install-deps.sh
if [ ! -x /usr/bin/time ]; then
  log "installing the Debian package 'time' (for /usr/bin/time)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends time >/dev/null
fi
mkdir -p "$RESULTS" "$DATA_DIR"
RESULTS=$(cd "$RESULTS" && pwd)
DATA_DIR=$(cd "$DATA_DIR" && pwd)
log "building (Release) in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$RESULTS/cmake.log"
targets=(sightline)
[ "$GBENCH" = 1 ] && targets+=(sightline_bench)
if ! cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${targets[@]}" >"$RESULTS/build.log" 2>&1; then
  grep -E "error|FAILED" "$RESULTS/build.log" | head -20 >&2
  log "build failed (full log: $RESULTS/build.log)"; exit 1
fi
SIGHTLINE=$ROOT/$BUILD_DIR/src/sightline

# --- machine ---------------------------------------------------------------------------------
{
  echo "date (UTC): $(date -u '+%Y-%m-%d %H:%M')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src 2>/dev/null || echo ' + uncommitted changes under src/')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), nproc $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel: $(uname -r); compiler: $(c++ --version | head -1); python: $(python3 --version 2>&1); sqlite3: $(sqlite3 --version | cut -d' ' -f1); gzip: $(gzip --version | head -1)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "runs per figure: $RUNS (median); one-core rows pinned with: ${PIN[*]}"
} | tee "$RESULTS/machine.txt" >&2

# --- traces ----------------------------------------------------------------------------------
# Rough sizes: nsys ~110 B per kernel (with launches, syncs, NVTX); Kineto ~1.8 KB JSON + gzip.
need_mb=0
for n in $NSYS_SIZES; do [ -e "$DATA_DIR/nsys_$n.sqlite" ] || need_mb=$((need_mb + n / 9000)); done
for n in $KINETO_SIZES; do [ -e "$DATA_DIR/kineto_$n.json" ] || need_mb=$((need_mb + n / 450)); done
free_mb=$(df -Pm "$DATA_DIR" | awk 'NR == 2 {print $4}')
log "disk: ${free_mb} MB free under $DATA_DIR, about ${need_mb} MB needed for new traces"
if [ "$need_mb" -gt "$free_mb" ]; then
  log "not enough disk space for the traces; lower NSYS_SIZES/KINETO_SIZES"; exit 1
fi

generate() {  # OUT COMMAND...: runs COMMAND (which writes OUT.tmp) unless OUT exists
  local out=$1; shift
  [ -e "$out" ] && return 0
  log "generating $(basename "$out")"
  local t0=$SECONDS
  "$@"
  mv "$out.tmp" "$out"
  log "  done in $((SECONDS - t0)) s, $(($(stat -c %s "$out") / 1000000)) MB"
}
for n in $NSYS_SIZES; do
  generate "$DATA_DIR/nsys_$n.sqlite" python3 bench/gen_nsys_sqlite.py --kernels "$n" \
    --out "$DATA_DIR/nsys_$n.sqlite.tmp"
done
for n in $KINETO_SIZES; do
  generate "$DATA_DIR/kineto_$n.json" python3 bench/gen_kineto_json.py --kernels "$n" \
    --output "$DATA_DIR/kineto_$n.json.tmp"
  generate "$DATA_DIR/kineto_$n.json.gz" \
    sh -c "gzip -c '$DATA_DIR/kineto_$n.json' > '$DATA_DIR/kineto_$n.json.gz.tmp'"
done

# --- measurements ----------------------------------------------------------------------------
# measure NAME CORES CMD...: runs CMD $RUNS times, pinned to core $CPU when CORES is 1 (else on
# any core), and appends "NAME run wall_s maxrss_kb cpu_s" lines to $RESULTS/runs.tsv.
measure() {
  local name=$1 cores=$2; shift 2
  local pin=()
  [ "$cores" = 1 ] && pin=("${PIN[@]}")
  for r in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M %U %S" -o "$RESULTS/time.tmp" "${pin[@]}" "$@" \
      >"$RESULTS/$name.stdout" 2>"$RESULTS/$name.stderr" || {
      log "FAILED: $* (see $RESULTS/$name.stderr)"; tail -5 "$RESULTS/$name.stderr" >&2
      echo "$name $r nan nan nan" >>"$RESULTS/runs.tsv"; continue; }
    read -r wall rss user sys <"$RESULTS/time.tmp"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
    echo "$name $r $wall $rss $cpu" >>"$RESULTS/runs.tsv"
    log "  $name run $r: $wall s wall, $cpu s CPU, $((rss / 1024)) MB peak RSS"
  done
}
# One line per table row: row file bytes uncompressed_bytes kernels comparison comparison_row cores
: >"$RESULTS/runs.tsv"
: >"$RESULTS/files.tsv"

# nsys: the importer reads tables on worker threads, so the 15 s target is measured on all cores
# (the sqlite3 tool uses one); NSYS_ONE_CORE=1 adds the same runs pinned to one core.
for n in $NSYS_SIZES; do
  f=$DATA_DIR/nsys_$n.sqlite
  row=nsys_$n.sqlite
  sz=$(stat -c %s "$f")
  cat "$f" >/dev/null  # every run sees a warm page cache
  log "$row"
  echo "$row $row $sz $sz $n sqlite3 $row all" >>"$RESULTS/files.tsv"
  measure "sightline.$row" all "$SIGHTLINE" analyze "$f" --format json -o "$RESULTS/report.$row.json"
  if [ "$NSYS_ONE_CORE" = 1 ]; then
    echo "$row@1core $row $sz $sz $n sqlite3 $row 1" >>"$RESULTS/files.tsv"
    measure "sightline.$row@1core" 1 "$SIGHTLINE" analyze "$f" --format json \
      -o "$RESULTS/report.$row@1core.json"
  fi
  measure "compare.$row" all sqlite3 -csv -header "$f" ".read bench/nsys_kern_sum.sql"
done
# Diagnostic (not a product figure): the largest nsys file again without the huge-page malloc that
# sightline asks glibc for at start-up (src/cli/main.cc), to show what 4 KiB page faults cost here.
n=$(echo $NSYS_SIZES | awk '{print $NF}')
if [ "$NO_HUGEPAGES_ROW" = 1 ] && [ -n "$n" ]; then
  row=nsys_$n.sqlite
  sz=$(stat -c %s "$DATA_DIR/$row")
  echo "$row@nohp $row $sz $sz $n sqlite3 $row all" >>"$RESULTS/files.tsv"
  log "$row with SIGHTLINE_NO_HUGEPAGES=1"
  measure "sightline.$row@nohp" all env SIGHTLINE_NO_HUGEPAGES=1 "$SIGHTLINE" analyze \
    "$DATA_DIR/$row" --format json -o "$RESULTS/report.$row@nohp.json"
fi
# Kineto: everything on one core (the target is per core).
for n in $KINETO_SIZES; do
  f=$DATA_DIR/kineto_$n.json
  row=kineto_$n.json
  sz=$(stat -c %s "$f"); gz=$(stat -c %s "$f.gz")
  size_mb=$((sz / 1000000))
  if [ "$size_mb" -le "$PY_MAX_MB" ]; then cmp=python; else cmp=python-skipped; fi
  echo "$row $row $sz $sz $n $cmp $row 1" >>"$RESULTS/files.tsv"
  echo "$row.gz $row.gz $gz $sz $n gzip $row.gz 1" >>"$RESULTS/files.tsv"
  cat "$f" "$f.gz" >/dev/null
  log "$row"
  measure "sightline.$row" 1 "$SIGHTLINE" analyze "$f" --format json -o "$RESULTS/report.$row.json"
  if [ "$cmp" = python ]; then
    measure "compare.$row" 1 python3 bench/py_kernel_summary.py "$f"
  else
    log "  python comparison skipped: $size_mb MB > PY_MAX_MB=$PY_MAX_MB (json.load needs ~6x)"
  fi
  log "$row.gz"
  measure "sightline.$row.gz" 1 "$SIGHTLINE" analyze "$f.gz" --format json \
    -o "$RESULTS/report.$row.gz.json"
  measure "compare.$row.gz" 1 sh -c "gzip -dc '$f.gz' >/dev/null"
done
rm -f "$RESULTS/time.tmp"

# --- Google Benchmark breakdown --------------------------------------------------------------
if [ "$GBENCH" = 1 ]; then
  log "sightline_bench (Google Benchmark; traces of 10^5 and 10^6 kernels)"
  # The same malloc setting the sightline binary gives itself at start-up (src/cli/main.cc).
  tunables=${GLIBC_TUNABLES-glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0}
  [ -n "${SIGHTLINE_NO_HUGEPAGES:-}" ] && tunables=${GLIBC_TUNABLES-}
  GLIBC_TUNABLES=$tunables SIGHTLINE_BENCH_DATA=$DATA_DIR "$BUILD_DIR/bench/sightline_bench" \
    --benchmark_out="$RESULTS/gbench.json" --benchmark_out_format=json \
    2>"$RESULTS/gbench.stderr" | tee "$RESULTS/gbench.txt" >&2 || log "sightline_bench failed"
fi

# --- profiles ---------------------------------------------------------------------------------
# One perf profile of the largest file of each format (not timed): the top symbols, and the share
# of samples spent in page faults and in system calls (kernel call chains need no frame pointers).
if [ "$PROFILE" = 1 ] && perf stat -e task-clock true >/dev/null 2>&1; then
  : >"$RESULTS/profile.txt"
  profile() {  # LABEL CORES FILE
    local label=$1 cores=$2 f=$3 pin=()
    [ "$cores" = 1 ] && pin=("${PIN[@]}")
    log "perf profile: $label"
    perf record -q -g -o "$RESULTS/perf.data" "${pin[@]}" "$SIGHTLINE" analyze "$f" --format json \
      -o "$RESULTS/profile.report.json" >/dev/null 2>&1 || { log "perf record failed"; return; }
    {
      echo "== $label: $(basename "$f"), cores: $cores"
      # comm: "exe" after sightline re-executes itself through /proc/self/exe (src/cli/main.cc).
      perf report -i "$RESULTS/perf.data" --comm sightline,exe --children -g none --stdio \
        2>/dev/null |
        grep -E "^ +[0-9.]+% +[0-9.]+% .*\[k\] (asm_exc_page_fault|entry_SYSCALL_64_after_hwframe)$" |
        awk '{print "  " $1 " of samples under " $NF " (incl. children; comm " $3 ")"}' || true
      echo "  top symbols (self):"
      perf report -i "$RESULTS/perf.data" --comm sightline,exe --no-children -g none \
        --percent-limit 1 --stdio 2>/dev/null |
        grep -E "^ +[0-9]" | cut -c1-150 | head -25 || true
      echo
    } >>"$RESULTS/profile.txt"
    rm -f "$RESULTS/perf.data" "$RESULTS/profile.report.json"
  }
  n=$(echo $NSYS_SIZES | awk '{print $NF}')
  if [ -n "$n" ]; then profile nsys all "$DATA_DIR/nsys_$n.sqlite"; fi
  n=$(echo $KINETO_SIZES | awk '{print $NF}')
  if [ -n "$n" ]; then
    profile kineto 1 "$DATA_DIR/kineto_$n.json"
    profile kineto-gz 1 "$DATA_DIR/kineto_$n.json.gz"
  fi
fi

# --- table -----------------------------------------------------------------------------------
python3 - "$RESULTS" >"$RESULTS/table.md" <<'EOF'
import csv, json, statistics, sys
res = sys.argv[1]
runs = {}
for line in open(f"{res}/runs.tsv"):
    name, _, wall, rss, cpu = line.split()
    runs.setdefault(name, []).append((float(wall), float(rss), float(cpu)))

def med(name):
    r = [x for x in runs.get(name, []) if x[0] == x[0]]
    if not r:
        return None, None, None
    return (statistics.median(x[0] for x in r), statistics.median(x[1] for x in r) * 1024 / 1e6,
            statistics.median(x[2] for x in r))


def reported_kernels(name):
    # Kernels in Sightline's own report (overview facts): checks that nothing was dropped.
    try:
        report = json.load(open(f"{res}/report.{name}.json"))
        return sum(s["facts"]["kernels"] for s in report["sections"] if s["key"] == "overview")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def instances(name):
    # Kernels counted by the comparison itself (sum of its Instances column): checks the generator.
    try:
        rows = list(csv.reader(open(f"{res}/compare.{name}.stdout")))
        return sum(int(r[2]) for r in rows[1:] if len(r) > 2)
    except (OSError, ValueError):
        return None

label = {"sqlite3": "sqlite3 + kern_sum SQL", "python": "python json + summary",
         "gzip": "gzip -dc", "python-skipped": "python (skipped: memory)"}
notes = []
print("| file | cores | size MB | kernels | sightline s | (CPU s) | MB/s | peak RSS MB | RSS / input | comparison "
      "| comparison s | (CPU s) | comparison peak RSS MB | comparison s / sightline s |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|")
for line in open(f"{res}/files.tsv"):
    name, _, size, usize, kernels, cmp, cmp_row, cores = line.split()
    size, usize = int(size), int(usize)
    s, rss, scpu = med(f"sightline.{name}")
    c, crss, ccpu = med(f"compare.{cmp_row}")
    fmt = lambda v, p: "—" if v is None else f"{v:,.{p}f}"
    mbps = None if s is None else usize / 1e6 / s
    size_txt = f"{size / 1e6:,.0f}" + (f" ({usize / 1e6:,.0f} unz.)" if usize != size else "")
    shown = name.split("@")[0] + (" (no huge pages)" if name.endswith("@nohp") else "")
    print(f"| {shown} | {cores} | {size_txt} | {int(kernels):,} | {fmt(s, 2)} | {fmt(scpu, 2)} | {fmt(mbps, 0)} | {fmt(rss, 0)} "
          f"| {fmt(None if rss is None else rss * 1e6 / usize, 2)} "
          f"| {label[cmp]} | {fmt(c, 2)} | {fmt(ccpu, 2)} | {fmt(crss, 0)} "
          f"| {fmt(None if c is None or not s else c / s, 2)} |")
    counts = [("sightline", reported_kernels(name))]
    if cmp in ("python", "sqlite3"):
        counts.append(("the comparison", instances(cmp_row)))
    for who, got in counts:
        if got is None and who == "sightline":
            notes.append(f"{name}: no kernel count in sightline's report")
        elif got is not None and got != int(kernels):
            notes.append(f"{name}: {who} counted {got:,} kernels, expected {int(kernels):,}")
print()
# Gzip: what reading .json.gz costs beyond .json, next to gzip -dc on the same file.
for line in open(f"{res}/files.tsv"):
    name, _, size, usize, kernels, cmp, cmp_row, cores = line.split()
    if cmp != "gzip":
        continue
    gz_s, _, gz_cpu = med(f"sightline.{name}")
    js_s, _, js_cpu = med(f"sightline.{name[:-3]}")
    dc_s, _, dc_cpu = med(f"compare.{name}")
    if None in (gz_s, js_s, dc_s):
        continue
    extra = gz_cpu - js_cpu
    rate = f"{extra:+.2f} s CPU for .gz"
    print(f"- {name}: sightline takes {gz_s:.2f} s wall ({gz_cpu:.2f} s CPU) on .gz vs "
          f"{js_s:.2f} s ({js_cpu:.2f} s CPU) on .json ({rate}); `gzip -dc` alone takes "
          f"{dc_s:.2f} s wall ({dc_cpu:.2f} s CPU, {int(usize) / 1e6 / max(dc_cpu, 1e-9):,.0f} "
          f"MB/s).")
print()
for n in notes:
    print(f"WARNING: {n}  ")
print("cores: 1 = pinned with taskset to one core, all = free to use every core (the nsys "
      "importer reads tables on worker threads; sqlite3, gzip and python use one core). "
      "The comparison runs under the same pinning as the sightline row it belongs to, except "
      "that the nsys rows share one sqlite3 measurement made on all cores.  ")
if any(l.split()[0].endswith("@nohp") for l in open(f"{res}/files.tsv")):
    print("(no huge pages): a diagnostic row, the same run with SIGHTLINE_NO_HUGEPAGES=1 (glibc's "
          "malloc left on 4 KiB pages), to show the cost of page faults.  ")
print("Medians of each figure over the runs in runs.tsv (wall time; CPU s = user + sys). "
      "MB = 10^6 bytes; MB/s = uncompressed input (the JSON for .json.gz) / sightline wall s; "
      "RSS / input = peak RSS / uncompressed input size.")
EOF
{
  echo
  echo "Machine and run:"
  sed 's/^/  /' "$RESULTS/machine.txt"
  echo "  load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Results in $RESULTS (raw runs: runs.tsv; profiles: profile.txt; Google Benchmark: gbench.txt)"
  echo
  cat "$RESULTS/table.md"
} | tee "$RESULTS/summary.txt"

if [ "$KEEP_DATA" = 0 ]; then
  log "deleting the generated traces in $DATA_DIR"
  rm -f "$DATA_DIR"/nsys_*.sqlite "$DATA_DIR"/kineto_*.json "$DATA_DIR"/kineto_*.json.gz
fi
