#!/usr/bin/env python3
"""Summarises a `sightline record` file (.slrec) as JSON, independently of the C++ reader.

Written from docs/formats/recorder.md alone (standard library only), so the GPU checks in
run_on_gpu.sh test the format as documented and need no sightline build on the GPU machine.

  slrec_summary.py FILE [--iteration-prefix "iteration "] [--timing]

Prints: record counts per type, kernel count and total kernel time (ns), capture windows, drops,
whether the file ended cleanly, the graph nodes (created, cloned, and how many graph kernels lead
through them to a captured node), and the iterations (NVTX ranges named PREFIX<N>) with the number of
kernels each launched (kernels whose launching API call, same correlation id, starts inside the range
on the range's thread). --timing adds medians that tell where a tracer's cost lands: the launching
thread's API call durations and start-to-start intervals, kernel durations and the GPU gaps between
consecutive kernels on a stream.
"""
import argparse
import bisect
import json
import statistics
import struct
import sys
import zlib

TYPES = {1: "process", 2: "string", 3: "device", 4: "kernel", 5: "memcpy", 6: "memset", 7: "api",
         8: "sync", 9: "range", 10: "capture_window", 11: "drops", 12: "end", 13: "graph",
         14: "thread", 15: "gpu_metric", 16: "gpu_metric_sample", 17: "gpu_metrics_status",
         18: "memory", 19: "memory_pool", 20: "graph_node",
         21: "graph_event"}


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


def timing(kernels, kstreams, calls, strings):
    """Medians (ns) of the busiest API thread's calls and of kernels and GPU gaps."""
    med = lambda v: statistics.median(v) if v else None
    t = {"kernel_ns": med([e - s for s, e, _ in kernels])}
    gaps = []
    for spans in kstreams.values():
        spans.sort()
        gaps += [b[0] - a[1] for a, b in zip(spans, spans[1:]) if b[0] >= a[1]]
    t["gpu_gap_ns"] = med(gaps)
    if calls:
        tid, mine = max(calls.items(), key=lambda kv: len(kv[1]))
        mine.sort()
        t["api_thread_calls"] = len(mine)
        counts = {}
        for per_tid in calls.values():
            for _s, _e, n in per_tid:
                counts[strings.get(n, str(n))] = counts.get(strings.get(n, str(n)), 0) + 1
        t["api_counts"] = dict(sorted(counts.items(), key=lambda kv: -kv[1])[:8])
        by_name = {}
        for s, e, n in mine:
            by_name.setdefault(strings.get(n, str(n)), []).append(e - s)
        t["api_ns"] = {k: med(v) for k, v in sorted(by_name.items(), key=lambda kv: -len(kv[1]))[:6]}
        launches = [c for c in mine if strings.get(c[2], "").startswith(("cudaLaunchKernel", "cuLaunchKernel"))]
        t["launch_interval_ns"] = med([b[0] - a[0] for a, b in zip(launches, launches[1:])])
        t["between_launches_ns"] = med([b[0] - a[1] for a, b in zip(launches, launches[1:])])
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--iteration-prefix", default="iteration ")
    ap.add_argument("--timing", action="store_true")
    args = ap.parse_args()
    data = open(args.file, "rb").read()
    counts = {}
    strings = {0: ""}
    kernels = []  # (start, end, correlation)
    graph_kernel_nodes = []  # graph node id of each kernel launched from a graph
    nodes = {}  # graph node id -> [time, tid, original] (first time and thread, first original)
    node_events = {1: 0, 2: 0}
    kstreams = {}  # stream -> [(start, end)] (--timing)
    calls = {}     # tid -> [(start, end, name id)] (--timing)
    api = {}      # correlation -> (start, tid)
    ranges = []   # (start, end, tid, name)
    windows = []
    drops = None
    graph_events = []
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
            start, end, node, _dev, _ctx, stream, corr = struct.unpack_from("<qqQIIII", body)
            kernels.append((start, end, corr))
            if node:
                graph_kernel_nodes.append(node)
            if args.timing:
                kstreams.setdefault(stream, []).append((start, end))
        elif rtype == 7:
            start, end, _pid, tid, corr = struct.unpack_from("<qqIII", body)
            if args.timing:
                calls.setdefault(tid, []).append((start, end, struct.unpack_from("<I", body, 36)[0]))
            # Graph kernels share the cudaGraphLaunch correlation: keep the runtime call.
            if corr not in api or struct.unpack_from("<I", body, 32)[0] == 1:
                api[corr] = (start, tid)
        elif rtype == 9:
            start, end, _pid, tid, name_id = struct.unpack_from("<qqIII", body)
            ranges.append((start, end, tid, strings.get(name_id, "")))
        elif rtype == 10:
            windows.append(struct.unpack_from("<qq", body))
        elif rtype == 11:
            names = ["cupti_dropped", "queue_dropped", "unpaired_ranges", "unknown_records",
                     "graph_node_dropped"]
            n = min(len(names), len(body) // 8)  # older files: the first four
            drops = dict(zip(names, struct.unpack_from("<" + "Q" * n, body)))
        elif rtype == 12:
            ended = True
        elif rtype == 20:
            t, node, original, _pid, tid, _graph, _type, event = struct.unpack_from("<qQQIIIII", body)
            node_events[event] = node_events.get(event, 0) + 1
            if node not in nodes:
                nodes[node] = [t, tid, original]
            elif not nodes[node][2]:
                nodes[node][2] = original
        elif rtype == 21:
            t, _pid, tid, graph, original, graph_exec, event = struct.unpack_from("<qIIIIII", body)
            graph_events.append({"event": {1: "created", 2: "cloned", 3: "instantiated"}.get(
                event, event), "time_ns": t, "tid": tid, "graph_id": graph,
                "original_graph_id": original, "graph_exec_id": graph_exec})
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
    # Graph kernels whose node leads, through the originals of clones, to a recorded node.
    def captured(node):
        for _ in range(16):
            n = nodes.get(node)
            if n is None or not n[2] or n[2] not in nodes:
                return n
            node = n[2]
        return nodes.get(node)
    with_capture = sum(1 for n in graph_kernel_nodes if captured(n) is not None)
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
        "graph_nodes": {"created": node_events.get(1, 0), "cloned": node_events.get(2, 0),
                        "distinct": len(nodes), "graph_kernels": len(graph_kernel_nodes),
                        "graph_kernels_with_capture": with_capture},
        "graph_events": graph_events,
        "iterations": dict(sorted(iterations.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0)),
    }
    if args.timing:
        out["timing"] = timing(kernels, kstreams, calls, strings)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
