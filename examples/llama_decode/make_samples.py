#!/usr/bin/env python3
"""Batched greedy decoding with a small Llama-shaped model: the workload behind Sightline's sample traces.

Builds a Llama-shaped model from a LlamaConfig with random weights (no checkpoint needed), runs one prefill
over a left-padded batch of prompts of different lengths, then a greedy decode loop with a KV cache. Every
iteration is one NVTX range and one torch.profiler.record_function range named ``iteration_<i>``
(iteration_0 is the prefill), with nested ``prefill``/``decode`` (the model forward) and ``sample``
(argmax, stop check with a host sync, copy of the new tokens to the host and back to the device as the
next step's input) ranges. PyTorch's cuDNN attention backend is turned off unless --allow-cudnn-sdpa
(see its help). A short warm-up runs first under a range named ``warmup``, which Sightline's
default iteration detection does not pick up.

Modes:
  --mode none   no profiler; prints the median inter-token latency (ITL) as a baseline
  --mode nsys   the same, meant to run under `nsys profile -t cuda,nvtx -s none --cpuctxsw none`
  --mode torch  torch.profiler (CPU + CUDA activities, record_shapes=False) around the measured part;
                writes a Chrome trace and gzips it (--trace, default llama_decode.pytorch.json.gz)

Prints the median ITL (wall time of a decode iteration, which ends in host syncs) as
`median ITL: <ms> ms`.
"""
import argparse
import contextlib
import gzip
import os
import shutil
import statistics
import sys
import time

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM


@contextlib.contextmanager
def annotate(name):
    """One NVTX range (for nsys) and one record_function range (for torch.profiler) with the same name."""
    torch.cuda.nvtx.range_push(name)
    try:
        with torch.profiler.record_function(name):
            yield
    finally:
        torch.cuda.nvtx.range_pop()


def build_model(args):
    cfg = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=4096,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(old)
    model = model.to(device="cuda", dtype=torch.bfloat16).eval()
    return cfg, model


def make_batch(args, cfg):
    """Left-padded prompts of different lengths, as a server would batch them."""
    g = torch.Generator().manual_seed(1)
    lengths = [int(x) for x in args.prompt_lengths.split(",")][: args.batch]
    while len(lengths) < args.batch:
        lengths.append(lengths[-1])
    width = max(lengths)
    ids = torch.full((args.batch, width), cfg.pad_token_id, dtype=torch.long)
    mask = torch.zeros((args.batch, width), dtype=torch.long)
    for b, n in enumerate(lengths):
        ids[b, width - n:] = torch.randint(3, cfg.vocab_size, (n,), generator=g)
        mask[b, width - n:] = 1
    return lengths, ids.cuda(), mask.cuda()


@torch.inference_mode()
def generate(model, cfg, ids, mask, steps, name_prefix="iteration", timings=None):
    """Prefill then `steps` greedy decode iterations. Returns the generated tokens (host tensor)."""
    batch = ids.shape[0]
    eos = cfg.eos_token_id
    finished = torch.zeros(batch, dtype=torch.bool, device="cuda")
    generated = []
    past = None
    input_ids = ids
    position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
    for i in range(steps + 1):
        t0 = time.perf_counter()
        with annotate(f"{name_prefix}_{i}"):
            with annotate("prefill" if i == 0 else "decode"):
                out = model(input_ids=input_ids, attention_mask=mask, position_ids=position_ids,
                            past_key_values=past, use_cache=True)
                past = out.past_key_values
            with annotate("sample"):
                next_tok = out.logits[:, -1, :].argmax(dim=-1)
                # Stopping check: one host sync per step.
                finished |= next_tok == eos
                done = bool(finished.all().item())
                # The scheduler works on host-side tokens: copy them down, build the next input on the
                # host, and send it back up (a small pinned HtoD copy).
                tok_host = next_tok.to("cpu")
                generated.append(tok_host)
                input_ids = tok_host.view(batch, 1).pin_memory().to("cuda", non_blocking=True)
                mask = torch.cat([mask, mask.new_ones((batch, 1))], dim=-1)
                position_ids = position_ids[:, -1:] + 1
        if timings is not None:
            timings.append(time.perf_counter() - t0)
        if done:
            break
    return torch.stack(generated, dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["none", "nsys", "torch"], default="none")
    p.add_argument("--trace", default="llama_decode.pytorch.json.gz", help="torch mode: gzipped Chrome trace")
    p.add_argument("--steps", type=int, default=32, help="decode steps after the prefill")
    p.add_argument("--warmup-steps", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--prompt-lengths", default="17,33,48,64,80,96,112,128")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--intermediate", type=int, default=2816)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--allow-cudnn-sdpa", action="store_true",
                   help="leave PyTorch's cuDNN attention backend on. With the padding mask PyTorch 2.11 then "
                        "picks cuDNN SDPA, which builds (NVRTC-compiles) a new cuDNN graph for every new KV "
                        "length: ~50 ms of host time in every decode step (seen on an H100)")
    args = p.parse_args()

    if not torch.cuda.is_available():
        sys.exit("make_samples.py needs a CUDA GPU")
    if not args.allow_cudnn_sdpa:
        torch.backends.cuda.enable_cudnn_sdp(False)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"GPU {torch.cuda.get_device_name(0)}, mode {args.mode}")
    cfg, model = build_model(args)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"model: {args.layers} layers, hidden {args.hidden}, heads {args.heads}/{args.kv_heads}, "
          f"intermediate {args.intermediate}, vocab {args.vocab}, {nparams / 1e6:.1f}M params, bf16, "
          f"attention {getattr(model.config, '_attn_implementation', '?')}"
          f"{'' if args.allow_cudnn_sdpa else ' (cuDNN SDPA backend off)'}")
    lengths, ids, mask = make_batch(args, cfg)
    print(f"batch {args.batch}, prompt lengths {lengths} (left-padded to {ids.shape[1]}), "
          f"{args.steps} decode steps")

    # Warm-up (cuBLAS handles, allocator, kernel selection), outside the iteration ranges.
    with annotate("warmup"):
        generate(model, cfg, ids, mask, args.warmup_steps, name_prefix="warmup_iter")
    torch.cuda.synchronize()

    timings = []
    if args.mode == "torch":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=False) as prof:
            tokens = generate(model, cfg, ids, mask, args.steps, timings=timings)
            torch.cuda.synchronize()
        raw = args.trace[:-3] if args.trace.endswith(".gz") else args.trace + ".json"
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as src, gzip.open(args.trace, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(raw)
        print(f"wrote {args.trace} ({os.path.getsize(args.trace)} bytes)")
    else:
        tokens = generate(model, cfg, ids, mask, args.steps, timings=timings)
        torch.cuda.synchronize()

    decode = timings[1:]
    print(f"generated tokens: {tuple(tokens.shape)}, first row head {tokens[0, :8].tolist()}")
    print(f"prefill (iteration_0): {timings[0] * 1e3:.2f} ms")
    if decode:
        print(f"decode iterations: {len(decode)}, min {min(decode) * 1e3:.2f} ms, "
              f"max {max(decode) * 1e3:.2f} ms")
        print(f"median ITL: {statistics.median(decode) * 1e3:.2f} ms (mode {args.mode})")


if __name__ == "__main__":
    main()
