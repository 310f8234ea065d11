#!/usr/bin/env python3
"""Hugging Face transformers' own generate() on a Llama-shaped model with random weights, as engineers
run it: no NVTX, no step ranges, nothing written for a profiler.

  python3 hf_generate.py --mode eager     # eager decode: one forward pass per new token
  python3 hf_generate.py --mode static    # cache_implementation="static": transformers compiles the
                                          # forward with torch.compile (worker processes start) and
                                          # replays CUDA graphs for the decode steps

It prints the truth a profile should find, as one JSON line on stdout: generate() calls, forward passes
per call (the prefill and one per further new token), batch, parameter bytes, KV-cache bytes at the end
of a call, wall time per call.

  --snapshot PATH        records PyTorch's allocator history from before the model is built and dumps
                         a memory snapshot (torch.cuda.memory._dump_snapshot) after the calls
  --torch-profile PATH   the last call under the PyTorch profiler (CPU and CUDA activities, shapes
                         and memory), exported as a Chrome trace (Kineto JSON)
  --window-every N       the calls after the first alternate in blocks of N: out of a profiler window,
                         then inside one (cudaProfilerStart before the block, cudaProfilerStop after
                         it, both outside the timed calls). Under a tracer with a repeating
                         cudaProfilerApi capture range this measures traced against untraced calls in
                         one process, free of the spread between processes; the first call of each
                         block is left out (it pays the switch). Prints median_out_ms, median_in_ms,
                         in_over_out_pct and the calling thread's CPU time per call (cpu_out_ms,
                         cpu_in_ms, cpu_in_over_out_pct).
"""
import argparse
import json
import os
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from window_medians import print_window_medians


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mode", choices=["eager", "static"], default="eager")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--snapshot", default=None)
    ap.add_argument("--torch-profile", default=None)
    ap.add_argument("--window-every", type=int, default=0)
    args = ap.parse_args()
    if args.snapshot:
        torch.cuda.memory._record_memory_history(max_entries=200000)

    # Llama-3.2-1B's shape (16 layers of hidden 2048, GQA 32/8 heads, MLP 8192, vocabulary 128256).
    config = LlamaConfig(hidden_size=2048, intermediate_size=8192, num_hidden_layers=args.layers,
                         num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                         vocab_size=128256, max_position_embeddings=4096, tie_word_embeddings=True,
                         rope_theta=500000.0)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    ids = torch.randint(0, config.vocab_size, (args.batch, args.prompt), device="cuda")
    mask = torch.ones_like(ids)
    kwargs = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False,
                  pad_token_id=0, attention_mask=mask)
    if args.mode == "static":
        kwargs["cache_implementation"] = "static"
    times, cpu_times, windowed = [], [], []
    with torch.inference_mode():
        for call in range(args.calls):
            block, first_of_block = divmod(call - 1, args.window_every or 1)
            in_window = args.window_every > 0 and call > 0 and block % 2 == 1
            if in_window and first_of_block == 0:
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
            prof = None
            if args.torch_profile and call == args.calls - 1:
                prof = torch.profiler.profile(
                    activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                    record_shapes=True, profile_memory=True)
                prof.__enter__()
            torch.cuda.synchronize()
            t0, c0 = time.perf_counter(), time.thread_time()
            out = model.generate(ids, **kwargs)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            cpu_times.append(time.thread_time() - c0)
            if call > 0 and first_of_block > 0:
                windowed.append((in_window, times[-1], cpu_times[-1]))
            if in_window and first_of_block == args.window_every - 1:
                torch.cuda.profiler.stop()
            if prof is not None:
                prof.__exit__(None, None, None)
                prof.export_chrome_trace(args.torch_profile)
    # The KV cache at the end of a call: keys and values of every layer, for the batch and every
    # position it holds, in the model's dtype. Both caches hold prompt + new tokens - 1 positions:
    # the last token is sampled, never fed back (a dynamic cache has not appended it; transformers
    # 5.17 sizes a static cache so, as the snapshots of 2026-12-02 show: 143 for 128 + 16).
    positions = args.prompt + args.new_tokens - 1
    kv_bytes = (2 * config.num_hidden_layers * args.batch * config.num_key_value_heads * positions *
                config.head_dim * torch.finfo(torch.bfloat16).bits // 8)
    if args.snapshot:
        torch.cuda.memory._dump_snapshot(args.snapshot)
        torch.cuda.memory._record_memory_history(enabled=None)
    assert out.shape[1] == args.prompt + args.new_tokens, out.shape
    if len(times) >= 2:
        # For benchmarks (cuda/recorder/tools/overhead_bench.py): the median call after the first,
        # which compiles, captures and warms up.
        later = sorted(times[1:])
        mid = len(later) // 2
        median = later[mid] if len(later) % 2 else (later[mid - 1] + later[mid]) / 2
        print(f"median_call_ms={median * 1e3:.3f}", flush=True)
    if args.window_every > 0:
        print_window_medians(windowed, "calls")
    print(json.dumps({
        "program": "hf_generate", "mode": args.mode, "pid": os.getpid(), "calls": args.calls,
        "forward_passes_per_call": args.new_tokens, "batch": args.batch, "prompt": args.prompt,
        "param_bytes": param_bytes, "kv_bytes": kv_bytes, "layers": args.layers,
        "new_tokens": args.new_tokens, "call_s": [round(t, 4) for t in times],
    }), flush=True)


if __name__ == "__main__":
    main()
