#!/usr/bin/env python3
"""The recorder's checks on the GPU machine (called by run_on_gpu.sh after the build).

  gpu_checks.py all   correctness against Nsight Systems (kernel count exact, total kernel time within
                      1%) on recorder_test_app and examples/decode_loop (eager and CUDA graph), capture
                      windows (cudaProfilerApi + repeat:2), overhead (median iteration time: none vs
                      sightline record vs nsys -t cuda,nvtx vs PyTorch profiler CUDA-only)
  gpu_checks.py mpi   mpirun -n 2 sightline record --ranks 1: only rank 1 writes a file

Environment: SL (sightline binary), APP (recorder_test_app), DL (decode_loop), NSYS and
QDSTRM_IMPORTER (nsys-env.sh), OUT (results folder), BUDGET_S (seconds before phases are skipped).
Writes $OUT/results.json and prints a table last.
"""
import csv
import glob
import json
import os
import re
import shlex
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "/tmp/recorder-out")
SL, APP, DL = os.environ["SL"], os.environ["APP"], os.environ.get("DL", "")
NSYS, QDI = os.environ.get("NSYS", ""), os.environ.get("QDSTRM_IMPORTER", "")
BUDGET = float(os.environ.get("BUDGET_S", "480"))
T0 = time.time()
TMP = "/tmp/rec-checks"
os.makedirs(TMP, exist_ok=True)
LOG = open(os.path.join(OUT, "checks_log.txt"), "a")
results = {"checks": [], "overhead": {}}


def log(msg):
    print(msg, flush=True)
    LOG.write(msg + "\n")
    LOG.flush()


def run(cmd, env=None, timeout=150):
    """Runs a shell command; returns (rc, stdout+stderr)."""
    e = dict(os.environ)
    e.update(env or {})
    t = time.time()
    p = subprocess.run(cmd, shell=True, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, text=True, errors="replace")
    LOG.write(f"$ {cmd}   [rc={p.returncode}, {time.time() - t:.1f}s]\n{p.stdout[-6000:]}\n")
    LOG.flush()
    return p.returncode, p.stdout


def left():
    return BUDGET - (time.time() - T0)


def check(name, ok, detail):
    results["checks"].append({"check": name, "ok": bool(ok), "detail": detail})
    log(f"[{'PASS' if ok else 'FAIL'}] {name}: {detail}")


def summary(path, prefix="iteration "):
    rc, out = run(f"python3 {HERE}/slrec_summary.py {shlex.quote(path)} --iteration-prefix {shlex.quote(prefix)}")
    return json.loads(out.strip().splitlines()[-1]) if rc == 0 else None


def record(out_file, cmd, opts="", env=None):
    rc, out = run(f"{SL} record {opts} -o {out_file} -- {cmd}", env)
    line = [l for l in out.splitlines() if l.startswith("sightline record:")]
    return rc, out, (line[-1] if line else "")


