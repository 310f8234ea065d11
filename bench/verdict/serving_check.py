#!/usr/bin/env python3
"""The serving diff's gate over many pairs of request logs (issue 31): the runs of
serving_runs.sh, compared anywhere (no GPU needed).

  SL=build/src/sightline LOGS=DIR [PLANT=gc10] [THRESHOLDS=5,10,20] python3 serving_check.py

DIR holds base_K.jsonl (unchanged runs) and PLANT_K.jsonl (runs with the planted tail cause).
One run per side: every pair of base runs (they share runs, so they are not independent; the
disjoint pairs 1-2, 3-4, ... are listed apart), and base_K against PLANT_K. Three runs per side:
20 unchanged pairs drawn at random from the base runs (seeded), and base runs 1-3, 2-4, ...
against three of the planted runs. Each pair is diffed with --fail-if-slower T for each
threshold; the table counts the gate's three answers (exit 1 slower, 4 cannot tell, 0 pass) and,
per gated p99, how many 95% intervals miss 0. Examples of false "slower" at the largest T follow.
"""
import glob
import itertools
import json
import os
import re
import random
import subprocess

SL = os.environ.get("SL", "build/src/sightline")
LOGS = os.environ["LOGS"]
PLANT = os.environ.get("PLANT", "gc10")
THRESHOLDS = [float(t) for t in os.environ.get("THRESHOLDS", "5,10,20").split(",")]


def runs(prefix):
    found = glob.glob(os.path.join(LOGS, f"{prefix}_*.jsonl"))
    return sorted(found, key=lambda p: int(re.search(r"_(\d+)\.jsonl$", p).group(1)))


def diff(a, b, t):
    a, b = (a if isinstance(a, list) else [a]), (b if isinstance(b, list) else [b])
    p = subprocess.run([SL, "diff", *a, "--", *b, "--fail-if-slower", str(t), "--format", "json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = {}
    try:
        rep = json.loads(p.stdout)
        for s in rep.get("sections", []):
            if s.get("key") != "serving_diff":
                continue
            tables = s.get("tables", {})
            if isinstance(tables, list):
                tables = {x.get("key"): x for x in tables}
            for r in tables.get("latency", {}).get("rows", []):
                if r.get("gated") == "yes":
                    rows[r["metric"]] = (r.get("change_pct"), r.get("change_low_pct"),
                                         r.get("change_high_pct"))
    except ValueError:
        pass
    return p.returncode, rows, p.stderr.strip()


base, plant = runs("base"), runs(PLANT)
rng = random.Random(31)
drawn = []
for _ in range(20 if len(base) >= 6 else 0):
    pick = rng.sample(base, 6)
    drawn.append((sorted(pick[:3]), sorted(pick[3:])))
kinds = {
    "unchanged 1v1 disjoint": [(base[i], base[i + 1]) for i in range(0, len(base) - 1, 2)],
    "unchanged 1v1 all": list(itertools.combinations(base, 2)),
    f"planted 1v1 ({PLANT})": list(zip(base, plant)),
    "unchanged 3v3 drawn": drawn,
    f"planted 3v3 ({PLANT})": [(base[i:i + 3], [plant[j] for j in range(len(plant)) if j != k][:3])
                               for k, i in enumerate(range(0, min(len(plant), len(base) - 2)))],
}
answer = {0: "pass", 1: "slower", 4: "cannot tell"}
print(f"{len(base)} unchanged runs, {len(plant)} planted; gated: TTFT, TPOT, ITL p99 (intervals) "
      "and output tokens/s (change)")
print(f"{'pairs':<24} {'n':>3} {'T%':>5} | {'slower':>6} {'cannot tell':>11} {'pass':>5} | "
      "p99 intervals missing 0: TTFT / TPOT / ITL")
examples = []
for kind, pairs in kinds.items():
    for t in THRESHOLDS:
        counts = {"pass": 0, "slower": 0, "cannot tell": 0, "error": 0}
        miss = {"TTFT p99": 0, "TPOT p99": 0, "ITL p99": 0}
        for a, b in pairs:
            rc, rows, err = diff(a, b, t)
            counts[answer.get(rc, "error")] += 1
            for m, (c, lo, hi) in rows.items():
                if lo is not None and hi is not None and (lo > 0 or hi < 0):
                    miss[m] += 1
            name = " ".join(os.path.basename(x) for x in (a if isinstance(a, list) else [a]))
            name += " -- " + " ".join(os.path.basename(x) for x in (b if isinstance(b, list) else [b]))
            if rc == 1 and not kind.startswith("planted") and t == THRESHOLDS[-1]:
                examples.append(f"  {kind} T={t:g}: {name}: {err[:300]}")
            if kind.startswith("planted") and t == THRESHOLDS[0] and a == pairs[0][0]:
                examples.append(f"  {kind} T={t:g}, first pair: {err[:400]}")
        print(f"{kind:<24} {len(pairs):>3} {t:>5g} | {counts['slower']:>6} {counts['cannot tell']:>11} "
              f"{counts['pass']:>5} | {miss['TTFT p99']:>4} / {miss['TPOT p99']} / {miss['ITL p99']}"
              + (f"  errors {counts['error']}" if counts["error"] else ""))
print("\n".join(examples))
