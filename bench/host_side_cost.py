#!/usr/bin/env python3
"""What reading the host side costs `sightline analyze` (issue 14: at most +30%): the same binary on
an nsys SQLite export as captured and on a copy without its host-side data (GIL ranges, Python
samples, OS runtime calls, scheduling events, CPU samples). Runs alternate between the two files;
prints the medians of wall time, CPU time and peak RSS, and the ratios with / without.

  python3 bench/host_side_cost.py --sightline build-rel/src/sightline [--runs 9] EXPORT.sqlite...
  python3 bench/host_side_cost.py --sightline AFTER --before BEFORE ...   (both, interleaved)
"""
import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_binaries import run  # noqa: E402

HOST_DOMAINS = ("GIL Trace", "Python Periodic Sampling")
HOST_TABLES = ("OSRT_API", "OSRT_CALLCHAINS", "SCHED_EVENTS", "COMPOSITE_EVENTS",
               "SAMPLING_CALLCHAINS")


def strip_host_side(src, dst):
    """Copies `src` to `dst` without the host-side rows; returns how many rows were removed."""
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    removed = 0
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "NVTX_EVENTS" in tables:
        ids = [r[0] for r in db.execute(
            "SELECT DISTINCT e.domainId FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
            "WHERE e.eventType = 75 AND coalesce(e.text, s.value) IN (?, ?)", HOST_DOMAINS)]
        if ids:
            q = ",".join("?" * len(ids))
            removed += db.execute(f"DELETE FROM NVTX_EVENTS WHERE domainId IN ({q})", ids).rowcount
    for t in HOST_TABLES:
        if t in tables:
            removed += db.execute(f"DELETE FROM {t}").rowcount
    db.commit()
    db.execute("VACUUM")
    db.close()
    return removed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sightline", required=True)
    ap.add_argument("--before", help="a second binary measured in the same runs (a change's "
                    "before): one row per binary")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    binaries = {"": args.sightline} if not args.before else {"before": args.before,
                                                             "after": args.sightline}
    tmp = tempfile.mkdtemp()
    print("| trace | binary | host rows | without: wall s | with: wall s | ratio | without: CPU s "
          "| with: CPU s | ratio | without: RSS MB | with: RSS MB |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for trace in args.traces:
        bare = os.path.join(tmp, "bare.sqlite")
        rows = strip_host_side(trace, bare)
        files = {"without": bare, "with": trace}
        variants = [(b, f) for b in binaries for f in files]
        m = {v: [] for v in variants}
        out = os.path.join(tmp, "report.json")
        for i in range(args.runs):
            order = variants if i % 2 == 0 else variants[::-1]
            for b, f in order:
                m[(b, f)].append(run([binaries[b], "analyze", files[f], "--format", "json", "-o",
                                      out]))
        for b in binaries:
            med = {f: [statistics.median(x[j] for x in m[(b, f)]) for j in range(3)]
                   for f in files}
            w, a = med["without"], med["with"]
            print(f"| {os.path.basename(trace)} | {b or os.path.basename(binaries[b])} | {rows:,} "
                  f"| {w[0]:.3f} | {a[0]:.3f} | {a[0] / w[0]:.2f} | {w[1]:.3f} | {a[1]:.3f} "
                  f"| {a[1] / w[1]:.2f} | {w[2]:.0f} | {a[2]:.0f} |", flush=True)


if __name__ == "__main__":
    main()
