"""A serving loop that replays CUDA graphs of several batch sizes: the second case of issue 29.

The decode step of graph_decode.py (8 layers, NVTX ranges `embed`, `layer_i > attention / mlp`,
`head`) is captured once per batch-size bucket (1, 2, 4, 8 by default, each capture inside a range
`capture_bs{B}`), as TensorRT-LLM, vLLM and SGLang do. The loop then runs steps whose real batch
(a fixed, repeating pattern of 1..8 sequences) is padded up to the smallest bucket that holds it and
replays that bucket's graph, and last runs the same step eagerly at each bucket size. Every step,
graph or eager, is one iteration of one counter N, in a range `step_N`, as a runtime numbers its
executor steps (TensorRT-LLM's `_forward_step N`). The truth is known from the program: every
kernel of a step belongs to exactly one of `embed`, `layer_i > attention`, `layer_i > mlp`, `head`;
per range a replay runs as many kernels as the eager step of the same batch size; the batch of
every step is in the iteration log.

  python3 graph_serve.py --mode none                   # timing only
  python3 graph_serve.py --mode nsys --log it.jsonl    # cudaProfilerStart before the captures

Writes an iteration log (docs/formats/iteration-log.md: one line per step, `iteration` = N of
`step_N`, `generation_requests` = the real batch; a graph step also has the user field
`graph_batch_size` = the bucket replayed, an eager step none, as it replayed no graph: its real
batch is the batch it ran) and with --plan a JSON file: per step its iteration, mode, index among
the steps of its mode, real batch and batch run.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_decode as gd  # noqa: E402  (the model and its weights)

REAL_BATCHES = [3, 8, 5, 1, 6, 2, 7, 4]  # the requests in flight, step after step


def step(m, b):
    """One decode step over the first b sequences of the static buffers; ranges per layer."""
    nvtx = torch.cuda.nvtx
    nvtx.range_push("embed")
    tokens = m.tokens[:b]
    x = m.embed[tokens]  # [b, H]
    mask = (m.positions <= m.pos).view(1, 1, 1, gd.CACHE)
    nvtx.range_pop()
    for i, l in enumerate(m.layers):
        nvtx.range_push(f"layer_{i}")
        nvtx.range_push("attention")
        h = gd.rms_norm(x, l["ln1"])
        qkv = h @ l["qkv"]
        q, k, v = qkv.split([gd.HEADS * gd.HEAD_DIM, gd.KV_HEADS * gd.HEAD_DIM,
                             gd.KV_HEADS * gd.HEAD_DIM], -1)
        q = q.view(b, gd.HEADS, 1, gd.HEAD_DIM)
        k = k.view(b, gd.KV_HEADS, 1, gd.HEAD_DIM)
        v = v.view(b, gd.KV_HEADS, 1, gd.HEAD_DIM)
        k_cache, v_cache = l["k_cache"][:b], l["v_cache"][:b]
        k_cache.index_copy_(2, m.pos, k)
        v_cache.index_copy_(2, m.pos, v)
        a = F.scaled_dot_product_attention(q, k_cache, v_cache, attn_mask=mask, enable_gqa=True)
        x = x + a.reshape(b, gd.HEADS * gd.HEAD_DIM) @ l["o"]
        nvtx.range_pop()
        nvtx.range_push("mlp")
        h = gd.rms_norm(x, l["ln2"])
        gate, up = (h @ l["gate_up"]).chunk(2, -1)
        x = x + (F.silu(gate) * up) @ l["down"]
        nvtx.range_pop()
        nvtx.range_pop()
    nvtx.range_push("head")
    logits = gd.rms_norm(x, m.norm) @ m.lm_head
    tokens.copy_(logits.argmax(-1))
    m.pos.add_(1).remainder_(gd.CACHE)
    nvtx.range_pop()


def bucket_of(real, buckets):
    return min(b for b in buckets if b >= real)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["none", "nsys"], default="none")
    ap.add_argument("--buckets", default="1,2,4,8")
    ap.add_argument("--steps", type=int, default=40, help="graph steps")
    ap.add_argument("--eager-per-bucket", type=int, default=2)
    ap.add_argument("--no-graphs", action="store_true",
                    help="capture nothing (with --steps 0: an eager-only run, a second trace)")
    ap.add_argument("--log", default="", help="iteration log (JSON lines)")
    ap.add_argument("--plan", default="", help="per step: mode, real batch, batch run (JSON)")
    args = ap.parse_args()
    buckets = sorted(int(b) for b in args.buckets.split(","))
    if buckets[-1] > gd.BATCH or max(REAL_BATCHES) > buckets[-1]:
        sys.exit(f"buckets must reach {max(REAL_BATCHES)} and stay within {gd.BATCH}")
    torch.backends.cuda.matmul.allow_tf32 = True
    m = gd.Model(torch.device("cuda"))
    nvtx = torch.cuda.nvtx
    stream = torch.cuda.Stream()
    # Warm-up of every size on the side stream (cuBLAS handles, SDPA kernels), in one range so that
    # it is no candidate eager step.
    nvtx.range_push("warmup")
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for b in buckets:
            for _ in range(2):
                step(m, b)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    nvtx.range_pop()

    if args.mode == "nsys":
        torch.cuda.cudart().cudaProfilerStart()
    # One graph per bucket, largest first, sharing one memory pool (as vLLM does).
    graphs, pool = {}, None
    for b in [] if args.no_graphs else reversed(buckets):
        g = torch.cuda.CUDAGraph()
        nvtx.range_push(f"capture_bs{b}")
        with torch.cuda.graph(g, pool=pool):
            step(m, b)
        nvtx.range_pop()
        pool = g.pool()
        graphs[b] = g
    torch.cuda.synchronize()

    plan, log_lines, times = [], [], {"graph": [], "eager": []}
    eager_sizes = [b for b in buckets for _ in range(args.eager_per_bucket)]
    graph_steps = 0 if args.no_graphs else args.steps
    iteration = 0  # one counter over graph and eager steps, as a runtime's executor keeps
    for mode, n_steps in (("graph", graph_steps), ("eager", len(eager_sizes))):
        for n in range(n_steps):
            real = REAL_BATCHES[n % len(REAL_BATCHES)] if mode == "graph" else eager_sizes[n]
            run = bucket_of(real, buckets) if mode == "graph" else real
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            t0_real, t0 = time.time_ns(), time.monotonic_ns()
            # One name pattern for every step, so that the trace's iterations (and the log's join
            # to them) hold the eager steps too.
            nvtx.range_push(f"step_{iteration}")
            start.record()
            if mode == "graph":
                graphs[run].replay()
            else:
                step(m, run)
            end.record()
            nvtx.range_pop()
            end.synchronize()
            t1 = time.monotonic_ns()
            times[mode].append(start.elapsed_time(end) * 1000.0)  # us
            plan.append({"iteration": iteration, "mode": mode, "step": n, "real_batch": real,
                         "batch_run": run})
            line = {
                "schema_version": 1, "iteration": iteration, "pid": os.getpid(),
                "timestamp_ns": t0_real, "begin_monotonic_ns": t0, "end_monotonic_ns": t1,
                "latency_ns": t1 - t0, "active_requests": real, "context_requests": 0,
                "generation_requests": real, "generated_tokens": real}
            if mode == "graph":  # an eager step replayed no graph: no graph_batch_size
                line["user"] = {"graph_batch_size": run}
            log_lines.append(line)
            iteration += 1
    torch.cuda.synchronize()
    if args.mode == "nsys":
        torch.cuda.cudart().cudaProfilerStop()
    if args.log:
        with open(args.log, "w") as f:
            for line in log_lines:
                f.write(json.dumps(line, separators=(",", ":")) + "\n")
    if args.plan:
        with open(args.plan, "w") as f:
            json.dump({"buckets": buckets, "steps": plan, "times_us": times}, f)
    def median(values):
        return f"{statistics.median(values):.1f}" if values else "-"

    by_bucket = [f"bs{b} " + median([t for t, p in zip(times["graph"], plan) if p["batch_run"] == b])
                 for b in buckets]
    print(f"mode={args.mode} graph steps={graph_steps} eager steps={len(eager_sizes)}; median "
          f"graph step us by bucket: {', '.join(by_bucket)}; eager median {median(times['eager'])}",
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
