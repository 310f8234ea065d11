#!/usr/bin/env python3
"""Writes profile_memory.json: a small PyTorch-profiler trace with [memory] events whose truth is
known by construction (tests/memory_test.cc states it). Three ProfilerStep iterations on one H100;
each allocates 256 MiB in aten::empty (freed at the step's end) and 64 MiB in aten::mm (kept); 100
MiB was allocated before the trace. The allocator reserves 1 GiB and grows by 512 MiB with a
cudaMalloc in step 2. Plus one host-memory event and one without Bytes (both counted, not read)."""
import json

MIB = 1 << 20
events = []
pid = tid = 1
allocated, reserved = 100 * MIB, 1024 * MIB
addr = 0x7F0000000000


def op(name, ts, dur, cat="cpu_op"):
    events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur})


def mem(ts, nbytes, address, device_type=1, device_id=0, with_bytes=True):
    global allocated
    if device_type == 1 and with_bytes:
        allocated += nbytes
    args = {"Total Reserved": reserved, "Total Allocated": allocated, "Device Id": device_id,
            "Device Type": device_type, "Addr": address}
    if with_bytes:
        args["Bytes"] = nbytes
    events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": pid, "tid": tid, "ts": ts, "args": args})


corr = 100
for step in range(3):
    s = 1000.0 * step
    op(f"ProfilerStep#{step}", s, 999.0, "user_annotation")
    op("aten::empty", s + 100, 100)
    if step == 2:
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "pid": pid,
                       "tid": tid, "ts": s + 110, "dur": 50, "args": {"correlation": 900}})
        reserved += 512 * MIB
    big = addr + step * 0x10000000
    mem(s + 150, 256 * MIB, big)
    op("aten::mm", s + 300, 100)
    mem(s + 350, 64 * MIB, addr + 0x40000000 + step * 0x4000000)
    corr += 1
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                   "tid": tid, "ts": s + 360, "dur": 10, "args": {"correlation": corr}})
    events.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7,
                   "ts": s + 500, "dur": 400,
                   "args": {"device": 0, "stream": 7, "correlation": corr,
                            "grid": [132, 1, 1], "block": [128, 1, 1]}})
    mem(s + 950, -256 * MIB, big)
mem(2960, 4096, 0x1000, device_type=0, device_id=-1)  # host memory: counted, not read
mem(2970, 0, 0x2000, with_bytes=False)  # no Bytes: dropped and counted

trace = {
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504,
                          "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                          "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                          "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132,
                          "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448,
                          "sharedMemPerMultiprocessor": 233472}],
    "traceEvents": events,
}
with open(__file__.replace("make_profile_memory.py", "profile_memory.json"), "w") as f:
    json.dump(trace, f, indent=0)
