#!/usr/bin/env python3
"""A serving loop that replays many small CUDA graphs, as vLLM's and SGLang's decode does: one graph
captured per batch size of a list (1, 2, 4, 8, then every 8 up to --max-batch), a batch size that
drifts from step to step (requests join and leave), and per step an eager copy of the inputs into
the graph's static buffers, the replay, an eager argmax and the tokens to the host (a sync). The
model step is a stack of --layers blocks (RMS norm, a gated MLP of hidden --hidden) in bf16 with
random weights: about 8 kernels a layer, host-bound at these sizes, so a tracer's cost per launch
shows.

  python3 graph_serving_loop.py                      # prints median_step_us=
  python3 graph_serving_loop.py --window-every 400   # blocks of steps alternate outside and inside
                                                     # a cudaProfilerStart/Stop window

With --window-every N the steps after the warm-up alternate in blocks of N: outside a profiler
window, then inside one (cudaProfilerStart before the block, cudaProfilerStop after it). The first
tenth of each block is left out (it pays the switch); each block gives its mean step (wall, and the
calling thread's CPU time), and the program prints the medians over blocks of each kind as
median_out_ms, median_in_ms, in_over_out_pct, cpu_out_ms, cpu_in_ms, cpu_in_over_out_pct (ms per
step), the format of hf_generate.py --window-every (window_medians.py; cuda/recorder/tools/window_bench.py
reads it).

First run: session 28 on an H200, 11 graphs, 232 us a step (docs/evidence/recorder/journal.md,
"run28").
"""
import argparse
import random
import statistics
import time

import torch
from window_medians import print_window_medians


def capture_sizes(max_batch):
    sizes = [1, 2, 4] + list(range(8, max_batch + 1, 8))
    return sorted(set(s for s in sizes if s <= max_batch))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--window-every", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    dev, dt, h = torch.device("cuda"), torch.bfloat16, args.hidden
    weights = [(torch.randn(h, dtype=dt, device=dev),
                torch.randn(h, 4 * h, dtype=dt, device=dev) / h ** 0.5,
                torch.randn(h, 4 * h, dtype=dt, device=dev) / h ** 0.5,
                torch.randn(4 * h, h, dtype=dt, device=dev) / (4 * h) ** 0.5)
               for _ in range(args.layers)]
    head = torch.randn(h, 32000, dtype=dt, device=dev) / h ** 0.5

    def step(x):
        for norm_w, gate, up, down in weights:
            y = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(dt) * norm_w
            x = x + (torch.nn.functional.silu(y @ gate) * (y @ up)) @ down
        return x @ head

    sizes = capture_sizes(args.max_batch)
    graphs, inputs, outputs = {}, {}, {}
    pool = None
    stream = torch.cuda.Stream()
    with torch.inference_mode():
        for b in reversed(sizes):  # largest first, as vLLM captures, so the pool serves the rest
            inputs[b] = torch.zeros(b, h, dtype=dt, device=dev)
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(2):
                    step(inputs[b])
            torch.cuda.current_stream().wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                outputs[b] = step(inputs[b])
            pool = g.pool()
            graphs[b] = g
        torch.cuda.synchronize()

        batch = args.max_batch // 2
        fresh = torch.randn(args.max_batch, h, dtype=dt, device=dev)
        n = args.window_every
        blocks = []  # (in_window, mean wall s, mean cpu s)
        times, cpu = [], []
        for i in range(args.warmup + args.steps):
            measured = i >= args.warmup
            k = i - args.warmup
            block, pos = divmod(k, n) if n > 0 and measured else (-1, -1)
            in_window = n > 0 and measured and block % 2 == 1
            if in_window and pos == 0:
                torch.cuda.profiler.start()
            # Requests join and leave: the batch drifts by a few each step.
            batch = min(args.max_batch, max(1, batch + rng.randint(-3, 3)))
            bucket = next(s for s in sizes if s >= batch)
            t0, c0 = time.perf_counter(), time.thread_time()
            inputs[bucket][:batch].copy_(fresh[:batch])
            graphs[bucket].replay()
            tokens = outputs[bucket][:batch].argmax(-1).tolist()  # to the host: a sync
            t1, c1 = time.perf_counter(), time.thread_time()
            assert len(tokens) == batch
            if measured:
                times.append(t1 - t0)
                cpu.append(c1 - c0)
            if n > 0 and measured and pos == n - 1:
                skip = max(1, n // 10)
                blocks.append((in_window, statistics.mean(times[-n + skip:]),
                               statistics.mean(cpu[-n + skip:])))
                if in_window:
                    torch.cuda.profiler.stop()
    print(f"graphs={len(graphs)} sizes={sizes[0]}-{sizes[-1]} "
          f"median_step_us={statistics.median(times) * 1e6:.2f}", flush=True)
    if n > 0:
        print_window_medians(blocks, "blocks")


if __name__ == "__main__":
    main()
