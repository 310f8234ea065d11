#!/usr/bin/env python3
"""`sightline query`'s database build against `sightline analyze` of the same trace, two builds
alternated run by run (so machine noise hits both alike): per command, the medians of wall time,
CPU time (user + sys) and peak RSS, and the ratio after / before. The commands:

  analyze        sightline analyze TRACE -o /dev/null (the `after` binary)
  save           sightline query TRACE --save DB (the whole database)
  question       sightline query TRACE 'SELECT count(*), sum(dur_ns) FROM kernels'

and checks that both builds' saved databases answer the same questions.

  python3 bench/query_build_bench.py --before OLD/sightline --after NEW/sightline [--runs 5] TRACE
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

QUESTION = "SELECT count(*), sum(dur_ns) FROM kernels"
CHECKS = [
    "SELECT count(*), sum(dur_ns), sum(length(name)), count(capture_path), total(launch_ns) "
    "FROM kernels",
    "SELECT count(*), sum(start_ns), count(DISTINCT class) FROM api_calls",
    "SELECT count(*), sum(kernel_id), sum(range_id), count(DISTINCT point) FROM range_kernels",
    "SELECT count(*), sum(gpu_kernel_ns), sum(projection_depth), count(parent_id) FROM ranges",
    "SELECT count(*), sum(dur_ns) FROM iterations",
    "SELECT count(*) FROM report_facts",
]


def run(cmd):
    """Wall s, CPU s, peak RSS MiB of one command (stdout discarded); exits on failure."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def answers(binary, db):
    return [subprocess.run([binary, "query", db, q, "--format", "csv", "--timeout", "300"],
                           check=True, capture_output=True, text=True).stdout for q in CHECKS]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("trace")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    dbs = {k: os.path.join(tmp, k + ".sldb") for k in ("before", "after")}
    commands = {
        "save": lambda b, k: [b, "query", args.trace, "--save", dbs[k]],
        "question": lambda b, k: [b, "query", args.trace, QUESTION],
    }
    m = {(c, k): [] for c in ("analyze", *commands) for k in ("before", "after")}
    for i in range(args.runs):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        m[("analyze", "after")].append(run([args.after, "analyze", args.trace, "-o", os.devnull]))
        for c, make in commands.items():
            for k in order:
                if c == "save" and os.path.exists(dbs[k]):
                    os.unlink(dbs[k])
                m[(c, k)].append(run(make(args.before if k == "before" else args.after, k)))
    med = {key: [statistics.median(x[j] for x in v) for j in range(3)] for key, v in m.items() if v}
    print(f"{os.path.basename(args.trace)}, {args.runs} runs alternated; saved databases "
          f"{os.path.getsize(dbs['before']) / 1e6:.0f} MB (before), "
          f"{os.path.getsize(dbs['after']) / 1e6:.0f} MB (after)")
    print("| command | before wall s | after wall s | ratio | before CPU s | after CPU s | ratio "
          "| before RSS MiB | after RSS MiB |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    a = med[("analyze", "after")]
    print(f"| analyze | | {a[0]:.2f} | | | {a[1]:.2f} | | | {a[2]:.0f} |")
    for c in commands:
        b, a = med[(c, "before")], med[(c, "after")]
        print(f"| query ({c}) | {b[0]:.2f} | {a[0]:.2f} | {a[0] / b[0]:.2f} | {b[1]:.2f} | "
              f"{a[1]:.2f} | {a[1] / b[1]:.2f} | {b[2]:.0f} | {a[2]:.0f} |", flush=True)
    # Each build's database read by its own binary.
    same = answers(args.before, dbs["before"]) == answers(args.after, dbs["after"])
    print(f"same answers from both databases: {'yes' if same else 'NO'}")
    for db in dbs.values():
        os.unlink(db)
    os.rmdir(tmp)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
