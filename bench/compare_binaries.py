#!/usr/bin/env python3
"""`sightline analyze` of two builds on the same traces: before and after a change. Alternates the
two binaries run by run (so machine noise hits both alike) and prints, per trace, the medians of
wall time, CPU time (user + sys) and peak RSS, and the ratio after / before. Also checks that both
write the same JSON report.

  python3 bench/compare_binaries.py --before OLD/sightline --after NEW/sightline [--runs 5] \\
      [--taskset 0] TRACE...
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    """Wall s, CPU s, peak RSS MB of one command (stdout discarded); exits on failure."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--taskset", help="pin to this CPU list (taskset -c)")
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    pin = ["taskset", "-c", args.taskset] if args.taskset else []
    tmp = tempfile.mkdtemp()
    print("| trace | MB | before wall s | after wall s | ratio | before CPU s | after CPU s | ratio "
          "| before RSS MB | after RSS MB | same report |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for trace in args.traces:
        outs = {k: os.path.join(tmp, k + ".json") for k in ("before", "after")}
        m = {"before": [], "after": []}
        for i in range(args.runs):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for k in order:
                binary = args.before if k == "before" else args.after
                m[k].append(run(pin + [binary, "analyze", trace, "--format", "json", "-o", outs[k]]))
        med = {k: [statistics.median(x[j] for x in m[k]) for j in range(3)] for k in m}
        b, a = med["before"], med["after"]
        same = filecmp.cmp(outs["before"], outs["after"], shallow=False)
        size_mb = os.path.getsize(trace) / 1e6
        print(f"| {os.path.basename(trace)} | {size_mb:.0f} | {b[0]:.3f} | {a[0]:.3f} | "
              f"{a[0] / b[0]:.2f} | {b[1]:.3f} | {a[1]:.3f} | {a[1] / b[1]:.2f} | {b[2]:.0f} | "
              f"{a[2]:.0f} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
