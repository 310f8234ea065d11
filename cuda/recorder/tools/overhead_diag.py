#!/usr/bin/env python3
"""Where does a tracer's overhead come from? A diagnostic companion of overhead_bench.py.

Runs interleaved repetitions of decode_loop (and optionally the PyTorch loop) under recorder
variants, and for every run also records:
  - where the application's threads ran: sampled every 20 ms from /proc/PID/task/*/stat (name, CPU,
    CPU time), with the share of samples in which another thread that used CPU in that interval sat
    on the launching thread's core (same CPU or its hyper-thread sibling);
  - counters on the launching thread (perf_event_open from outside): page faults, task clock, CPU
    migrations, and aperf/mperf where the machine exposes them (the H100 VM does not);
  - for recordings, medians from the recording itself (slrec_summary.py --timing): API call
    durations on the launching thread, start-to-start launch intervals, kernel durations, GPU gaps.

Modes (MODES, space separated; each a name from MODE_ENV, or with the suffix _pin):
  none, sl                     no profiler / `sightline record` with today's defaults
  sl_graph                     graph-level tracing of CUDA graphs
  sl_kernel_only               kernel records only (diagnostic)
  sl_noaslr                    sl under `setarch -R` (no address-space randomization)
  sl_window                    --capture-range cudaProfilerApi --capture-range-end repeat (with the
                               PyTorch loop's --window-every: traced and untraced steps in one run)
  X_pin                        mode X with the launching thread pinned to CPU PIN_CPU and every
                               other thread of the process kept off that core (set from outside)
  X_onecore, X_next            every thread on CPU PIN_CPU; or the launching thread there and all
                               others together on the next CPU
Environment: SL, DL, OUT, REPS (default 8), WORKLOADS (names from WL below), MODES, BUDGET_S,
PIN_CPU (default 2); MODES_<workload> and REPS_<workload> override MODES and REPS for one workload. Writes $OUT/diag.json and $OUT/diag_log.txt; prints a table last.
"""
import ctypes
import json
import os
import re
import struct
import statistics
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "/tmp/recorder-out")
SL, DL = os.environ["SL"], os.environ["DL"]
REPS = int(os.environ.get("REPS", "8"))
BUDGET = float(os.environ.get("BUDGET_S", "400"))
PIN_CPU = int(os.environ.get("PIN_CPU", "2"))
T0 = time.time()
TMP = "/tmp/overhead-diag"
os.makedirs(TMP, exist_ok=True)
LOG = open(os.path.join(OUT, "diag_log.txt"), "a")

SMALL = "--hidden 1024 --context 128 --layers 4"
DL_PAT = r"median_iteration_us=([0-9.]+)"
TORCH_PAT = r"median_itl_ms=([0-9.]+)"
WL = {
    "small_eager": (f"{DL} {SMALL} --iterations 2000 --warmup 200", DL_PAT, "decode_loop"),
    "small_graph": (f"{DL} {SMALL} --iterations 2000 --warmup 200 --cuda-graph", DL_PAT,
                    "decode_loop"),
    "default_graph": (f"{DL} --iterations 400 --warmup 50 --cuda-graph", DL_PAT, "decode_loop"),
    "torch": (f"python3 {HERE}/torch_decode_bench.py --mode none --steps 300 --warmup 20 "
              "--window-every 10", TORCH_PAT, "python3"),
}
# Recorder settings per mode. The CUPTI buffer, flush, huge-page and driver-launch knobs that runs 7
# to 16 tried (sl_pinned, sl_noflush, sl_zeroed, sl_devbuf, sl_shared_buf, sl_huge, sl_nodrv) changed
# nothing and were removed from the recorder (docs/evidence/recorder/README.md).
MODE_ENV = {
    "sl": {},
    "sl_graph": {"SIGHTLINE_RECORD_GRAPH_TRACE": "graph"},
    "sl_kernel_only": {"SIGHTLINE_RECORD_SKIP": "runtime,sync,memcpy,memset,nvtx"},
    "sl_window": {},
    "sl_noaslr": {},
}
# `sightline record` options per mode (default: none).
MODE_ARGS = {"sl_window": "--capture-range cudaProfilerApi --capture-range-end repeat"}


