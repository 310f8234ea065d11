#!/usr/bin/env python3
"""The recorder's overhead benchmark on the GPU machine (called by run_overhead.sh after the build).

For each workload, runs are interleaved: no profiler / `sightline record` / `nsys profile -t
cuda,nvtx`, the order rotated every repetition (A B C, B C A, C A B, ...) so that drift (clocks,
page cache, a noisy neighbour) falls on every mode alike. Each run prints its own median iteration
time (warm-up excluded); the table gives, per mode, the median over runs of those medians, the
lowest and highest run, and the overhead against no profiler two ways: from the medians, and as the
median of the per-repetition ratios (each run against the no-profiler run of the same repetition).

Environment: SL, DL, NSYS, OUT, BUDGET_S (seconds for the whole benchmark; a repetition starts only
when it fits), REPS (default 5), WORKLOADS (names to run; default all: the PyTorch loop first, then
the four decode_loop configurations), DIAG_MODES (diagnostic modes on the small eager loop; default
sl_no_runtime sl_kernel_only: SIGHTLINE_RECORD_SKIP, see docs/formats/recorder.md), EXTRA_MODES
(diagnostic modes run on every decode_loop workload; see DIAG), NO_NSYS=1 (no nsys mode),
MODES (exactly these modes, replacing the default list), PIN (every run under `taskset -c PIN`).
Writes $OUT/overhead.json and $OUT/overhead_log.txt; prints a table last.
"""
import json
import os
import re
import statistics
import subprocess
import time

from bench_common import run_logged

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "/tmp/recorder-out")
SL, DL, NSYS = os.environ["SL"], os.environ["DL"], os.environ.get("NSYS", "")
BUDGET = float(os.environ.get("BUDGET_S", "400"))
REPS = int(os.environ.get("REPS", "5"))
REP_START = int(os.environ.get("REP_START", "0"))  # first repetition's place in the rotation
T0 = time.time()
# PIN="0-3": every run (the profiler and the program alike) under `taskset -c 0-3`, so that whole
# runs do not differ by where the scheduler put the launching thread.
PIN = f"taskset -c {os.environ['PIN']} " if os.environ.get("PIN") else ""
TMP = "/tmp/overhead"
os.makedirs(TMP, exist_ok=True)
LOG = open(os.path.join(OUT, "overhead_log.txt"), "a")

DL_PAT = r"median_iteration_us=([0-9.]+)"
TORCH_PAT = r"median_itl_ms=([0-9.]+)"
SMALL = "--hidden 1024 --context 128 --layers 4"
# Diagnostic modes: `sightline record` with these variables set (SIGHTLINE_RECORD_SKIP: what each
# activity kind costs on a launch-bound loop). run6 also had sl_prev / sl_prev_api here, for
# settings of a tried recorder change that was reverted (docs/evidence/recorder/README.md, run6).
DIAG = {"sl_no_runtime": "SIGHTLINE_RECORD_SKIP=runtime",
        "sl_kernel_only": "SIGHTLINE_RECORD_SKIP=runtime,sync,memcpy,memset,nvtx",
        # the launcher without its watch of the process tree (no /proc scans), node and graph mode
        "sl_nowatch": "SIGHTLINE_RECORD_WATCH=0",
        "sl_graph_nowatch": "SIGHTLINE_RECORD_WATCH=0"}
# Modes with other recorder or nsys options (EXTRA_MODES="sl_graph nsys_graph"): CUDA graphs traced
# as whole graphs (sightline record --cuda-graph-trace graph; nsys --cuda-graph-trace=graph).
# sl_metrics / nsys_metrics (NSYS_METRICS=1 adds the latter): GPU metrics sampled at 10 kHz besides
# the trace (sightline record --gpu-metrics; nsys --gpu-metrics-devices=0, issue 16).
# sl_sampled: every 16th graph launch node by node, the others whole (--cuda-graph-trace sampled:16);
# sl_sampledN: every N-th (sl_sampled64: sampled:64).
SL_ARGS = {"sightline": "", "sl_graph": "--cuda-graph-trace graph", "sl_metrics": "--gpu-metrics",
           "sl_graph_nowatch": "--cuda-graph-trace graph",
           "sl_sampled": "--cuda-graph-trace sampled:16"}
for _mode in os.environ.get("EXTRA_MODES", "").split():
    if re.fullmatch(r"sl_sampled[0-9]+", _mode):
        SL_ARGS[_mode] = f"--cuda-graph-trace sampled:{_mode[len('sl_sampled'):]}"
NSYS_ARGS = {"nsys": "--cuda-graph-trace=node", "nsys_graph": "--cuda-graph-trace=graph",
             "nsys_metrics": "--cuda-graph-trace=node --gpu-metrics-devices=0 "
                             "--gpu-metrics-frequency=10000"}
