#!/usr/bin/env python3
"""Traced against untraced calls inside one process, for each tracer and mode (issue 52).

Whole runs of the Hugging Face programs differ by 25-50% from process to process whatever the
profiler (run24, run26 in docs/evidence/recorder/journal.md), more than any tracer's cost. Here
every run is one process of examples/programs/hf_generate.py --window-every N: its calls alternate
between blocks outside a cudaProfilerApi capture window and blocks inside one, and it prints the
median call of each kind (wall and the calling thread's CPU time). Each tracer records with a
repeating cudaProfilerApi capture range (`sightline record --capture-range cudaProfilerApi
--capture-range-end repeat`, `nsys profile -c cudaProfilerApi --capture-range-end repeat`), so a
run's in_over_out_pct is that tracer's cost on that program, measured against itself; with no
profiler (mode none) the two halves must agree, which bounds what the method can resolve.

Runs are interleaved, the order rotated every repetition. Environment: SL (the sightline binary),
NSYS, OUT (log and JSON), PROGRAM (default examples/programs/hf_generate.py; graph_serving runs
examples/programs/graph_serving_loop.py), WORKLOADS (names of
WORKLOADS below), MODES (names of MODES below), REPS, BUDGET_S (a repetition starts only when it
fits), PIN (every run under `taskset -c PIN`). Prints a table last: per mode, the median over runs
of in_over_out_pct (wall and CPU), the lowest and highest run.
"""
import json
import os
import re
import statistics
import subprocess
import time

from bench_common import run_logged

OUT = os.environ.get("OUT", "/tmp/window-bench")
SL, NSYS = os.environ["SL"], os.environ.get("NSYS", "nsys")
PROGRAM = os.environ.get("PROGRAM", "examples/programs/hf_generate.py")
BUDGET = float(os.environ.get("BUDGET_S", "400"))
REPS = int(os.environ.get("REPS", "2"))
PIN = f"taskset -c {os.environ['PIN']} " if os.environ.get("PIN") else ""
T0 = time.time()
TMP = "/tmp/window-bench"
os.makedirs(TMP, exist_ok=True)
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "window_log.txt"), "a")

WORKLOADS = {
    # compiled: ~0.2 s a call; 24 calls after the first, blocks of 4: 9 measured calls each way
    "hf_static": f"python3 {PROGRAM} --mode static --calls 25 --window-every 4",
    # eager: ~0.7-1 s a call (more under node tracing); blocks of 3: 4 measured calls each way
    "hf_eager": f"python3 {PROGRAM} --mode eager --calls 13 --window-every 3",
    # the same in blocks of 2 (the second call of each block measured): 6 calls each way, and a
    # slow drift over the run meets both kinds alike
    "hf_eager_b2": f"python3 {PROGRAM} --mode eager --calls 25 --window-every 2",
    # many small CUDA graphs (one per batch size), a drifting batch, a sync a step: blocks of 1000
    # steps, 4 each way
    "graph_serving": "python3 examples/programs/graph_serving_loop.py --steps 8000 --window-every 1000",
}
SL_WIN = "--capture-range cudaProfilerApi --capture-range-end repeat"
NSYS_WIN = "-t cuda,nvtx -s none --cpuctxsw none -c cudaProfilerApi --capture-range-end repeat"
# mode -> (tool, environment, arguments)
MODES = {
    "none": ("none", "", ""),
    "sl_node": ("sl", "", ""),
    "sl_graph": ("sl", "", "--cuda-graph-trace graph"),
    "sl_sampled16": ("sl", "", "--cuda-graph-trace sampled:16"),
    "nsys_node": ("nsys", "", "--cuda-graph-trace=node"),
    "nsys_graph": ("nsys", "", "--cuda-graph-trace=graph"),
    # what each part of ours costs (SIGHTLINE_RECORD_SKIP: docs/formats/recorder.md)
    "sl_graph_noapi": ("sl", "SIGHTLINE_RECORD_SKIP=runtime", "--cuda-graph-trace graph"),
    "sl_graph_nosync": ("sl", "SIGHTLINE_RECORD_SKIP=sync", "--cuda-graph-trace graph"),
    "sl_node_noapi": ("sl", "SIGHTLINE_RECORD_SKIP=runtime", ""),
    "sl_node_kernels": ("sl", "SIGHTLINE_RECORD_SKIP=runtime,sync,memcpy,memset,nvtx", ""),
    # the driver API's launch calls, recorded for the whole run (gated by window in the writer)
    "sl_node_nodrv": ("sl", "SIGHTLINE_RECORD_SKIP=driver_launches", ""),
    # and without every part that is on outside the windows too (driver launch calls, graph node
    # and graph callbacks, NVTX markers): what CUPTI's being attached costs by itself
    "sl_node_bare": ("sl", "SIGHTLINE_RECORD_SKIP=driver_launches,graph_nodes,graphs,nvtx", ""),
}
PAT = re.compile(r"median_out_ms=([0-9.na]+) median_in_ms=([0-9.na]+) in_over_out_pct=([-0-9.na]+) "
                 r"cpu_out_ms=([0-9.na]+) cpu_in_ms=([0-9.na]+) cpu_in_over_out_pct=([-0-9.na]+)")


