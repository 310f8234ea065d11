#!/usr/bin/env python3
"""The kernel summary a user would otherwise write for a PyTorch profiler (Kineto) trace.

Python's json module loads the trace (.json or .json.gz), then the kernels (events with
"cat": "kernel") are grouped by name: count, total, avg, median, min, max and sample stddev of the
duration in ns, sorted by total time, as `nsys stats --report cuda_gpu_kern_sum` prints them. This
is the comparison point of bench/run_benchmarks.sh (docs/PERFORMANCE.md); only the standard library
is used. The table goes to stdout (CSV); timings of the two phases go to stderr.

Usage: py_kernel_summary.py TRACE.json[.gz] > summary.csv
"""

import gzip
import json
import math
import sys
import time


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return json.load(f)


def summarize(trace):
    groups = {}
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel":
            # ts/dur are float microseconds; the summary is in integer ns, as Sightline's.
            groups.setdefault(e["name"], []).append(round(e["dur"] * 1000))
    rows = []
    for name, durs in groups.items():
        durs.sort()
        n = len(durs)
        total = sum(durs)
        avg = total / n
        mid = n // 2
        med = durs[mid] if n % 2 else (durs[mid - 1] + durs[mid]) / 2
        std = math.sqrt(sum((d - avg) ** 2 for d in durs) / (n - 1)) if n > 1 else 0.0
        rows.append((total, n, avg, med, durs[0], durs[-1], std, name))
    rows.sort(key=lambda r: r[0], reverse=True)
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    t0 = time.perf_counter()
    trace = load(sys.argv[1])
    t1 = time.perf_counter()
    rows = summarize(trace)
    t2 = time.perf_counter()
    grand = sum(r[0] for r in rows) or 1
    out = ["Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
           "Name"]
    for total, n, avg, med, lo, hi, std, name in rows:
        out.append(f"{100.0 * total / grand:.1f},{total},{n},{avg:.1f},{med:.1f},{lo},{hi},"
                   f"{std:.1f},{json.dumps(name)}")
    print("\n".join(out))
    kernels = sum(r[1] for r in rows)
    print(f"py_kernel_summary: {kernels} kernels, {len(rows)} names; json load {t1 - t0:.3f} s, "
          f"summary {t2 - t1:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