# EXTRA_MODES="sl_no_runtime ...": diagnostic modes run on every decode_loop workload (after sightline).
# NO_NSYS=1 leaves Nsight Systems out (the recorder's modes only).
MODES = (["none", "sightline"] + os.environ.get("EXTRA_MODES", "").split() +
         (["nsys_metrics"] if os.environ.get("NSYS_METRICS") == "1" else []) +
         ([] if os.environ.get("NO_NSYS") == "1" else ["nsys"]))
# MODES="none sl_graph nsys_graph": exactly these modes, in this order (the rotation's).
if os.environ.get("MODES"):
    MODES = os.environ["MODES"].split()
# (name, command, pattern, unit, modes). The small configuration is launch-bound (a few us of GPU
# work per kernel), so it shows a tracer's per-launch cost; the default one is GPU-bound.
DL_WORKLOADS = [
    ("decode_loop_small_eager", f"{DL} {SMALL} --iterations 2000 --warmup 200", DL_PAT, "us",
     MODES + os.environ.get("DIAG_MODES", "sl_no_runtime sl_kernel_only").split()),
    ("decode_loop_small_graph", f"{DL} {SMALL} --iterations 2000 --warmup 200 --cuda-graph", DL_PAT,
     "us", MODES),
    ("decode_loop_default_eager", f"{DL} --iterations 400 --warmup 50", DL_PAT, "us", MODES),
    ("decode_loop_default_graph", f"{DL} --iterations 400 --warmup 50 --cuda-graph", DL_PAT, "us",
     MODES),
]
TORCH_WORKLOADS = [
    ("torch_llama_decode_b8",
     f"python3 {HERE}/torch_decode_bench.py --mode none --steps 250 --warmup 20", TORCH_PAT, "ms",
     MODES),
]
# Real programs (issue 52): Hugging Face transformers' generate() on a Llama-3.2-1B shape (random
# weights, batch 8, 64 new tokens), compiled with a static cache (CUDA graphs) and eager; each run
# prints the median generate() call after its first (compile, capture, warm-up; a cold compile cache
# in the first run changes only that call, which is left out). Each run starts
# Python, imports transformers and builds the model (about 20 s), so these run fewer repetitions.
# The deep graph loop is decode_loop with 32 layers: a graph of about as many nodes as the compiled
# HF program's decode step (297 kernels), at a few seconds a run.
CALL_PAT = r"median_call_ms=([0-9.]+)"
HF = f"python3 {HERE}/../../../examples/programs/hf_generate.py --calls 10"
REAL_WORKLOADS = [
    ("decode_loop_deep_graph", f"{DL} --hidden 1024 --context 128 --layers 32 --iterations 1000 "
     f"--warmup 100 --cuda-graph", DL_PAT, "us", MODES),
    ("hf_static_b8", f"{HF} --mode static", CALL_PAT, "ms", MODES),
    ("hf_eager_b8", f"{HF} --mode eager", CALL_PAT, "ms", MODES),
]
# WORKLOADS="name name ...": run only these (each PyTorch run costs about 20 s of start-up).
if os.environ.get("WORKLOADS"):
    _keep = os.environ["WORKLOADS"].split()
    DL_WORKLOADS = [w for w in DL_WORKLOADS if w[0] in _keep]
    TORCH_WORKLOADS = [w for w in TORCH_WORKLOADS if w[0] in _keep]
    REAL_WORKLOADS = [w for w in REAL_WORKLOADS if w[0] in _keep]
else:
    REAL_WORKLOADS = []


def log(msg):
    print(msg, flush=True)
    LOG.write(msg + "\n")
    LOG.flush()


def run(cmd, timeout=180):
    rc, out, _ = run_logged(cmd, LOG, timeout)
    return rc, out


def one(mode, name, cmd, pattern, rep):
    if mode == "none":
        rc, out = run(f"{PIN}{cmd}")
    elif mode in SL_ARGS or mode in DIAG:
        path = f"{TMP}/{name}_{mode}_{rep}.slrec"
        env = f"{DIAG[mode]} " if mode in DIAG else ""
        rc, out = run(f"{env}{PIN}{SL} record {SL_ARGS.get(mode, '')} -o {path} -- {cmd}")
        line = [l for l in out.splitlines() if l.startswith("sightline record:")]
        if line:
            log(f"    {line[-1]}")
        if rep > 0 and os.path.exists(path):
            os.remove(path)  # keep only the first repetition's recording
    else:
        base = f"{TMP}/{name}_nsys"
        rc, out = run(f"{PIN}{NSYS} profile -t cuda,nvtx -s none --cpuctxsw none {NSYS_ARGS[mode]} "
                      f"--force-overwrite true -o {base} {cmd}")
    m = re.findall(pattern, out)
    return rc, (float(m[-1]) if m else None)


