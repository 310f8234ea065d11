#!/usr/bin/env python3
"""Checks `sightline record --gpu-metrics` on the GPU machine against what the program knows.

  gpu_metrics_check.py RECORDING.slrec APP.json [--nsys EXPORT.sqlite]

RECORDING is a recording of apps/gpu_metrics_app, APP.json the line that program printed (its phase
marks, read from %globaltimer on the GPU). Prints:
- the clock: the recorder's kernel records of the mark kernels (CUPTI clock) against the
  %globaltimer values the kernels stored, mapped the way the importer maps PM sampling's timestamps
  (time - (start_realtime - start_cupti)). On the H200 that was about 1 ms off: %globaltimer is not
  PM sampling's clock. The samples themselves line up with the kernels (`sightline analyze` checks
  that: the diagnostic recorder_gpu_metrics_aligned gives the best-fitting shift, +3 us there);
- the sampler's status (interval, samples, drops, overflows, metrics not sampled and why);
- per phase (idle, copy, tiny, fma), the mean of each metric over the samples inside the phase;
- with --nsys, the same table from an nsys export of the same program (--gpu-metrics-devices),
  its phases placed by the same mark kernels on nsys's clock.
Standard library only (reads the format as docs/formats/recorder.md documents it).
"""
import json
import os
import sqlite3
import statistics
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from slrec_summary import records  # noqa: E402

KEY = ["GR Active", "SMs Active", "SM Issue", "Tensor Active", "Compute Warps in Flight",
       "DRAM Read Bandwidth", "DRAM Write Bandwidth", "PCIe RX Throughput", "GPC Clock Frequency"]


def read_recording(path):
    data = open(path, "rb").read()
    strings, metrics, samples, status, marks = {}, {}, [], {}, []
    process = None
    for rtype, body in records(data):
        if rtype == 2:
            sid, n = struct.unpack_from("<II", body, 0)
            strings[sid] = body[8:8 + n].decode(errors="replace")
        elif rtype == 1:
            process = struct.unpack_from("<qqqq", body, 0)  # pid, cupti, realtime, monotonic
        elif rtype == 4:
            start, end = struct.unpack_from("<qq", body, 0)
            name = struct.unpack_from("<I", body, 76)[0]
            marks.append((start, end, name))
        elif rtype == 15:
            device, index, name, cupti, reason, _ = struct.unpack_from("<IIIIII", body, 0)
            metrics.setdefault(device, []).append((index, name, cupti, reason))
        elif rtype == 16:
            start, end, device, count = struct.unpack_from("<qqII", body, 0)
            values = struct.unpack_from(f"<{count}d", body, 24)
            samples.append((start, end, device, values))
        elif rtype == 17:
            status[struct.unpack_from("<I", body, 40)[0]] = struct.unpack_from("<qQQQQIIII", body, 0)
    marks = sorted((s, e) for s, e, n in marks if strings.get(n, "").startswith("phase_mark"))
    return strings, metrics, samples, status, marks, process


def phase_table(title, phases, names, rows):
    """rows: list of (start, end, {name: value}) on the phases' clock."""
    print(f"\n{title}")
    cols = [k for k in KEY if any(n.startswith(k + " [") for n in names)]
    print(f"{'phase':6s} {'samples':>7s} " + " ".join(f"{c[:14]:>14s}" for c in cols))
    out = {}
    for label, (a, b) in phases:
        inside = [r for r in rows if r[0] >= a and r[1] <= b]
        means = {}
        for c in cols:
            name = next((n for n in names if n.startswith(c + " [Throughput %]")),
                        next((n for n in names if n.startswith(c + " [")), None))
            vals = [r[2][name] for r in inside if name in r[2]]
            means[c] = statistics.mean(vals) if vals else float("nan")
        out[label] = means
        print(f"{label:6s} {len(inside):7d} " + " ".join(f"{means[c]:14.2f}" for c in cols))
    return out