def nsys_profile(name, cmd, opts="", env=None, export=True):
    """Profiles with nsys; returns (rc, output, kernel count, total kernel ns) from nsys stats."""
    base = f"{TMP}/{name}"
    for f in glob.glob(base + "*"):
        os.remove(f)
    rc, out = run(f"{NSYS} profile -t cuda,nvtx -s none --cpuctxsw none --cuda-graph-trace=node "
                  f"{opts} -o {base} {cmd}", env)
    if not export:
        return rc, out, None, None
    # One report per capture window with --capture-range-end repeat: base.1, base.2, ...
    reps = sorted(set(f.rsplit(".", 1)[0] for f in glob.glob(base + "*.qdstrm") + glob.glob(base + "*.nsys-rep")))
    count = total = None
    for rep in reps:
        if not os.path.exists(rep + ".nsys-rep") and os.path.exists(rep + ".qdstrm"):
            run(f"{QDI} -i {rep}.qdstrm")
        run(f"{NSYS} export --type sqlite -o {rep}.sqlite {rep}.nsys-rep")
        run(f"{NSYS} stats --report cuda_gpu_kern_sum --format csv -o {rep}_stats {rep}.sqlite")
        c = t = None
        for f in glob.glob(f"{rep}_stats*cuda_gpu_kern_sum*.csv"):
            with open(f) as fh:
                rows = list(csv.DictReader(fh))
            c = sum(int(r["Instances"]) for r in rows)
            t = sum(int(float(r["Total Time (ns)"])) for r in rows)
        if c is None and os.path.exists(rep + ".sqlite"):  # stats failed: count from the export
            db = sqlite3.connect(rep + ".sqlite")
            try:
                c, t = db.execute(
                    "SELECT COUNT(*), SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
            except sqlite3.Error:
                c, t = 0, 0
            log(f"  (nsys stats gave no CSV for {rep}; counted from the SQLite export)")
        if c is not None:
            count, total = (count or 0) + c, (total or 0) + t
    return rc, out, count, total


def compare(name, ours, nsys_count, nsys_total):
    if ours is None or nsys_count is None:
        check(f"{name}: sightline vs nsys", False, f"missing data (ours={ours is not None}, nsys={nsys_count})")
        return
    diff = abs(ours["kernel_time_ns"] - nsys_total) / max(nsys_total, 1) * 100
    check(f"{name}: kernel count", ours["kernels"] == nsys_count,
          f"sightline {ours['kernels']}, nsys {nsys_count}")
    check(f"{name}: total kernel time", diff <= 1.0,
          f"sightline {ours['kernel_time_ns'] / 1e6:.3f} ms, nsys {nsys_total / 1e6:.3f} ms, diff {diff:.3f}%")
    results.setdefault("correctness", {})[name] = {
        "sightline_kernels": ours["kernels"], "nsys_kernels": nsys_count,
        "sightline_kernel_ms": ours["kernel_time_ns"] / 1e6, "nsys_kernel_ms": nsys_total / 1e6,
        "diff_pct": diff, "drops": ours["drops"], "status": ours["status"],
        "ended_cleanly": ours["ended_cleanly"]}


def phase_test_app():
    log("== recorder_test_app: sightline vs nsys, 200 iterations (1000 kernels, 200 in a CUDA graph)")
    rc, out, line = record(f"{TMP}/app.slrec", f"{APP} --iters 200")
    log(f"  rc={rc} {line}")
    ours = summary(f"{TMP}/app.slrec")
    expect = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
    check("test_app: exit code", rc == 0, f"rc={rc}")
    check("test_app: kernels = what the app launched", ours and ours["kernels"] == expect["kernels"],
          f"recorded {ours and ours['kernels']}, app launched {expect['kernels']}")
    check("test_app: iterations seen via NVTX with 5 kernels each",
          ours and len(ours["iterations"]) == 200 and set(ours["iterations"].values()) == {5},
          f"{ours and len(ours['iterations'])} iteration ranges, kernels/iteration {ours and sorted(set(ours['iterations'].values()))}")
    rc, out = run(f"{SL} analyze --format json -o {OUT}/app_analyze.json {TMP}/app.slrec")
    check("test_app: sightline analyze reads the recording", rc == 0, f"rc={rc} {out[-300:]}")
    rc, out = run(f"{SL} analyze {TMP}/app.slrec")
    with open(f"{OUT}/app_analyze.txt", "w") as f:
        f.write(out)
    _, _, n, t = nsys_profile("app_nsys", f"{APP} --iters 200")
    compare("test_app", ours, n, t)

    log("== recorder_test_app windows 10-14,30-34,50-54 with cudaProfilerApi, repeat:2")
    rc, out, line = record(f"{TMP}/appw.slrec", f"{APP} --iters 60 --window 10-14,30-34,50-54",
                           "--capture-range cudaProfilerApi --capture-range-end repeat:2")
    w = summary(f"{TMP}/appw.slrec")
    want = [str(i) for i in list(range(10, 15)) + list(range(30, 35))]
    check("test_app window: iterations kept", w and list(w["iterations"].keys()) == want,
          f"{w and list(w['iterations'].keys())}")
    check("test_app window: kernels", w and w["kernels"] == 50 and w["capture_windows"] == 2,
          f"{w and w['kernels']} kernels (want 50), {w and w['capture_windows']} windows (want 2)")
    _, _, n, t = nsys_profile("appw_nsys", f"{APP} --iters 60 --window 10-14,30-34,50-54",
                              "-c cudaProfilerApi --capture-range-end repeat:2")
    check("test_app window: nsys agrees", w and n == w["kernels"], f"nsys {n}, sightline {w and w['kernels']}")


def phase_decode_loop(mode):
    flag = "--cuda-graph" if mode == "graph" else ""
    cmd = f"{DL} --iterations 300 {flag}"
    log(f"== decode_loop ({mode}): sightline vs nsys, 300 iterations")
    rc, out, line = record(f"{TMP}/dl_{mode}.slrec", cmd)
    log(f"  rc={rc} {line}")
    ours = summary(f"{TMP}/dl_{mode}.slrec")
    _, _, n, t = nsys_profile(f"dl_{mode}_nsys", cmd)
    compare(f"decode_loop_{mode}", ours, n, t)
    if ours is None:
        return
    per_iter = ours["iterations"]
    windows = "100-104,200-204,250-254"
    log(f"== decode_loop ({mode}) window SIGHTLINE_PROFILE_START_STOP={windows}, repeat:2")
    env = {"SIGHTLINE_PROFILE_START_STOP": windows}
    rc, out, line = record(f"{TMP}/dlw_{mode}.slrec", cmd,
                           "--capture-range cudaProfilerApi --capture-range-end repeat:2", env)
    w = summary(f"{TMP}/dlw_{mode}.slrec")
    want = [str(i) for i in list(range(100, 105)) + list(range(200, 205))]
    want_kernels = sum(per_iter.get(i, -10**9) for i in want)
    check(f"decode_loop_{mode} window: iterations kept", w and list(w["iterations"].keys()) == want,
          f"{w and list(w['iterations'].keys())}")
    check(f"decode_loop_{mode} window: kernels", w and w["kernels"] == want_kernels,
          f"{w and w['kernels']} kernels, the same iterations in the full recording launched {want_kernels}")
    _, _, n, t = nsys_profile(f"dlw_{mode}_nsys", cmd, "-c cudaProfilerApi --capture-range-end repeat:2", env)
    check(f"decode_loop_{mode} window: nsys agrees", w and n == w["kernels"],
          f"nsys {n}, sightline {w and w['kernels']}")
    if mode != "graph":
        return
    # Whole graphs with windows (run27: enabling GRAPH_TRACE at a window's start ended a
    # torch.compile'd program with SIGSEGV): one graph record per replay inside the windows, none
    # outside (the kernels the loop launches outside its graph stay per kernel).
    for trace in ("graph", "sampled:4"):
        path = f"{TMP}/dlw_{mode}_{trace.replace(':', '')}.slrec"
        rc, out, line = record(path, cmd, "--capture-range cudaProfilerApi --capture-range-end repeat:2 "
                               f"--cuda-graph-trace {trace}", env)
        g = summary(path)
        graphs = g and g["records"].get("graph", 0)
        check(f"decode_loop_{mode} window, --cuda-graph-trace {trace}: exit code and windows",
              rc == 0 and g and g["capture_windows"] == 2, f"rc={rc} {line}")
        if trace == "graph":
            check(f"decode_loop_{mode} window, whole graphs: one graph record per windowed replay",
                  graphs == len(want), f"{graphs} graph records, {len(want)} iterations in the windows")


def median_of(pattern, text):
    m = re.findall(pattern, text)
    return float(m[-1]) if m else None


def phase_overhead(name, cmd, pattern, reps, extra_modes=()):
    log(f"== overhead: {name} ({reps} repetitions, interleaved)")
    modes = ["none", "sightline", "sightline_driver_api", "nsys"] + list(extra_modes)
    vals = {m: [] for m in modes}
    for rep in range(reps):
        for m in modes:
            if left() < 20:
                log("  (time budget reached; stopping repetitions)")
                break
            if m == "none":
                rc, out = run(cmd)
            elif m == "sightline":
                rc, out, _ = record(f"{TMP}/ovh.slrec", cmd)
            elif m == "sightline_driver_api":
                rc, out, _ = record(f"{TMP}/ovh.slrec", cmd, "--driver-api")
            elif m == "sightline_all_calls":
                rc, out, _ = record(f"{TMP}/ovh.slrec", cmd, "--all-api-calls")
            elif m == "nsys":
                rc, out, _, _ = nsys_profile("ovh_nsys", cmd, export=False)
            else:  # torch profiler: the script's own mode
                rc, out = run(cmd.replace("--mode none", "--mode torch"))
            v = median_of(pattern, out)
            log(f"  rep {rep} {m}: rc={rc} median={v}")
            if v is not None:
                vals[m].append(v)
    base = statistics.median(vals["none"]) if vals["none"] else None
    res = {}
    for m in modes:
        if not vals[m]:
            continue
        med = statistics.median(vals[m])
        res[m] = {"runs": vals[m], "median": med,
                  "overhead_pct": (med / base - 1) * 100 if base else None}
    results["overhead"][name] = res


def phase_mpi(ranks_expect_gpus):
    log("== mpirun -n 2 sightline record --ranks 1")
    d = f"{TMP}/mpi"
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(d + "/*"):
        os.remove(f)
    rc, out = run(f"mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH "
                  f"-x SIGHTLINE_RECORDER_LIB {SL} record --ranks 1 -o {d}/r%r.slrec -- {APP} --iters 50",
                  timeout=120)
    files = sorted(os.path.basename(f) for f in glob.glob(d + "/*.slrec"))
    check("mpi: exit code", rc == 0, f"rc={rc}")
    check("mpi: only rank 1 wrote a file", files == ["r1.slrec"], f"files {files}")
    s = summary(f"{d}/r1.slrec") if "r1.slrec" in files else None
    devs = s and [x["id"] for x in s["devices"]]
    check("mpi: rank 1 recording complete", s and s["kernels"] == 250 and s["ended_cleanly"],
          f"kernels {s and s['kernels']} (want 250), devices {devs}")
    results["mpi"] = {"files": files, "summary": s, "output": out[-2000:]}


def table():
    log("\n==== results ====")
    for c in results["checks"]:
        log(f"{'PASS' if c['ok'] else 'FAIL'}  {c['check']}: {c['detail']}")
    for name, res in results["overhead"].items():
        log(f"-- overhead {name}: median of per-run medians (runs)")
        for m, r in res.items():
            pct = "" if r["overhead_pct"] is None else f"{r['overhead_pct']:+.1f}%"
            log(f"   {m:10s} {r['median']:10.3f}  {pct:>8s}   {['%.3f' % v for v in r['runs']]}")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    try:
        if what == "mpi":
            phase_mpi(2)
            return
        if what == "graph":  # the CUDA-graph decode loop alone: counts, windows, whole graphs
            phase_decode_loop("graph")
            return
        phase_test_app()
        if DL:
            for mode in ("eager", "graph"):
                if left() > 60:
                    phase_decode_loop(mode)
        for f in ("app.slrec", "dlw_eager.slrec"):
            if os.path.exists(f"{TMP}/{f}"):
                subprocess.run(["cp", f"{TMP}/{f}", OUT])
        if left() > 120:
            phase_overhead("torch_llama_decode",
                           f"python3 {HERE}/torch_decode_bench.py --mode none --steps 150",
                           r"median_itl_ms=([0-9.]+)", int(os.environ.get("TORCH_REPS", "3")),
                           extra_modes=("torch",))
        if DL:
            for mode in os.environ.get("DL_OVERHEAD_MODES", "eager graph").split():
                if left() > 40:
                    flag = "--cuda-graph" if mode == "graph" else ""
                    phase_overhead(f"decode_loop_{mode}", f"{DL} --iterations 300 {flag}",
                                   r"median_iteration_us=([0-9.]+)", 3)
    finally:
        table()


if __name__ == "__main__":
    main()
