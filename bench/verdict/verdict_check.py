#!/usr/bin/env python3
"""GPU-machine validation of `sightline diff`'s verdict (issue 31), run by run_on_gpu.sh.

Planted changes of known size under real noise: decode_loop (eager, NVTX ranges per layer) with
--plant-attention-ns N, which makes every Attention kernel wait N ns more on the GPU. N is set from
a calibration run so that the step grows by 3%, 5% or 10% (N = pct x median step / layers). Each
variant is recorded RUNS times with `sightline record` in an iteration window (warm-up left out),
the variants interleaved run by run; two groups of unchanged runs (base_a, base_b) give the
unchanged pairs. Then `sightline diff A1..An -- B1..Bn --fail-if-slower T --format json` per pair,
and single-run pairs too. Checks: no "slower" between unchanged groups of runs; the 10% plant is "slower" at
T=5 and attributed to Attention inside the layer ranges; the 3% plant is not "slower" at T=5.
Environment: SL, DL, OUT, RUNS (default 3), ITER (default 200), WARMUP (default 20).
Prints a table last; diff reports go to $OUT/diffs/.
"""
import json
import os

from runs_common import make_sh, median_us

SL, DL, OUT = os.environ["SL"], os.environ["DL"], os.environ.get("OUT", "/tmp/verdict")
RUNS = int(os.environ.get("RUNS", "3"))
ITER = int(os.environ.get("ITER", "200"))
WARMUP = int(os.environ.get("WARMUP", "20"))
LAYERS = 8
os.makedirs(os.path.join(OUT, "diffs"), exist_ok=True)
REC = "/tmp/verdict_runs"
os.makedirs(REC, exist_ok=True)
LOG = open(os.path.join(OUT, "verdict_log.txt"), "a")
checks = []


sh = make_sh(LOG, 4000)


def check(what, ok, detail=""):
    checks.append((what, bool(ok), detail))
    print(f"{'PASS' if ok else 'FAIL'}: {what}" + (f" ({detail})" if detail else ""), flush=True)


# Calibration: the unplanted step's median, no recorder.
prog = f"{DL} --iterations {ITER} --warmup {WARMUP}"
_, out = sh(f"SIGHTLINE_NVTX_LEVEL=2 {prog}")
base_us = median_us(out)
print(f"calibration: median step {base_us} us", flush=True)
plants = {"base_a": 0, "base_b": 0}
for pct in (3, 5, 10):
    plants[f"p{pct}"] = int(pct / 100 * base_us * 1000 / LAYERS)
print("planted ns per Attention kernel: " + ", ".join(f"{k} {v}" for k, v in plants.items()))

files = {v: [] for v in plants}
medians = {v: [] for v in plants}
window = f"{WARMUP}-{ITER - 1}"
for run in range(RUNS):
    order = list(plants)
    order = order[run % len(order):] + order[:run % len(order)]  # rotate: drift falls on all alike
    for v in order:
        path = f"{REC}/{v}_{run + 1}.slrec"
        rc, out = sh(f"SIGHTLINE_NVTX_LEVEL=2 SIGHTLINE_PROFILE_START_STOP={window} {SL} record "
                     f"--capture-range cudaProfilerApi --capture-range-end stop -o {path} -- "
                     f"{prog} --plant-attention-ns {plants[v]}")
        if rc == 0 and os.path.exists(path):
            files[v].append(path)
            medians[v].append(median_us(out))
        print(f"  run {run + 1} {v:<7} rc={rc} median={median_us(out)}", flush=True)


