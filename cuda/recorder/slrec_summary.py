#!/usr/bin/env python3
"""Summarises a `sightline record` file (.slrec) as JSON, independently of the C++ reader.

Written from docs/formats/recorder.md alone (standard library only), so the GPU checks in
run_on_gpu.sh test the format as documented and need no sightline build on the GPU machine.

  slrec_summary.py FILE [--iteration-prefix "iteration "]

Prints: record counts per type, kernel count and total kernel time (ns), capture windows, drops,
whether the file ended cleanly, and the iterations (NVTX ranges named PREFIX<N>) with the number of
kernels each launched (kernels whose launching API call, same correlation id, starts inside the range
on the range's thread).
"""
import argparse
import bisect
import json
import struct
import sys
import zlib

TYPES = {1: "process", 2: "string", 3: "device", 4: "kernel", 5: "memcpy", 6: "memset", 7: "api",
         8: "sync", 9: "range", 10: "capture_window", 11: "drops", 12: "end"}


def records(data):
    """Yields (type, body) for each record of each complete chunk; returns the chunk status."""
    if data[:8] != b"SLRECORD":
        raise SystemExit("not a Sightline recording")
    version, header = struct.unpack_from("<II", data, 8)
    pos = header
    while pos < len(data):
        if len(data) - pos < 16:
            return "truncated"
        magic, size, count, crc = struct.unpack_from("<IIII", data, pos)
        payload = data[pos + 16:pos + 16 + size]
        if magic != 0x4B4E4843 or len(payload) != size or zlib.crc32(payload) != crc:
            return "truncated"
        p = 0
        while p + 8 <= size:
            rtype, _flags, n = struct.unpack_from("<HHI", payload, p)
            yield rtype, payload[p + 8:p + 8 + n]
            p += 8 + n
            p += (8 - p % 8) % 8
        pos += 16 + size
    return "complete"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--iteration-prefix", default="iteration ")
    args = ap.parse_args()
    data = open(args.file, "rb").read()
    counts = {}
    strings = {0: ""}
    kernels = []  # (start, end, correlation)
    api = {}      # correlation -> (start, tid)
    ranges = []   # (start, end, tid, name)
    windows = []
    drops = None
    ended = False
    devices = []
    gen = records(data)
    status = "complete"
    while True:
        try:
            rtype, body = next(gen)
        except StopIteration as stop:
            status = stop.value or "complete"
            break
        name = TYPES.get(rtype, "unknown")
        counts[name] = counts.get(name, 0) + 1
        if rtype == 2:
            sid, n = struct.unpack_from("<II", body)
            strings[sid] = body[8:8 + n].decode("utf-8", "replace")
        elif rtype == 4:
            start, end, _node, _dev, _ctx, _stream, corr = struct.unpack_from("<qqQIIII", body)
            kernels.append((start, end, corr))
        elif rtype == 7:
            start, end, _pid, tid, corr = struct.unpack_from("<qqIII", body)
            # Graph kernels share the cudaGraphLaunch correlation: keep the runtime call.
            if corr not in api or struct.unpack_from("<I", body, 32)[0] == 1:
                api[corr] = (start, tid)
        elif rtype == 9:
            start, end, _pid, tid, name_id = struct.unpack_from("<qqIII", body)
            ranges.append((start, end, tid, strings.get(name_id, "")))
        elif rtype == 10:
            windows.append(struct.unpack_from("<qq", body))
        elif rtype == 11:
            drops = dict(zip(["cupti_dropped", "queue_dropped", "unpaired_ranges", "unknown_records"],
                             struct.unpack_from("<QQQQ", body)))
        elif rtype == 12:
            ended = True
        elif rtype == 3:
            f = struct.unpack_from("<qqqqqqiiiiiiiI", body)
            devices.append({"id": f[6], "name": strings.get(f[13], ""), "sm_count": f[7],
                            "cc": f"{f[8]}.{f[9]}"})
    iterations = {}
    prefix = args.iteration_prefix
    iter_ranges = sorted((r for r in ranges if r[3].startswith(prefix)), key=lambda r: r[0])
    starts = [r[0] for r in iter_ranges]
    for _s, _e, corr in kernels:
        call = api.get(corr)
        if call is None:
            continue
        i = bisect.bisect_right(starts, call[0]) - 1
        if i >= 0 and iter_ranges[i][1] >= call[0] and iter_ranges[i][2] == call[1]:
            key = iter_ranges[i][3][len(prefix):]
            iterations[key] = iterations.get(key, 0) + 1
    for r in iter_ranges:
        iterations.setdefault(r[3][len(prefix):], 0)
    out = {
        "file": args.file,
        "status": status,
        "ended_cleanly": ended,
        "records": counts,
        "kernels": len(kernels),
        "kernel_time_ns": sum(e - s for s, e, _ in kernels),
        "capture_windows": len(windows),
        "drops": drops,
        "devices": devices,
        "ranges": len(ranges),
        "iterations": dict(sorted(iterations.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0)),
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
