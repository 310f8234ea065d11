#!/usr/bin/env python3
"""GPU memory and DRAM bandwidth with the truth known from the program itself, for Sightline's memory and
gpu_metrics analyses (issue 16). Plain PyTorch and NVTX: no Sightline package needed.

Memory phase: `iteration N` ranges (N = 0 .. --iterations-1), each allocating and freeing tensors of known
sizes through PyTorch's caching allocator, with two planted troubles:
  - a hot-path size that grows every 3 iterations (--grow-every) by --grow-mib, larger than any block the
    allocator holds, so it must cudaMalloc more inside the loop;
  - one iteration (--leak-iter) allocates --leak-mib and keeps it: allocated memory grows for good.
Bandwidth phase (`copy_phase`): --reps elementwise kernels dst = src * 2 over two --copy-mib float32
buffers, timed with CUDA events; achieved bandwidth = reps * 2 * bytes / elapsed (read src, write dst).

At exit the program writes its truth as JSON (--truth): max_memory_allocated, max_memory_reserved, the
device's total memory, allocated/reserved after every iteration and which iterations grew the reserved
memory, and the measured bandwidth.

Modes: none (no profiler); nsys (brackets the measured part with cudaProfilerStart/Stop for
`nsys profile -c cudaProfilerApi --capture-range-end=stop`, ranges as NVTX); torch (the PyTorch profiler,
CPU+CUDA, profile_memory=True, ranges as record_function, Chrome trace to --trace).
Capture: examples/gpu_memory/capture.sh.
"""
import argparse
import contextlib
import gzip
import json
import os
import shutil
import statistics
import time

import torch

