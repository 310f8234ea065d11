#!/usr/bin/env python3
"""Checks `sightline record --cuda-memory-usage` (and nsys --cuda-memory-usage=true) against
memory_app's own figures (run_memory.sh). Reads the program's JSON line and the JSON reports of
`sightline analyze` of the recording and of the nsys export; prints one table.

  memory_check.py APP_JSON RECORDING_REPORT_JSON [NSYS_REPORT_JSON]

What must hold (exit 1 otherwise):
- what the recording saw alive at the peak from libcudart (the program's cudaMalloc and pool
  allocations) equals the program's own peak, and its static memory the 1 MiB array;
- the explicit pool's largest size equals cudaMemPoolAttrReservedMemHigh of that pool;
- nsys's peak equals the recording's.
"""
import json
import sys


def rows(section, key):
    t = section["tables"].get(key)
    if t is None:
        return []
    return t["rows"]


def memory(report_path):
    r = json.load(open(report_path))
    for s in r["sections"]:
        if s["key"] == "memory":
            return s
    sys.exit(f"{report_path}: no memory section")


def main():
    app = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    rec = memory(sys.argv[2])
    nsys = memory(sys.argv[3]) if len(sys.argv) > 3 else None
    failures = []

    def row(name, ours, truth, ok):
        print(f"{name:<52} {ours:>16} {truth:>16}  {'ok' if ok else 'DIFFERS'}")
        if not ok:
            failures.append(name)

    dev = rows(rec, "devices")[0]
    by_lib = {r["library"]: r["bytes"] for r in rows(rec, "at_peak_by_library_device_0")}
    # CUPTI's allocation source is the object that called the driver: libcudart for the program's
    # runtime calls, the program itself for its static __device__ memory, NCCL for its own.
    runtime = sum(b for lib, b in by_lib.items() if lib.startswith("libcudart"))
    static = by_lib.get("memory_app", 0)
    nccl = sum(b for lib, b in by_lib.items() if lib.startswith("libnccl"))
    print(f"{'figure':<52} {'recording':>16} {'program':>16}")
    print(f"recording at the peak by library: {by_lib}")
    row("alive at the peak from libcudart = the program's peak", runtime, app["program_peak"],
        runtime == app["program_peak"])
    row("static module memory (library: the program)", static, app["static_bytes"],
        static == app["static_bytes"])
    row("peak = program + static + NCCL's own", dev["peak_bytes"], runtime + static + nccl,
        dev["peak_bytes"] == runtime + static + nccl)
    pools = rows(rec, "pools_device_0")
    for p in pools:
        print(f"  pool {p['pool']}: {p['allocations']} allocations, most used {p['max_used_bytes']}, "
              f"largest {p['max_size_bytes']}, at end {p['end_size_bytes']}, shrunk {p['shrinks']}")
    explicit = [p for p in pools if p["allocations"] == 8]
    high = app["explicit_pool_freed"]["reserved_high"]
    row("explicit pool: largest size = ReservedMemHigh",
        explicit[0]["max_size_bytes"] if explicit else None, high,
        bool(explicit) and explicit[0]["max_size_bytes"] == high)
    if nsys is not None:
        nd = rows(nsys, "devices")[0]
        row("nsys peak = recording peak", nd["peak_bytes"], dev["peak_bytes"],
            nd["peak_bytes"] == dev["peak_bytes"])
        row("nsys allocations = recording allocations", nd["allocations"], dev["allocations"],
            nd["allocations"] == dev["allocations"])
        npools = rows(nsys, "pools_device_0")
        for p in npools:
            print(f"  nsys pool {p['pool']}: {p['allocations']} allocations, largest "
                  f"{p['max_size_bytes']}, at end {p['end_size_bytes']}, shrunk {p['shrinks']}")
    print("FAIL: " + ", ".join(failures) if failures else "all checks hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
