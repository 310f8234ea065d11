#!/usr/bin/env python3
"""PyTorch decode loop for the recorder's overhead benchmark (run_on_gpu.sh).

A small Llama-shaped model from a LlamaConfig with random weights (bf16; the configuration of
examples/llama_decode/make_samples.py: 8 layers, hidden 1024, 16 heads, 4 KV heads, FFN 2816,
vocab 32000), batch 8, one prefill of 64 tokens then greedy decode steps with a KV cache; each
step is one NVTX range "iteration <i>" and ends in a host sync (the sampled tokens go to the host).

  --mode none    no profiler in the process (also used under `sightline record` and `nsys`)
  --mode torch   torch.profiler with CUDA activities only around the measured steps

  --window-every N   measured steps alternate in blocks of N: out of a profiler window, then inside
                     one (cudaProfilerStart before the block, cudaProfilerStop after it; both calls
                     outside the timed steps). Under `sightline record --capture-range cudaProfilerApi
                     --capture-range-end repeat` (or nsys -c cudaProfilerApi) this compares traced and
                     untraced steps inside one process, free of the process-to-process spread; without
                     a capture range the two halves must agree (a control). The first step of each
                     block is left out (it pays the switch).

Prints `median_itl_ms=<float>` (median wall time of the measured decode steps); with --window-every
also `median_out_ms=`, `median_in_ms=` and `in_over_out_pct=`.
"""
import argparse
import statistics
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["none", "torch"], default="none")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--window-every", type=int, default=0)
    args = p.parse_args()

    torch.backends.cuda.enable_cudnn_sdp(False)  # cuDNN SDPA rebuilds a graph per KV length
    cfg = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                      num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                      max_position_embeddings=4096)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    ids = torch.randint(3, cfg.vocab_size, (args.batch, 64), device="cuda")

    n = args.window_every
    inside, outside = [], []

    def run(steps, times):
        past = None
        inp = ids
        for i in range(steps):
            block = (i - 1) // n if n and times is not None and i > 0 else -1
            if block >= 0 and (i - 1) % n == 0:
                (torch.cuda.profiler.start if block % 2 else torch.cuda.profiler.stop)()
            t0 = time.perf_counter()
            torch.cuda.nvtx.range_push(f"iteration {i}")
            out = model(input_ids=inp, past_key_values=past, use_cache=True)
            past = out.past_key_values
            nxt = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
            inp = nxt.cpu().cuda()  # the host sees the tokens: one sync per step
            torch.cuda.nvtx.range_pop()
            if times is not None and i > 0:  # step 0 is the prefill
                times.append(time.perf_counter() - t0)
                if block >= 0 and (i - 1) % n != 0:
                    (inside if block % 2 else outside).append(times[-1])

    with torch.inference_mode():
        run(args.warmup, None)
        times = []
        if args.mode == "torch":
            acts = [torch.profiler.ProfilerActivity.CUDA]
            with torch.profiler.profile(activities=acts):
                run(args.steps + 1, times)
        else:
            run(args.steps + 1, times)
    if n:
        torch.cuda.profiler.stop()
        out_ms = statistics.median(outside) * 1e3
        in_ms = statistics.median(inside) * 1e3
        print(f"median_out_ms={out_ms:.4f} median_in_ms={in_ms:.4f} "
              f"in_over_out_pct={(in_ms / out_ms - 1) * 100:.2f}", flush=True)
    print(f"median_itl_ms={statistics.median(times) * 1e3:.4f}", flush=True)


if __name__ == "__main__":
    main()