MIB = 1 << 20


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mode", choices=["none", "nsys", "torch"], default="none")
    ap.add_argument("--truth", help="write the program's truth here (JSON)")
    ap.add_argument("--trace", help="torch mode: Chrome trace path (.json or .json.gz)")
    ap.add_argument("--iterations", type=int, default=12)
    ap.add_argument("--state-mib", type=int, default=256, help="persistent buffer allocated before the loop")
    ap.add_argument("--act-mib", type=int, default=64, help="per-iteration activation (and its product)")
    ap.add_argument("--hot-mib", type=int, default=80, help="hot-path buffer, first size")
    ap.add_argument("--grow-mib", type=int, default=48, help="hot-path buffer grows by this ...")
    ap.add_argument("--grow-every", type=int, default=3, help="... every this many iterations")
    ap.add_argument("--leak-iter", type=int, default=7, help="iteration that keeps --leak-mib alive")
    ap.add_argument("--leak-mib", type=int, default=1024)
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of src and of dst (float32)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--warmup-reps", type=int, default=5)
    args = ap.parse_args()

    dev = torch.device("cuda")
    torch.cuda.init()
    prof = None
    if args.mode == "torch":
        from torch.profiler import ProfilerActivity, profile, record_function
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True)
        prof.__enter__()

        def rng(name):
            return record_function(name)
    else:
        def rng(name):
            return torch.cuda.nvtx.range(name)
    if args.mode == "nsys":
        torch.cuda.profiler.start()  # cudaProfilerStart: nsys -c cudaProfilerApi starts here
    torch.cuda.reset_peak_memory_stats()
    fp32 = 4
    t_start = time.perf_counter()

    # ---- memory phase ----
    with rng("setup"):
        state = torch.ones(args.state_mib * MIB // fp32, device=dev)
    torch.cuda.synchronize()
    leaked = []
    per_iter = []
    for i in range(args.iterations):
        reserved_before = torch.cuda.memory_reserved()
        with rng(f"iteration {i}"):
            act = torch.empty(args.act_mib * MIB // fp32, device=dev).fill_(float(i))
            prod = act * 2.0
            hot_mib = args.hot_mib + args.grow_mib * (i // args.grow_every)
            hot = torch.empty(hot_mib * MIB // fp32, device=dev).fill_(1.0)
            if i == args.leak_iter:
                leaked.append(torch.full((args.leak_mib * MIB // fp32,), 3.0, device=dev))
            state[: act.numel()].add_(prod)
            hot[: act.numel()].add_(act)
            peak_in_iter = torch.cuda.memory_allocated()
            del act, prod, hot
            torch.cuda.synchronize()
        per_iter.append({
            "iteration": i,
            "hot_mib": hot_mib,
            "leak_mib": args.leak_mib if i == args.leak_iter else 0,
            "allocated_peak_in_iteration_bytes": peak_in_iter,
            "allocated_after_bytes": torch.cuda.memory_allocated(),
            "reserved_after_bytes": torch.cuda.memory_reserved(),
            "reserved_growth_bytes": torch.cuda.memory_reserved() - reserved_before,
        })
    memory_phase = {
        "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
        "max_memory_reserved_bytes": torch.cuda.max_memory_reserved(),
    }

    # ---- bandwidth phase ----
    n = args.copy_mib * MIB // fp32
    with rng("copy_setup"):
        src = torch.ones(n, device=dev)
        dst = torch.empty(n, device=dev)
    with rng("copy_warmup"):
        for _ in range(args.warmup_reps):
            torch.mul(src, 2.0, out=dst)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.reps + 1)]
    with rng("copy_phase"):
        starts[0].record()
        for r in range(args.reps):
            torch.mul(src, 2.0, out=dst)
            starts[r + 1].record()
        torch.cuda.synchronize()
    per_rep_ms = [starts[r].elapsed_time(starts[r + 1]) for r in range(args.reps)]
    total_ms = starts[0].elapsed_time(starts[-1])
    bytes_per_rep = 2 * n * fp32
    assert float(dst[0].item()) == 2.0 and float(dst[-1].item()) == 2.0
    del src, dst

    if args.mode == "nsys":
        torch.cuda.profiler.stop()
    wall_s = time.perf_counter() - t_start
    if prof is not None:
        prof.__exit__(None, None, None)
        if args.trace:
            raw = args.trace[:-3] if args.trace.endswith(".gz") else args.trace
            prof.export_chrome_trace(raw)
            if raw != args.trace:
                with open(raw, "rb") as f_in, gzip.open(args.trace, "wb", compresslevel=9) as f_out:
                    shutil.copyfileobj(f_in, f_out)
                os.remove(raw)

    props = torch.cuda.get_device_properties(dev)
    free_b, total_b = torch.cuda.mem_get_info()
    bus_bits = getattr(props, "memory_bus_width", None)
    clock_khz = getattr(props, "memory_clock_rate", None)
    truth = {
        "mode": args.mode,
        "device": props.name,
        "device_total_memory_bytes": total_b,
        "props_total_memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "args": vars(args),
        "memory": {
            **memory_phase,
            "max_memory_allocated_bytes_at_exit": torch.cuda.max_memory_allocated(),
            "max_memory_reserved_bytes_at_exit": torch.cuda.max_memory_reserved(),
            "memory_reserved_bytes_at_exit": torch.cuda.memory_reserved(),
            "memory_allocated_bytes_at_exit": torch.cuda.memory_allocated(),
            "iterations_with_reserved_growth": [p["iteration"] for p in per_iter if p["reserved_growth_bytes"] > 0],
            "per_iteration": per_iter,
            "num_alloc_retries": torch.cuda.memory_stats().get("num_alloc_retries", 0),
        },
        "bandwidth": {
            "kernel": "torch.mul(src, 2.0, out=dst), float32",
            "bytes_per_rep": bytes_per_rep,
            "reps": args.reps,
            "elapsed_ms": total_ms,
            "achieved_GBps": bytes_per_rep * args.reps / (total_ms * 1e-3) / 1e9,
            "median_rep_ms": statistics.median(per_rep_ms),
            "median_rep_GBps": bytes_per_rep / (statistics.median(per_rep_ms) * 1e-3) / 1e9,
            "memory_bus_width_bits": bus_bits,
            "memory_clock_rate_khz": clock_khz,
            # DDR: two transfers per clock
            "theoretical_peak_GBps": (2 * clock_khz * 1e3 * bus_bits / 8 / 1e9) if bus_bits and clock_khz else None,
        },
        "wall_s": wall_s,
    }
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump(truth, f, indent=1)
    short = {k: truth["memory"][k] for k in ("max_memory_allocated_bytes_at_exit", "max_memory_reserved_bytes_at_exit",
                                             "memory_reserved_bytes_at_exit", "iterations_with_reserved_growth")}
    short.update({k: truth["bandwidth"][k] for k in ("achieved_GBps", "median_rep_GBps", "theoretical_peak_GBps")})
    short.update(mode=args.mode, total=total_b, wall_s=round(wall_s, 3))
    print(json.dumps(short))


if __name__ == "__main__":
    main()