def log(msg):
    print(msg, flush=True)
    LOG.write(msg + "\n")
    LOG.flush()


def siblings(cpu):
    try:
        text = open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read().strip()
    except OSError:
        return {cpu}
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def children_of(pids):
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        if int(rest[1]) in pids:
            found.append((int(d), stat[stat.find("(") + 1:stat.rfind(")")]))
    return found


def find_app(root, comm):
    """The descendant of root whose name is comm (the application under the tracer)."""
    try:
        stat = open(f"/proc/{root}/stat").read()
        if stat[stat.find("(") + 1:stat.rfind(")")] == comm:
            return root
    except OSError:
        pass
    seen = {root}
    for _ in range(4):
        kids = children_of(seen)
        for pid, name in kids:
            if name == comm:
                return pid
        seen |= {pid for pid, _ in kids}
    return None


def read_tasks(pid):
    tasks = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for t in tids:
        try:
            stat = open(f"/proc/{pid}/task/{t}/stat").read()
        except OSError:
            continue
        name = stat[stat.find("(") + 1:stat.rfind(")")]
        rest = stat[stat.rfind(")") + 2:].split()
        # fields after the name start at field 3: utime is field 14, stime 15, processor 39
        tasks[int(t)] = (name, int(rest[11]) + int(rest[12]), int(rest[36]))
    return tasks


_LIBC = ctypes.CDLL(None, use_errno=True)


def _pmu_event(pmu, name):
    """(type, config) of a sysfs PMU event such as msr/aperf, or None."""
    try:
        typ = int(open(f"/sys/bus/event_source/devices/{pmu}/type").read())
        spec = open(f"/sys/bus/event_source/devices/{pmu}/events/{name}").read().strip()
        return typ, int(spec.split("event=")[1].split(",")[0], 16)
    except (OSError, IndexError, ValueError):
        return None


# Counters on the launching thread (perf_event_open; the VM exposes no hardware PMU, but the msr
# PMU gives aperf/mperf/tsc: aperf/mperf is the thread's effective clock against the nominal one,
# mperf/tsc the share of time its CPU was not idle) and software counters.
COUNTERS = {"aperf": _pmu_event("msr", "aperf"), "mperf": _pmu_event("msr", "mperf"),
            "tsc": _pmu_event("msr", "tsc"), "faults": (1, 2), "task_clock_ns": (1, 1),
            "migrations": (1, 4)}


def open_counters(tid):
    fds = {}
    for name, ev in COUNTERS.items():
        if ev is None:
            continue
        attr = struct.pack("<IIQQQQQIIQ", ev[0], 64, ev[1], 0, 0, 0, 0, 0, 0, 0)
        buf = ctypes.create_string_buffer(attr, 64)
        fd = _LIBC.syscall(298, buf, tid, -1, -1, 0)  # __NR_perf_event_open on x86-64
        if fd >= 0:
            fds[name] = fd
    return fds


def read_counters(fds):
    out = {}
    for name, fd in fds.items():
        try:
            out[name] = struct.unpack("<Q", os.read(fd, 8))[0]
        except OSError:
            pass
        os.close(fd)
    return out


