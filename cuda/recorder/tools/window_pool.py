#!/usr/bin/env python3
"""Pools the runs of several window_bench.py calls (issue 52): one table per program, per mode the
number of runs, the median over runs of in_over_out_pct (calls inside a capture window against calls
outside it, in one process) with the lowest and highest run, and the median of the runs' out_ms
(calls outside windows: across processes, so only a rough view of what being attached costs).

  python3 cuda/recorder/tools/window_pool.py LOG [LOG ...] [--markdown]

A LOG is a window_log.txt (its "rep N WORKLOAD MODE rc=R SECONDS {...}" lines) or a printed
summary whose table has one run per mode ("MODE runs 1  out X ms  wall +Y% ..."), as a call whose
own files did not come back left (docs/evidence/recorder/run27/call2_summary.txt).
"""
import ast
import re
import statistics
import sys

REP = re.compile(r"^  rep \d+ (\S+)\s+(\S+)\s+rc=(-?\d+)\s+[\d.]+s (\{.*\}|None)\s*$")
ONE = re.compile(r"^   (\S+)\s+runs 1\s+out\s+([\d.]+) ms\s+wall\s+([-+][\d.]+)%")
WORKLOAD = re.compile(r"^-- (\S+)$")


def read(path, runs):
    workload = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = REP.match(line)
            if m:
                w, mode, _, vals = m.groups()
                if vals != "None":
                    v = ast.literal_eval(vals)
                    runs.setdefault(w, {}).setdefault(mode, []).append(
                        (v["pct"], v["out_ms"], path))
                continue
            m = WORKLOAD.match(line)
            if m:
                workload = m.group(1)
                continue
            m = ONE.match(line)
            if m and workload is not None and not any(
                    p == path for p in (r[2] for r in runs.get(workload, {}).get(m.group(1), []))):
                runs.setdefault(workload, {}).setdefault(m.group(1), []).append(
                    (float(m.group(3)), float(m.group(2)), path))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    markdown = "--markdown" in sys.argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    runs = {}
    for path in args:
        try:
            read(path, runs)
        except OSError as e:
            print(f"window_pool.py: cannot read {path}: {e.strerror}; pass window_log.txt files "
                  "of window_bench.py", file=sys.stderr)
            return 2
    if not runs:
        print("window_pool.py: no runs found in the files given (no \"rep N ...\" lines)",
              file=sys.stderr)
        return 2
    for w, modes in runs.items():
        if markdown:
            print(f"\n{w}\n\n| mode | runs | inside vs outside: median [lowest, highest] | runs | "
                  "outside, median ms |\n|---|--:|---|---|--:|")
        else:
            print(f"\n{w}")
        for mode, rs in modes.items():
            pct = [r[0] for r in rs]
            out = statistics.median(r[1] for r in rs)
            each = ", ".join(f"{p:+.1f}" for p in pct)
            if markdown:
                print(f"| {mode} | {len(rs)} | {statistics.median(pct):+.1f}% [{min(pct):+.1f}, "
                      f"{max(pct):+.1f}] | {each} | {out:.2f} |")
            else:
                print(f"  {mode:16s} runs {len(rs)}  {statistics.median(pct):+6.1f}% "
                      f"[{min(pct):+.1f}, {max(pct):+.1f}]  ({each})  out {out:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
