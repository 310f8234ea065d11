#!/usr/bin/env python3
"""A decode loop with the host-side troubles of a Python serving runtime, for Sightline's threads
section and its host rules (issue 14). Plain PyTorch and NVTX: no Sightline package needed.

  - The main thread runs `iteration N` NVTX ranges: a small model step (matmuls), a sync (sampling
    needs the logits on the host), then hands the step's output to a response thread.
  - The response thread "detokenizes" in pure Python while holding the GIL (`handle_responses`
    ranges), so the main thread waits for the GIL (gil_contention, host_bound_pipeline).
  - Every --gc-every iterations the loop builds cyclic garbage and collects it; collections are
    marked "Python GC" as TensorRT-LLM's TLLM_PROFILE_RECORD_GC does (gc_pauses, outliers).
  - Every --poll-every iterations the loop waits on a pipe with select() for --poll-ms, like a
    scheduler polling a socket (blocking_os_call).

Capture (../shared/device/README.md has the nsys setup):
  nsys profile -t cuda,nvtx,osrt,python-gil --python-sampling=true -s none --cpuctxsw none \\
    -o host_loop python3 examples/host_loop/host_loop.py
  nsys export --type sqlite --include-json=true -o host_loop.sqlite host_loop.nsys-rep
  sightline analyze host_loop.sqlite
"""
import argparse
import ctypes
import gc
import os
import queue
import select
import threading
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--iterations", type=int, default=120)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--detok-ms", type=float, default=2.0, help="response thread's Python work per step")
    ap.add_argument("--gc-every", type=int, default=30, help="0: no planted GC pauses")
    ap.add_argument("--gc-objects", type=int, default=300000)
    ap.add_argument("--poll-every", type=int, default=20, help="0: no planted blocking poll")
    ap.add_argument("--poll-ms", type=float, default=8.0)
    args = ap.parse_args()

    nvtx = torch.cuda.nvtx
    gc_range = {}

    def on_gc(phase, info):  # TensorRT-LLM's TLLM_PROFILE_RECORD_GC, in small
        if phase == "start":
            gc_range["id"] = nvtx.range_start("Python GC")
        elif "id" in gc_range:
            nvtx.range_end(gc_range.pop("id"))

    gc.callbacks.append(on_gc)
    gc.disable()  # collections happen where the loop plants them
    dev = torch.device("cuda")
    torch.manual_seed(0)
    weights = [torch.randn(args.hidden, args.hidden, device=dev, dtype=torch.bfloat16) * 0.02
               for _ in range(args.layers)]
    x = torch.randn(args.batch, args.hidden, device=dev, dtype=torch.bfloat16)

    responses = queue.Queue()

    def respond():
        try:  # the OS thread name, which nsys lists (PR_SET_NAME)
            ctypes.CDLL(None).prctl(15, b"responder", 0, 0, 0)
        except (OSError, AttributeError):
            pass
        while True:
            item = responses.get()
            if item is None:
                return
            nvtx.range_push("handle_responses")
            deadline = time.perf_counter() + args.detok_ms / 1000
            text = []
            while time.perf_counter() < deadline:  # pure Python: holds the GIL throughout
                text.append("".join(chr(48 + (t % 40)) for t in item))
            nvtx.range_pop()

    responder = threading.Thread(target=respond, name="responder")
    responder.start()
    r_fd, w_fd = os.pipe()

    def step(h):
        for w in weights:
            h = torch.nn.functional.gelu(h @ w)
        return h

    for _ in range(5):  # warm-up: cuBLAS handles, kernels
        step(x)
    torch.cuda.synchronize()
    start = time.monotonic()
    for it in range(args.iterations):
        nvtx.range_push(f"iteration {it}")
        nvtx.range_push("forward")
        h = step(x)
        nvtx.range_pop()
        nvtx.range_push("sample")
        tokens = h[:, :16].float().argmax(dim=1).tolist()  # a sync: the host needs the tokens
        nvtx.range_pop()
        responses.put(tokens * 8)
        if args.poll_every and it % args.poll_every == args.poll_every - 1:
            nvtx.range_push("poll_scheduler")
            select.select([r_fd], [], [], args.poll_ms / 1000)
            nvtx.range_pop()
        if args.gc_every and it % args.gc_every == args.gc_every - 1:
            junk = []
            for _ in range(args.gc_objects):
                a, b = [], []
                a.append(b)
                b.append(a)
                junk.append(a)
            del junk
            gc.collect()
        nvtx.range_pop()
    torch.cuda.synchronize()
    responses.put(None)
    responder.join()
    print(f"host_loop: {args.iterations} iterations in {time.monotonic() - start:.3f} s")


if __name__ == "__main__":
    main()