class Watcher(threading.Thread):
    """Samples the application's threads; with pin=True also sets their affinity."""

    def __init__(self, root, comm, pin):
        super().__init__(daemon=True)
        self.root, self.comm, self.pin = root, comm, pin
        self.stop = False
        self.threads = {}  # tid -> [name, first ticks, last ticks, set of cpus]
        self.samples = 0
        self.shared = 0
        self.pinned = set()
        allcpus = os.sched_getaffinity(0)
        self.main_set = {PIN_CPU}
        self.other_set = allcpus - siblings(PIN_CPU)
        if pin == "onecore":  # every thread on the launching thread's CPU
            self.other_set = {PIN_CPU}
        elif pin == "next":  # the other threads together on one neighbouring CPU
            self.other_set = {(PIN_CPU + 1) % len(allcpus)}
        self.switches = {}  # tid -> (voluntary, involuntary) context switches, last seen
        self.fds = {}  # perf counters on the launching thread

    def run(self):
        app = None
        t_end = time.time() + 60
        while not self.stop and app is None and time.time() < t_end:
            app = find_app(self.root, self.comm)
            if app is None:
                time.sleep(0.005)
        if app is None:
            return
        self.fds = open_counters(app)
        prev = {}
        while not self.stop:
            tasks = read_tasks(app)
            if tasks is None:
                break
            if self.pin:
                for tid in tasks:
                    if tid in self.pinned:
                        continue
                    try:
                        os.sched_setaffinity(tid, self.main_set if tid == app else self.other_set)
                        self.pinned.add(tid)
                    except OSError:
                        pass
            main = tasks.get(app)
            if main is not None and prev:
                near = siblings(main[2])
                busy_near = any(tid != app and tid in prev and v[1] > prev[tid][1] and v[2] in near
                                for tid, v in tasks.items())
                self.samples += 1
                self.shared += 1 if busy_near else 0
            for tid in tasks:
                try:
                    text = open(f"/proc/{app}/task/{tid}/status").read()
                    vol = int(re.search(r"^voluntary_ctxt_switches:\s*(\d+)", text, re.M).group(1))
                    inv = int(re.search(r"^nonvoluntary_ctxt_switches:\s*(\d+)", text, re.M).group(1))
                    self.switches[tid] = (vol, inv)
                except (OSError, AttributeError):
                    pass
            for tid, (name, ticks, cpu) in tasks.items():
                rec = self.threads.setdefault(tid, [name, ticks, ticks, set()])
                rec[2] = ticks
                rec[3].add(cpu)
            prev = tasks
            time.sleep(0.02)

    def summary(self):
        busy = sorted(((v[2] - v[1], v[0], sorted(v[3]), self.switches.get(tid, (0, 0)))
                       for tid, v in self.threads.items()), reverse=True)
        c = read_counters(self.fds)
        self.fds = {}
        perf = {}
        if c.get("mperf"):
            perf["aperf_mperf"] = round(c.get("aperf", 0) / c["mperf"], 3)
        if c.get("tsc"):
            perf["busy"] = round(c.get("mperf", 0) / c["tsc"], 3)
        for k in ("faults", "migrations", "task_clock_ns"):
            if k in c:
                perf[k] = c[k]
        return {"threads": [f"{n}:{t}t:{','.join(map(str, c[:6]))}:cs{sw[0]}/{sw[1]}"
                            for t, n, c, sw in busy[:6] if t > 0 or sw[0] > 100],
                "perf": perf,
                "shared_pct": round(100.0 * self.shared / self.samples, 1) if self.samples else None}


