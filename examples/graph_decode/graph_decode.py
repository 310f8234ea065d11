"""A Llama-shaped decode step, captured in a CUDA graph and replayed, then run eagerly: the case of
issue 29 ("Inside CUDA graphs"). The truth is known from the program: every kernel of a step belongs
to exactly one NVTX range layer_i/attention or layer_i/mlp (or the final norm/lm_head of `head`),
and per range the kernel count of a graph replay equals the eager step's.

Plain PyTorch (no transformers): 8 layers, hidden 1024, 16 query / 4 KV heads of 64, intermediate
2816, vocab 32000, bf16, batch 8, a static KV cache of 512 positions (SDPA over the cache, a
position tensor on the device so one graph serves every step).

  python3 graph_decode.py --mode none          # timing only (CUDA events, medians)
  python3 graph_decode.py --mode nsys          # under nsys: cudaProfilerStart/Stop around the steps
  python3 graph_decode.py --mode torch --trace out.json.gz   # PyTorch profiler of some steps
  python3 graph_decode.py --mode nsys --inter 3104  # a 10% wider MLP: a candidate for `diff`

Ranges: `capture` (the graph's capture: layer_i > attention / mlp and head open inside it), then
graph_step_N (N = 0..steps-1, one replay each), then eager_step_N (the same step run eagerly, with
the same nested ranges).
"""

import argparse
import gzip
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER, VOCAB = 8, 1024, 16, 4, 64, 2816, 32000
BATCH, CACHE = 8, 512


def rms_norm(x, w):
    v = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(v + 1e-6)).to(x.dtype) * w


class Model:
    def __init__(self, device, inter=INTER):
        g = torch.Generator(device="cpu").manual_seed(0)

        def p(*shape):
            return (torch.randn(*shape, generator=g) * 0.02).to(device=device, dtype=torch.bfloat16)

        self.layers = []
        for _ in range(LAYERS):
            self.layers.append({
                "ln1": torch.ones(HIDDEN, device=device, dtype=torch.bfloat16),
                "qkv": p(HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD_DIM),
                "o": p(HEADS * HEAD_DIM, HIDDEN),
                "ln2": torch.ones(HIDDEN, device=device, dtype=torch.bfloat16),
                "gate_up": p(HIDDEN, 2 * inter),
                "down": p(inter, HIDDEN),
                "k_cache": torch.zeros(BATCH, KV_HEADS, CACHE, HEAD_DIM, device=device,
                                       dtype=torch.bfloat16),
                "v_cache": torch.zeros(BATCH, KV_HEADS, CACHE, HEAD_DIM, device=device,
                                       dtype=torch.bfloat16),
            })
        self.norm = torch.ones(HIDDEN, device=device, dtype=torch.bfloat16)
        self.lm_head = p(HIDDEN, VOCAB)
        self.embed = p(VOCAB, HIDDEN)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)  # the step's position
        self.tokens = torch.zeros(BATCH, dtype=torch.long, device=device)
        self.positions = torch.arange(CACHE, device=device)

    def step(self):
        """One decode step: the next token of each sequence; ranges per layer."""
        nvtx = torch.cuda.nvtx
        x = self.embed[self.tokens]  # [B, H]
        mask = (self.positions <= self.pos).view(1, 1, 1, CACHE)
        for i, l in enumerate(self.layers):
            nvtx.range_push(f"layer_{i}")
            nvtx.range_push("attention")
            h = rms_norm(x, l["ln1"])
            qkv = h @ l["qkv"]
            q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
            q = q.view(BATCH, HEADS, 1, HEAD_DIM)
            k = k.view(BATCH, KV_HEADS, 1, HEAD_DIM)
            v = v.view(BATCH, KV_HEADS, 1, HEAD_DIM)
            l["k_cache"].index_copy_(2, self.pos, k)
            l["v_cache"].index_copy_(2, self.pos, v)
            a = F.scaled_dot_product_attention(q, l["k_cache"], l["v_cache"], attn_mask=mask,
                                               enable_gqa=True)
            x = x + a.reshape(BATCH, HEADS * HEAD_DIM) @ l["o"]
            nvtx.range_pop()
            nvtx.range_push("mlp")
            h = rms_norm(x, l["ln2"])
            gate, up = (h @ l["gate_up"]).chunk(2, -1)
            x = x + (F.silu(gate) * up) @ l["down"]
            nvtx.range_pop()
            nvtx.range_pop()
        nvtx.range_push("head")
        logits = rms_norm(x, self.norm) @ self.lm_head
        self.tokens.copy_(logits.argmax(-1))
        self.pos.add_(1).remainder_(CACHE)
        nvtx.range_pop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["none", "nsys", "torch"], default="none")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--trace", default="graph_decode.pytorch.json.gz")
    ap.add_argument("--timings", default="")
    ap.add_argument("--inter", type=int, default=INTER,
                    help="the MLP's intermediate size (3104: 10%% wider, a planted change for diff)")
    ap.add_argument("--start-after-capture", action="store_true",
                    help="--mode nsys: call cudaProfilerStart after the capture, so that the graph "
                         "is captured before the profiled window (as production warm-up does)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    dev = torch.device("cuda")
    m = Model(dev, args.inter)
    nvtx = torch.cuda.nvtx
    stream = torch.cuda.Stream()
    # Warm-up on the side stream (cuBLAS handles, SDPA kernels), as CUDA graph capture wants.
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            m.step()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()

    if args.mode == "nsys" and not args.start_after_capture:
        torch.cuda.cudart().cudaProfilerStart()
    prof = None
    if args.mode == "torch":
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()

    graph = torch.cuda.CUDAGraph()
    nvtx.range_push("capture")
    with torch.cuda.graph(graph):
        m.step()
    nvtx.range_pop()
    torch.cuda.synchronize()
    if args.mode == "nsys" and args.start_after_capture:
        torch.cuda.cudart().cudaProfilerStart()

    times = {"graph": [], "eager": []}
    for mode in ("graph", "eager"):
        for n in range(args.steps):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            nvtx.range_push(f"{mode}_step_{n}")
            start.record()
            if mode == "graph":
                graph.replay()
            else:
                m.step()
            end.record()
            nvtx.range_pop()
            end.synchronize()
            times[mode].append(start.elapsed_time(end) * 1000.0)  # us
    torch.cuda.synchronize()
    if prof is not None:
        prof.__exit__(None, None, None)
        tmp = args.trace[:-3] if args.trace.endswith(".gz") else args.trace
        prof.export_chrome_trace(tmp)
        if args.trace.endswith(".gz"):
            with open(tmp, "rb") as f, gzip.open(args.trace, "wb") as g:
                g.write(f.read())
            os.remove(tmp)
    if args.mode == "nsys":
        torch.cuda.cudart().cudaProfilerStop()
    skip = min(5, args.steps // 5)
    summary = {k: statistics.median(v[skip:]) for k, v in times.items()}
    print(f"mode={args.mode} steps={args.steps} median step us: graph {summary['graph']:.1f}, "
          f"eager {summary['eager']:.1f}, eager/graph {summary['eager'] / summary['graph']:.2f}",
          flush=True)
    if args.timings:
        with open(args.timings, "w") as f:
            json.dump({"mode": args.mode, "median_us": summary, "steps_us": times}, f)


if __name__ == "__main__":
    sys.exit(main())