def main():
    path, app_path = sys.argv[1], sys.argv[2]
    nsys = sys.argv[sys.argv.index("--nsys") + 1] if "--nsys" in sys.argv else None
    app = json.loads(open(app_path).read().strip().splitlines()[-1])
    strings, metrics, samples, status, kmarks, process = read_recording(path)
    gpu_marks = app["marks"]
    _, cupti0, real0, _ = process
    shift = real0 - cupti0
    print(f"recording {path}: {len(samples)} samples, {len(kmarks)} mark kernels, "
          f"{len(gpu_marks)} marks; copy {app['copy_gbps']} GB/s on {app['device']}")
    if len(kmarks) == len(gpu_marks):
        err = [(g - shift) - s for (s, _), g in zip(kmarks, gpu_marks)]
        inside = [s <= g - shift <= e for (s, e), g in zip(kmarks, gpu_marks)]
        print(f"clock: mapped mark - CUPTI kernel start: median {statistics.median(err):.0f} ns, "
              f"min {min(err)}, max {max(err)}; inside the kernel record: {sum(inside)}/{len(inside)}")
        raw = [s - g for (s, _), g in zip(kmarks, gpu_marks)]
        print(f"clock: CUPTI kernel start - globaltimer mark (raw): median {statistics.median(raw):.0f} ns; "
              f"realtime - cupti at start: {shift} ns")
    for device, st in sorted(status.items()):
        interval, n, dropped, overflows, failed, _, clock, nmetrics, err = st
        print(f"device {device}: interval {interval} ns, {n} samples, {dropped} dropped, "
              f"{overflows} overflows, {failed} failed, {nmetrics} metrics, clock {clock}"
              + (f", error: {strings.get(err)}" if err else ""))
    names = {}
    for device, ms in sorted(metrics.items()):
        for index, name, cupti, reason in ms:
            if reason:
                print(f"  not sampled: {strings.get(name)} ({strings.get(cupti)}): {strings.get(reason)}")
            else:
                names[(device, index)] = strings.get(name)
    starts = sorted(s for s, _, _, _ in samples)
    if len(starts) > 1:
        d = [b - a for a, b in zip(starts, starts[1:])]
        print(f"sample interval: median {statistics.median(d):.0f} ns, min {min(d)}, max {max(d)}")
    labels = app["phases"]
    phases = [(labels[i], (gpu_marks[i], gpu_marks[i + 1])) for i in range(len(labels))]
    rows = [(s, e, {names.get((dev, i)): v for i, v in enumerate(vals)}) for s, e, dev, vals in samples]
    ours = phase_table("sightline record --gpu-metrics, per phase (GPU clock):", phases,
                       set(names.values()), rows)
    result = {"sightline": ours}
    if nsys:
        db = sqlite3.connect(nsys)
        q = ("SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
             "ON s.id = k.shortName WHERE s.value LIKE 'phase_mark%' ORDER BY k.start")
        nmarks = [r[0] for r in db.execute(q)]
        if len(nmarks) != len(gpu_marks):
            print(f"nsys: {len(nmarks)} mark kernels, expected {len(gpu_marks)}")
        else:
            nphases = [(labels[i], (nmarks[i], nmarks[i + 1])) for i in range(len(labels))]
            mnames = {(t, m): n for t, m, n in db.execute(
                "SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS")}
            by_ts = {}
            for ts, t, m, v in db.execute("SELECT timestamp, typeId, metricId, value FROM GPU_METRICS"):
                by_ts.setdefault(ts, {})[mnames.get((t, m))] = v
            tss = sorted(by_ts)
            period = statistics.median([b - a for a, b in zip(tss, tss[1:])]) if len(tss) > 1 else 0
            nrows = [(ts, ts + period, by_ts[ts]) for ts in tss]
            result["nsys"] = phase_table("nsys --gpu-metrics-devices, per phase (nsys clock; "
                                         "values as stored, clocks in Hz):", nphases,
                                         set(mnames.values()), nrows)
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