def one(name, mode, rep):
    cmd, pattern, comm = WL[name]
    base = re.sub(r"_(pin|onecore|next)$", "", mode)
    env = dict(os.environ)
    path = None
    if base != "none":
        env.update(MODE_ENV[base])
        path = f"{TMP}/{name}_{mode}_{rep}.slrec"
        cmd = f"{SL} record {MODE_ARGS.get(base, '')} -o {path} -- {cmd}"
        if base == "sl_noaslr":
            cmd = f"setarch {os.uname().machine} -R {cmd}"
    t = time.time()
    p = subprocess.Popen(cmd.split(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                         text=True, errors="replace")
    pin = next((k for k in ("onecore", "next", "pin") if mode.endswith("_" + k)), None)
    w = Watcher(p.pid, comm, pin)
    w.start()
    try:
        out, _ = p.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    w.stop = True
    w.join(1)
    LOG.write(f"$ {' '.join(f'{k}={v}' for k, v in MODE_ENV.get(base, {}).items())} {cmd}"
              f"   [rc={p.returncode}, {time.time() - t:.1f}s]\n{out[-2000:]}\n")
    m = re.findall(pattern, out)
    v = float(m[-1]) if m else None
    info = w.summary()
    ab = re.findall(r"in_over_out_pct=([-0-9.]+)", out)
    if ab:
        info["in_over_out_pct"] = float(ab[-1])
    if path and os.path.exists(path):
        r = subprocess.run(["python3", f"{HERE}/slrec_summary.py", path, "--timing"],
                           stdout=subprocess.PIPE, text=True)
        try:
            s = json.loads(r.stdout.strip().splitlines()[-1])
            info["timing"] = s.get("timing")
            info["kernels"] = s.get("kernels")
            info["records"] = s.get("records")
        except (ValueError, IndexError):
            info["timing"] = f"slrec_summary failed: {r.stdout[-200:]}"
        os.remove(path)
    return p.returncode, v, info


def main():
    names = os.environ.get("WORKLOADS", "small_eager").split()
    modes = os.environ.get("MODES", "none sl none_pin sl_pin").split()
    log(f"cpus={sorted(os.sched_getaffinity(0))} pin_cpu={PIN_CPU} siblings={sorted(siblings(PIN_CPU))}")
    results = {}
    for name in names:
        wl_modes = os.environ.get(f"MODES_{name}", " ".join(modes)).split()
        wl_modes = [m for m in wl_modes if not (m.startswith("sl_graph") and "graph" not in name)]
        reps = int(os.environ.get(f"REPS_{name}", REPS))
        vals = {m: [] for m in wl_modes}
        infos = {m: [] for m in wl_modes}
        rep_time = None
        for rep in range(reps):
            left = BUDGET - (time.time() - T0)
            if rep_time is not None and left < rep_time * 1.1:
                log(f"  budget: {left:.0f} s left, stopping {name} at rep {rep}")
                break
            t = time.time()
            order = wl_modes[rep % len(wl_modes):] + wl_modes[:rep % len(wl_modes)]
            for mode in order:
                rc, v, info = one(name, mode, rep)
                vals[mode].append(v)
                infos[mode].append(info)
                tm = info.get("timing") or {}
                api = tm.get("api_ns", {}) if isinstance(tm, dict) else {}
                log(f"  rep {rep} {name:13s} {mode:14s} rc={rc} median={v} shared={info['shared_pct']}% "
                    f"in/out={info.get('in_over_out_pct')}% perf={info.get('perf')} "
                    f"threads={info['threads']} "
                    + (f"launch={api.get('cudaLaunchKernel')} interval={tm.get('launch_interval_ns')} "
                       f"between={tm.get('between_launches_ns')} kernel={tm.get('kernel_ns')} "
                       f"gap={tm.get('gpu_gap_ns')}" if isinstance(tm, dict) and tm else ""))
            rep_time = time.time() - t
        results[name] = {"values": vals, "info": infos}
    with open(os.path.join(OUT, "diag.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    log("\n==== median of run medians [min, max], overhead vs none; runs in order ====")
    for name, r in results.items():
        ok = {m: [v for v in vs if v is not None] for m, vs in r["values"].items()}
        base = statistics.median(ok["none"]) if ok.get("none") else None
        log(f"-- {name}")
        for m, vs in ok.items():
            if not vs:
                continue
            med = statistics.median(vs)
            pct = f"{(med / base - 1) * 100:+6.1f}%" if base else ""
            log(f"   {m:14s} {med:9.2f} [{min(vs):.2f}, {max(vs):.2f}] {pct}  runs: "
                + " ".join(f"{v:.1f}" for v in vs))
            ab = [i.get("in_over_out_pct") for i in r["info"][m] if i.get("in_over_out_pct") is not None]
            if ab:
                log(f"   {'':14s} in-window over out-of-window steps, per run: "
                    + " ".join(f"{x:+.1f}%" for x in ab) + f"  (median {statistics.median(ab):+.1f}%)")
    log(f"total {time.time() - T0:.0f} s")


if __name__ == "__main__":
    main()
