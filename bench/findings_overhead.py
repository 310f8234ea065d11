#!/usr/bin/env python3
"""What findings, multi-rank analysis and diff add to `sightline analyze` (issue 3's speed budget:
at most 20%). Runs the sightline binary, alternating the variants so that machine noise hits them
alike, and prints medians of wall and CPU (user+sys) time per variant and their ratio.

  python3 bench/findings_overhead.py --sightline build/src/sightline [--runs 5] [--shared DIR]
        [--bench-data build-bench/bench-data]

Pairs measured (each: baseline vs the variant with the extra work):
  analyze --no-findings  vs  analyze                 one trace (samples, generated 10^5..10^6 traces)
  analyze r0 + analyze r1 (two runs) vs analyze r0 r1 two ranks (needs --shared: the HTA ranks)
  analyze A + analyze B (two runs)   vs diff A B     the shipped nsys/PyTorch pair
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def run(cmd):
    """Wall and CPU seconds of one command (output discarded); exits on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # diff exits 1 when its gate fails; nothing here passes --fail-if-slower, so 0 is expected.
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(label, base_cmds, extra_cmds, runs):
    """Alternates base (one or more commands, summed) and extra; returns medians and ratios."""
    base_w, base_c, extra_w, extra_c = [], [], [], []
    for _ in range(runs):
        w = c = 0.0
        for cmd in base_cmds:
            dw, dc = run(cmd)
            w, c = w + dw, c + dc
        base_w.append(w)
        base_c.append(c)
        w = c = 0.0
        for cmd in extra_cmds:
            dw, dc = run(cmd)
            w, c = w + dw, c + dc
        extra_w.append(w)
        extra_c.append(c)
    m = statistics.median
    row = (label, m(base_w), m(extra_w), m(extra_w) / m(base_w), m(base_c), m(extra_c),
           m(extra_c) / m(base_c))
    print("| {} | {:.3f} | {:.3f} | {:.2f} | {:.3f} | {:.3f} | {:.2f} |".format(*row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sightline", default="build/src/sightline")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shared", default="../shared/traces", help="the shared traces (HTA ranks)")
    ap.add_argument("--bench-data", default="build-bench/bench-data",
                    help="generated traces (bench/run_benchmarks.sh makes them)")
    a = ap.parse_args()
    s = a.sightline
    if not os.access(s, os.X_OK):
        sys.exit(f"{s}: not an executable; build first (bash scripts/build.sh)")

    samples = "examples/samples/llama_decode_h100"
    analyze = [s, "analyze", "--format", "json", "-o", "/dev/null"]
    singles = [f"{samples}.nsys.sqlite", f"{samples}.pytorch.json.gz"]
    for name in ["nsys_100000.sqlite", "kineto_100000.json.gz", "kineto_1000000.json.gz"]:
        p = os.path.join(a.bench_data, name)
        if os.path.exists(p):
            singles.append(p)
        else:
            print(f"(skipped {p}: not generated)", file=sys.stderr)

    print(f"runs per variant: {a.runs}; medians; seconds")
    print("| what | baseline wall | with it wall | ratio | baseline CPU | with it CPU | ratio |")
    print("|---|---|---|---|---|---|---|")
    for t in singles:
        measure(f"findings: {os.path.basename(t)}", [analyze + ["--no-findings", t]],
                [analyze + [t]], a.runs)
    r0 = os.path.join(a.shared, "kineto_hta_sampled_rank0.json.gz")
    r1 = os.path.join(a.shared, "kineto_hta_sampled_rank1.json.gz")
    if os.path.exists(r0) and os.path.exists(r1):
        measure("ranks: HTA rank 0 + rank 1", [analyze + [r0], analyze + [r1]],
                [analyze + [r0, r1]], a.runs)
    else:
        print(f"(skipped ranks: {r0} absent)", file=sys.stderr)
    measure("diff: nsys vs PyTorch sample",
            [analyze + [singles[0]], analyze + [singles[1]]],
            [[s, "diff", "--format", "json", "-o", "/dev/null", singles[0], singles[1]]], a.runs)


if __name__ == "__main__":
    main()
