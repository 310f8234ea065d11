#!/usr/bin/env python3
"""The verdict's false-alarm rate on the GPU machine (issue 31), run by run_on_gpu.sh (MODE=false).

RUNS recordings of one unchanged program (decode_loop eager, NVTX ranges per layer, iterations
WARMUP..ITER-1), one after another; then `sightline diff` over many unchanged pairs drawn from them:
  - disjoint groups of 3 runs against 3 (runs 6k, 6k+2, 6k+4 against 6k+1, 6k+3, 6k+5),
  - PAIRS3 more 3-against-3 pairs drawn at random from all runs (fixed seed; they share runs, so
    they are not independent of each other, but each is a fair unchanged pair),
  - runs one against one (2k against 2k+1).
Each diff runs with --fail-if-slower 0 --format json. For each kind of pair the table gives how many
95% intervals of the change in median step time (and in median GPU time launched per iteration)
miss 0, above and below: a calibrated interval misses 0 in about 5% of unchanged pairs, 2.5% above;
and how many pairs the gate would call "slower" at T = 0, 1 and 2%.
Environment: SL, DL, OUT, RUNS (default 36), PAIRS3 (default 40), ITER (200), WARMUP (20),
DEADLINE_S (seconds for the recordings, default 300). Writes $OUT/false_alarm.json and prints the
table last; the per-run step samples (`sightline baseline save`) go to $OUT/baselines/.
BASELINES=DIR: no recording; the runs are the saved baselines DIR/*.json of an earlier call (the
diffs compare saved baselines, which needs no GPU), so a new verdict can be checked on old runs.
"""
import concurrent.futures
import glob
import json
import os
import random
import time

from runs_common import make_sh, median_us

SL, OUT = os.environ["SL"], os.environ.get("OUT", "/tmp/verdict")
BASELINES = os.environ.get("BASELINES")
RUNS = int(os.environ.get("RUNS", "36"))
PAIRS3 = int(os.environ.get("PAIRS3", "40"))
ITER = int(os.environ.get("ITER", "200"))
WARMUP = int(os.environ.get("WARMUP", "20"))
DEADLINE = time.time() + float(os.environ.get("DEADLINE_S", "300"))
REC = "/tmp/false_alarm_runs"
os.makedirs(REC, exist_ok=True)
os.makedirs(os.path.join(OUT, "baselines"), exist_ok=True)
os.makedirs(os.path.join(OUT, "diffs"), exist_ok=True)
LOG = open(os.path.join(OUT, "false_alarm_log.txt"), "a")


sh = make_sh(LOG, 2000)


runs, medians = [], []
if BASELINES:
    for path in sorted(glob.glob(os.path.join(BASELINES, "*.json"))):
        walls = sorted(w for run in json.load(open(path))["runs"] for w in run["wall_ns"])
        runs.append(path)
        medians.append(walls[len(walls) // 2] / 1000)
else:
    DL = os.environ["DL"]
    prog = f"{DL} --iterations {ITER} --warmup {WARMUP}"
    window = f"{WARMUP}-{ITER - 1}"
    for k in range(RUNS):
        if time.time() > DEADLINE:
            print(f"deadline: {k} runs recorded", flush=True)
            break
        path = f"{REC}/run_{k + 1:02d}.slrec"
        rc, out = sh(f"SIGHTLINE_NVTX_LEVEL=2 SIGHTLINE_PROFILE_START_STOP={window} {SL} record "
                     f"--capture-range cudaProfilerApi --capture-range-end stop -o {path} -- {prog}")
        if rc == 0 and os.path.exists(path):
            runs.append(path)
            medians.append(median_us(out))
            sh(f"{SL} baseline save {OUT}/baselines/run_{k + 1:02d}.json {path}")
        print(f"  run {k + 1} rc={rc} median={median_us(out)}", flush=True)
n = len(runs)

pairs = []  # (kind, name, before indices, after indices)
for k in range(n // 6):
    b = [6 * k, 6 * k + 2, 6 * k + 4]
    pairs.append(("3v3 disjoint", f"d3_{k + 1}", b, [i + 1 for i in b]))
rng = random.Random(31)
if n >= 6:
    for k in range(PAIRS3):
        pick = rng.sample(range(n), 6)
        pairs.append(("3v3 drawn", f"r3_{k + 1}", sorted(pick[:3]), sorted(pick[3:])))
for k in range(n // 2):
    pairs.append(("1v1", f"s1_{k + 1}", [2 * k], [2 * k + 1]))


def run_diff(p):
    kind, name, before, after = p
    path = os.path.join(OUT, "diffs", f"{name}.json")
    rc, _ = sh(f"{SL} diff {' '.join(runs[i] for i in before)} -- "
               f"{' '.join(runs[i] for i in after)} --fail-if-slower 0 --format json -o {path}")
    row = {"kind": kind, "name": name, "before": before, "after": after, "rc": rc}
    try:
        rep = json.load(open(path))
    except (OSError, ValueError):
        return row
    sec = next((s for s in rep.get("sections", []) if s.get("key") == "diff_verdict"), {})
    tables = sec.get("tables", {})
    if isinstance(tables, list):
        tables = {t.get("key"): t for t in tables}
    for r in tables.get("step_time", {}).get("rows", []):
        key = {"step time, median": "step", "GPU time launched, median": "launched"}.get(r.get("metric"))
        if key:
            row[key] = [r.get("change_pct"), r.get("change_low_pct"), r.get("change_high_pct")]
    row["decision"] = sec.get("facts", {}).get("decision")
    return row


with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
    rows = list(pool.map(run_diff, pairs))


def gate(row, t):  # what --fail-if-slower t would say: slower when either interval lies above t
    return any(row.get(k) and row[k][1] is not None and row[k][1] > t for k in ("step", "launched"))


print()
print(f"unchanged runs recorded: {n}; median step per run (us): "
      + ", ".join(f"{m:.1f}" for m in medians if m is not None))
print(f"{'pairs':<13} {'n':>3} | {'step interval misses 0: above/below':>36} {'median width':>13} | "
      f"{'launched: above/below':>22} | {'slower at T=0/1/2%':>19}")
summary = {}
for kind in ("3v3 disjoint", "3v3 drawn", "1v1"):
    rs = [r for r in rows if r["kind"] == kind and "step" in r]
    if not rs:
        continue
    above = sum(r["step"][1] > 0 for r in rs)
    below = sum(r["step"][2] < 0 for r in rs)
    la = sum(r.get("launched", [0, -1, 1])[1] > 0 for r in rs)
    lb = sum(r.get("launched", [0, -1, 1])[2] < 0 for r in rs)
    widths = sorted(r["step"][2] - r["step"][1] for r in rs)
    width = widths[len(widths) // 2]
    slow = [sum(gate(r, t) for r in rs) for t in (0, 1, 2)]
    summary[kind] = {"pairs": len(rs), "step_above": above, "step_below": below,
                     "launched_above": la, "launched_below": lb, "median_width_pct": width,
                     "slower_T0_T1_T2": slow}
    print(f"{kind:<13} {len(rs):>3} | {above:>17} / {below:<17} {width:>12.2f}% | "
          f"{la:>10} / {lb:<10} | {slow[0]:>5} / {slow[1]} / {slow[2]}")
json.dump({"runs": n, "medians_us": medians, "rows": rows, "summary": summary},
          open(os.path.join(OUT, "false_alarm.json"), "w"), indent=1)