def bench(workloads, reps, results):
    vals = {w[0]: {m: [None] * reps for m in w[4]} for w in workloads}
    rep_time = None
    for rep in range(reps):
        t = time.time()
        left = BUDGET - (t - T0)
        if (rep_time is None and left < 60) or (rep_time is not None and left < rep_time * 1.1):
            log(f"  (budget: {left:.0f} s left, a repetition takes {rep_time} s; stopping at {rep})")
            break
        for name, cmd, pattern, _, modes in workloads:
            turn = rep + REP_START  # a later call goes on with the rotation where one stopped
            order = modes[turn % len(modes):] + modes[:turn % len(modes)]
            for mode in order:
                rc, v = one(mode, name, cmd, pattern, rep)
                vals[name][mode][rep] = v
                log(f"  rep {rep} {name:28s} {mode:9s} rc={rc} median={v}")
        rep_time = time.time() - t
    for name, _, _, unit, modes in workloads:
        res = {"unit": unit, "modes": {}}
        base_runs = vals[name]["none"]
        base = statistics.median([v for v in base_runs if v is not None] or [float("nan")])
        for mode in modes:
            runs = vals[name][mode]
            ok = [v for v in runs if v is not None]
            if not ok:
                continue
            ratios = [v / b - 1 for v, b in zip(runs, base_runs) if v is not None and b]
            med = statistics.median(ok)
            res["modes"][mode] = {
                "runs": runs, "median": med, "min": min(ok), "max": max(ok),
                "overhead_pct": (med / base - 1) * 100,
                "paired_overhead_pct": statistics.median(ratios) * 100 if ratios else None,
                "paired_min_pct": min(ratios) * 100 if ratios else None,
                "paired_max_pct": max(ratios) * 100 if ratios else None,
            }
        results[name] = res


def table(results):
    log("\n==== overhead: median of per-run medians [lowest run, highest run]; overhead vs none "
        "from the medians; paired = median (min..max) of per-repetition ratios ====")
    for name, res in results.items():
        n = len([v for v in res["modes"].get("none", {}).get("runs", []) if v is not None])
        log(f"-- {name} ({n} runs per mode, {res['unit']})")
        for mode, r in res["modes"].items():
            pct = "" if mode == "none" else (
                f"{r['overhead_pct']:+6.1f}%  paired {r['paired_overhead_pct']:+6.1f}% "
                f"({r['paired_min_pct']:+.1f}..{r['paired_max_pct']:+.1f})")
            log(f"   {mode:14s} {r['median']:10.3f} [{r['min']:.3f}, {r['max']:.3f}]  {pct}")


def main():
    results = {}
    try:
        for w in REAL_WORKLOADS:  # one after the other: each gets the repetitions the budget allows
            bench([w], REPS, results)
        if TORCH_WORKLOADS:
            bench(TORCH_WORKLOADS, REPS, results)
        if DL_WORKLOADS:
            bench(DL_WORKLOADS, REPS, results)
        # The CPU binary reads a recording made here.
        kept = f"{TMP}/decode_loop_small_eager_sightline_0.slrec"
        if os.path.exists(kept):
            rc, out = run(f"{SL} analyze {kept}")
            log(f"analyze {kept}: rc={rc}\n" + "\n".join(out.splitlines()[:25]))
            if os.path.getsize(kept) < (12 << 20):
                subprocess.run(["cp", kept, OUT])
        # Record counts per mode (first repetition): what each recording holds.
        for mode in ["sightline"] + list(DIAG):
            f = f"{TMP}/decode_loop_small_eager_{mode}_0.slrec"
            if not os.path.exists(f):
                continue
            rc, out = run(f"python3 {HERE}/slrec_summary.py {f}")
            try:
                summary = json.loads(out.strip().splitlines()[-1])
                its = list(summary["iterations"].values())
                log(f"records {mode}: {summary['records']} kernels={summary['kernels']} "
                    f"drops={summary['drops']} ended={summary['ended_cleanly']} iterations={len(its)} "
                    f"kernels/iteration min={min(its) if its else None} max={max(its) if its else None}")
            except (ValueError, KeyError, IndexError):
                log(f"records {mode}: slrec_summary rc={rc}: {out[-300:]}")
    finally:
        with open(os.path.join(OUT, "overhead.json"), "w") as f:
            json.dump(results, f, indent=1)
        table(results)
        log(f"total {time.time() - T0:.0f} s")


if __name__ == "__main__":
    main()