def log(msg):
    print(msg, flush=True)
    LOG.write(msg + "\n")
    LOG.flush()


def run(cmd, timeout=240):
    return run_logged(cmd, LOG, timeout, tail=2500)


def one(workload, mode, rep):
    tool, env, args = MODES[mode]
    cmd = WORKLOADS[workload]
    if tool == "none":
        full = f"{PIN}{cmd}"
    elif tool == "sl":
        full = f"{env} {PIN}{SL} record {SL_WIN} {args} -o {TMP}/{workload}_{mode}_{rep}.slrec -- {cmd}"
    else:
        full = (f"{PIN}{NSYS} profile {NSYS_WIN} {args} --force-overwrite true "
                f"-o {TMP}/{workload}_{mode}_{rep} {cmd}")
    rc, out, secs = run(full)
    m = PAT.findall(out)
    if tool == "sl":
        for line in out.splitlines():
            if line.startswith("sightline record:"):
                log(f"    {line}")
    if rep > 0:
        subprocess.run(f"rm -f {TMP}/{workload}_{mode}_{rep}*", shell=True)
    if not m:
        return rc, None, secs
    vals = [float(x) for x in m[-1]]
    return rc, dict(zip(["out_ms", "in_ms", "pct", "cpu_out_ms", "cpu_in_ms", "cpu_pct"], vals)), secs


def main():
    workloads = os.environ.get("WORKLOADS", "hf_static").split()
    modes = os.environ.get("MODES", "none sl_graph nsys_graph").split()
    results = {w: {m: [] for m in modes} for w in workloads}
    for w in workloads:
        rep_time = None
        for rep in range(REPS):
            left = BUDGET - (time.time() - T0)
            if rep_time is not None and left < rep_time * 1.05:
                log(f"  (budget: {left:.0f} s left, a repetition takes {rep_time:.0f} s; stopping)")
                break
            t = time.time()
            order = modes[rep % len(modes):] + modes[:rep % len(modes)]
            for mode in order:
                rc, v, secs = one(w, mode, rep)
                results[w][mode].append(v)
                log(f"  rep {rep} {w:10s} {mode:16s} rc={rc} {secs:5.1f}s {v}")
            rep_time = time.time() - t
    with open(os.path.join(OUT, "window.json"), "w") as f:
        json.dump(results, f, indent=1)
    log("\n==== in-process: calls inside a capture window against calls outside it; per mode the "
        "median over runs [lowest, highest] ====")
    for w in workloads:
        log(f"-- {w}")
        for mode in modes:
            ok = [v for v in results[w][mode] if v]
            if not ok:
                log(f"   {mode:16s} no result")
                continue
            pct = [v["pct"] for v in ok]
            cpu = [v["cpu_pct"] for v in ok]
            out_ms = statistics.median(v["out_ms"] for v in ok)
            log(f"   {mode:16s} runs {len(ok)}  out {out_ms:8.2f} ms  wall {statistics.median(pct):+6.1f}% "
                f"[{min(pct):+.1f}, {max(pct):+.1f}]  cpu {statistics.median(cpu):+6.1f}% "
                f"[{min(cpu):+.1f}, {max(cpu):+.1f}]")


if __name__ == "__main__":
    main()