def diff(name, before, after, threshold):
    path = os.path.join(OUT, "diffs", f"{name}.json")
    rc, out = sh(f"{SL} diff {' '.join(before)} -- {' '.join(after)} --fail-if-slower {threshold} "
                 f"--format json -o {path}")
    try:
        rep = json.load(open(path))
    except (OSError, ValueError):
        return {"name": name, "rc": rc, "decision": "error", "threshold": threshold}
    sec = next((s for s in rep.get("sections", []) if s.get("key") == "diff_verdict"), {})
    facts = sec.get("facts", {})
    tables = sec.get("tables", {})
    if isinstance(tables, list):
        tables = {t.get("key"): t for t in tables}
    step = next((r for r in tables.get("step_time", {}).get("rows", [])
                 if r.get("metric") == "step time, median"), None)
    parts = sorted(tables.get("parts", {}).get("rows", []), key=lambda r: -abs(r.get("points") or 0))
    return {"name": name, "rc": rc, "threshold": threshold, "decision": facts.get("decision"),
            "summary": facts.get("summary", ""), "step": step or {},
            "top_part": parts[0] if parts else {}}


results = []
results.append(diff("unchanged_runs", files["base_a"], files["base_b"], 2))
for pct, t in ((3, 1), (3, 5), (5, 2), (10, 5)):
    results.append(diff(f"planted_{pct}pct_T{t}", files["base_a"], files[f"p{pct}"], t))
for i in range(min(len(files["base_a"]), len(files["base_b"]))):
    results.append(diff(f"unchanged_single_{i + 1}", [files["base_a"][i]], [files["base_b"][i]], 2))
for pct in (3, 5, 10):
    if files["base_a"] and files[f"p{pct}"]:
        results.append(diff(f"planted_{pct}pct_single", [files["base_a"][0]], [files[f"p{pct}"][0]],
                            pct / 2))

by = {r["name"]: r for r in results}
# Several runs per side: the intervals hold the spread between runs, so no false "slower". One
# run per side: they hold the iterations' spread only (the report says so), and unchanged single
# pairs are "slower" at T=2% about 1 time in 24 (false_alarm.py); listed, not checked.
unchanged = [r for r in results if r["name"] == "unchanged_runs"]
check("no 'slower' between unchanged runs, 3 per side (T=2%)",
      all(r["decision"] != "slower" for r in unchanged),
      ", ".join(f"{r['name']}: {r['decision']}" for r in unchanged))
singles = [r for r in results if r["name"].startswith("unchanged_single")]
print("unchanged single-run pairs (not checked): "
      + ", ".join(f"{r['name']}: {r['decision']}" for r in singles), flush=True)
p10 = by.get("planted_10pct_T5", {})
check("10% plant: slower at T=5%", p10.get("decision") == "slower", p10.get("summary", "")[:200])
tp = p10.get("top_part", {})
# The part is named by range and kernel category: "`layer N` attention" (kind gpu).
check("10% plant: largest part is attention kernels in the layer ranges",
      tp.get("kind") == "gpu" and tp.get("what") == "attention" and tp.get("range") == "layer N",
      json.dumps(tp)[:300])
p3 = by.get("planted_3pct_T5", {})
check("3% plant: not 'slower' at T=5%", p3.get("decision") in ("not_slower", "cannot_tell"),
      p3.get("decision"))

print()
print("recorded runs, median step (us) per run: " + "; ".join(
    f"{v} {medians[v]}" for v in plants))
print(f"{'pair':<26} {'T%':>4} {'decision':<12} {'median step change % [95%]':<30} top part")
for r in results:
    s = r.get("step", {})
    ch = (f"{s.get('change_pct', float('nan')):+.2f} [{s.get('change_low_pct', float('nan')):+.2f}, "
          f"{s.get('change_high_pct', float('nan')):+.2f}]") if s else "-"
    tp = r.get("top_part", {})
    print(f"{r['name']:<26} {r['threshold']:>4} {str(r['decision']):<12} {ch:<30} "
          f"{str(tp.get('part', ''))[:60]} {tp.get('points', '')}")
json.dump({"plants_ns": plants, "calibration_us": base_us, "medians": medians, "results": results,
           "checks": checks}, open(os.path.join(OUT, "verdict_check.json"), "w"), indent=1)
print(f"\n{sum(c[1] for c in checks)} of {len(checks)} checks passed")
