#!/usr/bin/env python3
"""Decode steps of Hugging Face transformers models (random weights, built from a config) at batch
sizes 1..256 and two context lengths (and the prefill that fills each cache), timed with CUDA events, beside the floor the program itself
computes: the bytes a step must move (weights it reads, measured from the model's parameters, and the
KV cache, measured from the cache's tensors) over the machine's measured copy bandwidth, and the FLOPs
over a large bf16 GEMM's measured throughput. The truth for `sightline analyze --model-config`
(docs/analyses/floor.md): as the batch grows the measured time should follow the floor,
memory-bound at small batch, compute-bound at large.

  python3 floor_sweep.py --out DIR                 # both models, the whole sweep, a table at the end
  python3 floor_sweep.py --out DIR --only dense --batches 16 --contexts 1024 --steps 30 --nvtx
                                                   # one configuration, each step in an NVTX range
                                                   # "iteration N" (for `sightline record`)
  python3 floor_sweep.py --out DIR --only dense --batches 16 --contexts 1024 --steps 30 --nvtx \
      --layer-ranges --snapshot DIR/snap.pickle    # and a range per decoder layer ("layer_N") and
                                                   # one around the lm_head ("lm_head"); a memory
                                                   # snapshot of the run (--weights-snapshot)
  python3 floor_sweep.py --out DIR --only dense --batches 16 --contexts 1024 --steps 5 \
      --torch-profile DIR/kineto.json              # and a few decode steps of the first
                                                   # configuration under the PyTorch profiler with
                                                   # record_shapes (the floor from GEMM shapes)

Models: "dense", Llama-3.2-1B's shape (16 layers, hidden 2048, GQA 32/8, MLP 8192, vocabulary
128256, tied embeddings); "moe", Qwen3-30B-A3B's shape reduced to --moe-layers layers (hidden 2048,
GQA 32/4 with head dim 128, 128 experts of 768, top-8, vocabulary 151936). Each model's config.json is
written to DIR/<model>/config.json (what `--model-config` reads). Decode runs eagerly on
transformers' DynamicCache; after each timed step the cache is cropped back to the context, so
every step sees the same context (a transformers without DynamicCache.crop lets it grow by one
token a step; the table's context is then the first step's). DynamicCache appends with torch.cat, which copies the whole cache
every step: time the floor does not count (the report's non-GEMM kernels).

Output: DIR/peaks.json (measured copy bandwidth and GEMM throughput), DIR/sweep.jsonl (one line per
configuration) and the table on stdout. With --layer-ranges, DIR/layers.json: each decoder layer's
parameter bytes and KV-cache bytes read (the first configuration's), the lm_head's, from the
program's tensors: the truth for the per-layer floor (docs/analyses/floor.md, "Per layer").
With --torch-profile FILE, FILE (a Kineto trace of --profile-steps decode steps, each a
ProfilerStep#N, recorded with record_shapes=True) and FILE.truth.json: the configuration, its
parameter bytes and the decode step's FLOPs as this program counts them (floor_shapes_check.py
compares the floor from the trace's GEMM shapes with them; docs/analyses/floor.md, "Without a
config").
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch


def measure_peaks(dev):
    """Device-to-device copy bandwidth (bytes read + written per second) and a bf16 GEMM's FLOP/s."""
    n = 1 << 30  # 1 GiB each way
    src = torch.empty(n, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    copy_gbps = 2 * n / statistics.median(times) / 1e9
    del src, dst
    m = 8192
    x = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    y = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    for _ in range(3):
        torch.matmul(x, y)
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.matmul(x, y)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    gemm_tflops = 2 * m ** 3 / statistics.median(times) / 1e12
    del x, y
    torch.cuda.empty_cache()
    return copy_gbps, gemm_tflops


def build(kind, moe_layers):
    from transformers import AutoModelForCausalLM
    if kind == "dense":
        from transformers import LlamaConfig
        cfg = LlamaConfig(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                          num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                          vocab_size=128256, max_position_embeddings=8192, tie_word_embeddings=True,
                          rope_theta=500000.0)
    else:
        from transformers import Qwen3MoeConfig
        cfg = Qwen3MoeConfig(hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
                             num_hidden_layers=moe_layers, num_attention_heads=32,
                             num_key_value_heads=4, head_dim=128, num_experts=128,
                             num_experts_per_tok=8, vocab_size=151936, max_position_embeddings=8192,
                             tie_word_embeddings=False, decoder_sparse_step=1, mlp_only_layers=[])
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg).to(torch.bfloat16).eval()
    return cfg, model


def write_config(cfg, path):
    d = cfg.to_dict()
    d["dtype"] = "bfloat16"  # what the weights are held in (from_config leaves float32 stated)
    d.pop("torch_dtype", None)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(d, f, indent=2, default=str)


def program_truth(cfg, model, kind, batch, cache):
    """Bytes and FLOPs of one decode step, from the program's own tensors."""
    params = {n: p.numel() * p.element_size() for n, p in model.named_parameters()}
    total = sum(params.values())
    tied = getattr(cfg, "tie_word_embeddings", False)
    weight_bytes = total
    expert_bytes = 0
    if kind == "moe":
        # Routed experts' weights: only the experts the batch's tokens reach are read. Uniform routing
        # (the floor's assumption): E (1 - (1 - k/E)^B) of E per layer.
        expert_bytes = sum(v for n, v in params.items() if ".experts." in n)
        e, k = cfg.num_experts, cfg.num_experts_per_tok
        touched = e * (1 - (1 - k / e) ** batch)
        weight_bytes = total - expert_bytes + expert_bytes * touched / e
    if not tied:
        # The input embedding is gathered (B rows), not read whole.
        emb = model.get_input_embeddings().weight
        weight_bytes -= emb.numel() * emb.element_size()
        weight_bytes += batch * emb.shape[1] * emb.element_size()
    kv_bytes = 0
    for layer in kv_layers(cache):
        kv_bytes += layer[0].numel() * layer[0].element_size() + layer[1].numel() * layer[1].element_size()
    return dict(param_bytes=total, expert_bytes=expert_bytes, weight_bytes=weight_bytes,
                kv_read_bytes=kv_bytes)


def add_layer_ranges(model):
    """NVTX ranges around each decoder layer ("layer_N") and the lm_head ("lm_head") of a forward."""
    def push(name):
        def hook(module, args):  # returns None: a pre-hook's value would replace the arguments
            torch.cuda.nvtx.range_push(name)
        return hook

    def pop(module, args, output):
        torch.cuda.nvtx.range_pop()

    for i, layer in enumerate(model.model.layers):
        layer.register_forward_pre_hook(push(f"layer_{i}"))
        layer.register_forward_hook(pop)
    model.lm_head.register_forward_pre_hook(push("lm_head"))
    model.lm_head.register_forward_hook(pop)


def layer_truth(cfg, model, kind, batch, context, cache):
    """Per decoder layer: its parameter bytes (MoE: the routed experts' share the batch reaches
    under uniform routing, as the floor assumes) and its KV-cache bytes; the lm_head's bytes."""
    layers = []
    caches = kv_layers(cache)
    for i, layer in enumerate(model.model.layers):
        params = {n: p.numel() * p.element_size() for n, p in layer.named_parameters()}
        total = sum(params.values())
        read = total
        if kind == "moe":
            experts = sum(v for n, v in params.items() if ".experts." in n or n.startswith("mlp.experts"))
            e, k = cfg.num_experts, cfg.num_experts_per_tok
            read = total - experts + experts * e * (1 - (1 - k / e) ** batch) / e
        k_, v_ = caches[i]
        kv = k_.numel() * k_.element_size() + v_.numel() * v_.element_size()
        layers.append(dict(layer=i, param_bytes=total, weight_bytes=read, kv_read_bytes=kv,
                           kv_write_bytes=kv / max(context, 1)))
    head = model.lm_head.weight
    return dict(model=kind, batch=batch, context=context, layers=layers,
                lm_head_bytes=head.numel() * head.element_size())


def kv_layers(cache):
    """(keys, values) of each layer of a DynamicCache, in transformers 4.x and 5.x."""
    if hasattr(cache, "layers"):
        return [(l.keys, l.values) for l in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache))


def linear_per_token(cfg, kind):
    """Linear weights one token multiplies by in the layers (k routed experts of a MoE layer)."""
    h = cfg.hidden_size
    nh, nkv, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    attn = h * nh * hd * 2 + 2 * h * nkv * hd
    if kind == "dense":
        mlp = 3 * h * cfg.intermediate_size
    else:
        mlp = cfg.num_experts_per_tok * 3 * h * cfg.moe_intermediate_size + h * cfg.num_experts
    return cfg.num_hidden_layers * (attn + mlp)


def step_flops(cfg, kind, batch, context):
    """GEMM and attention FLOPs of one decode step (2 per multiply-add), from the config: each
    sequence's token sees its context and itself."""
    L, nh, hd = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.head_dim
    gemm = 2 * batch * (linear_per_token(cfg, kind) + cfg.vocab_size * cfg.hidden_size)
    return gemm + 2 * nh * (hd + hd) * batch * (context + 1) * L


def prefill_flops(cfg, kind, batch, context):
    """GEMM and causal attention FLOPs of a prefill of `batch` prompts of `context` tokens, logits
    of the last token of each."""
    L, nh, hd = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.head_dim
    gemm = 2 * batch * context * linear_per_token(cfg, kind) + 2 * batch * cfg.vocab_size * cfg.hidden_size
    return gemm + 2 * nh * (hd + hd) * batch * context * (context + 1) / 2 * L


def timed(fn):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    r = fn()
    b.record()
    b.synchronize()
    return r, a.elapsed_time(b) * 1e6  # ns


def torch_profile(cfg, model, kind, batch, context, cache, nxt, steps, path):
    """`steps` decode steps under the PyTorch profiler (CPU and CUDA, record_shapes=True), each a
    ProfilerStep#N, exported as a Chrome trace to `path`; the program's own counts beside it."""
    from torch.profiler import ProfilerActivity, profile, schedule
    truth = program_truth(cfg, model, kind, batch, cache)
    # A schedule, so that each step is a ProfilerStep#N range (the steps Sightline finds); one step
    # of the profiler's warm-up first, not recorded.
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(steps + 1):
            model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
            torch.cuda.synchronize()
            if hasattr(cache, "crop"):
                cache.crop(context)
            prof.step()
    # The decode step's weights: every parameter once (tied embeddings: the table is the lm_head's
    # weight), the norms included; its FLOPs as step_flops counts them.
    with open(path + ".truth.json", "w") as f:
        json.dump(dict(model=kind, batch=batch, context=context, steps=steps,
                       param_bytes=truth["param_bytes"], weight_bytes=truth["weight_bytes"],
                       kv_read_bytes=truth["kv_read_bytes"],
                       flops=step_flops(cfg, kind, batch, context)), f, indent=1)
    print(f"torch profile {path}: {steps} decode steps, batch {batch}, context {context}",
          flush=True)


def run_config(kind, cfg, model, batch, context, steps, warmup, nvtx, peaks, layers_out=None,
               profile_out=None, profile_steps=5):
    dev = "cuda"
    ids = torch.randint(0, cfg.vocab_size, (batch, context), device=dev)
    with torch.inference_mode():
        # The prefill twice (the first warms cuBLAS and the allocator), the second timed: its cache
        # is the decode steps'.
        timed(lambda: model(input_ids=ids, use_cache=True, logits_to_keep=1))
        out, prefill_ns = timed(lambda: model(input_ids=ids, use_cache=True, logits_to_keep=1))
        cache = out.past_key_values
        del out
        nxt = torch.randint(0, cfg.vocab_size, (batch, 1), device=dev)
        truth = program_truth(cfg, model, kind, batch, cache)
        if layers_out is not None and not os.path.exists(layers_out):
            with open(layers_out, "w") as f:
                json.dump(layer_truth(cfg, model, kind, batch, context, cache), f, indent=1)
        times = []
        for i in range(warmup + steps):
            if nvtx:
                torch.cuda.nvtx.range_push(f"iteration {i}")
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
            b.record()
            b.synchronize()
            if nvtx:
                torch.cuda.nvtx.range_pop()
            if hasattr(cache, "crop"):
                cache.crop(context)
            if i >= warmup:
                times.append(a.elapsed_time(b) * 1e6)  # ns
        if profile_out is not None and not os.path.exists(profile_out):
            torch_profile(cfg, model, kind, batch, context, cache, nxt, profile_steps, profile_out)
    del cache
    torch.cuda.empty_cache()
    kv_write = truth["kv_read_bytes"] / max(context, 1)
    bytes_ = truth["weight_bytes"] + truth["kv_read_bytes"] + kv_write
    flops = step_flops(cfg, kind, batch, context)
    copy_gbps, gemm_tflops = peaks
    mem_ns = bytes_ / copy_gbps
    cmp_ns = flops / (gemm_tflops * 1e3)
    floor_ns = max(mem_ns, cmp_ns)
    med = statistics.median(times)
    decode = dict(model=kind, step="decode", batch=batch, context=context, steps=len(times),
                  median_ns=med, min_ns=min(times), weight_bytes=truth["weight_bytes"],
                  param_bytes=truth["param_bytes"], kv_read_bytes=truth["kv_read_bytes"],
                  kv_write_bytes=kv_write, flops=flops, memory_floor_ns=mem_ns,
                  compute_floor_ns=cmp_ns, floor_ns=floor_ns,
                  bound="compute" if cmp_ns >= mem_ns else "memory", ratio=med / floor_ns)
    # The prefill: every weight once (every expert is reached past a few tokens; an untied
    # embedding counted whole, a little high), the cache written.
    p_weights = truth["param_bytes"]
    p_bytes = p_weights + truth["kv_read_bytes"]
    p_flops = prefill_flops(cfg, kind, batch, context)
    p_mem, p_cmp = p_bytes / copy_gbps, p_flops / (gemm_tflops * 1e3)
    prefill = dict(model=kind, step="prefill", batch=batch, context=context, steps=1,
                   median_ns=prefill_ns, min_ns=prefill_ns, weight_bytes=p_weights,
                   param_bytes=truth["param_bytes"], kv_read_bytes=0,
                   kv_write_bytes=truth["kv_read_bytes"], flops=p_flops, memory_floor_ns=p_mem,
                   compute_floor_ns=p_cmp, floor_ns=max(p_mem, p_cmp),
                   bound="compute" if p_cmp >= p_mem else "memory",
                   ratio=prefill_ns / max(p_mem, p_cmp))
    return [decode, prefill]



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=["dense", "moe"], default=None)
    ap.add_argument("--batches", default="1,4,16,64,256")
    ap.add_argument("--contexts", default="128,1024")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--moe-layers", type=int, default=8)
    ap.add_argument("--nvtx", action="store_true", help="each step in an NVTX range \"iteration N\"")
    ap.add_argument("--layer-ranges", action="store_true",
                    help="an NVTX range per decoder layer (layer_N) and around the lm_head")
    ap.add_argument("--torch-profile", default=None, metavar="FILE",
                    help="profile --profile-steps decode steps of the first configuration with "
                         "the PyTorch profiler (record_shapes=True) into FILE, a Chrome trace, "
                         "and the program's counts into FILE.truth.json")
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--snapshot", default=None,
                    help="record the allocator's history from the start and dump a memory "
                         "snapshot here at the end (for `analyze --weights-snapshot`)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.snapshot:
        torch.cuda.memory._record_memory_history(max_entries=100000)
    t0 = time.time()
    import transformers
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{torch.cuda.get_device_name(0)}", flush=True)
    peaks = measure_peaks("cuda")
    with open(os.path.join(args.out, "peaks.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "copy_gbps": peaks[0],
                   "gemm_bf16_tflops": peaks[1]}, f)
    print(f"measured: copy {peaks[0]:.0f} GB/s (read + write), bf16 GEMM 8192^3 {peaks[1]:.0f} "
          f"TFLOP/s", flush=True)
    batches = [int(x) for x in args.batches.split(",")]
    contexts = [int(x) for x in args.contexts.split(",")]
    rows = []
    sweep = open(os.path.join(args.out, "sweep.jsonl"), "w")
    for kind in ([args.only] if args.only else ["dense", "moe"]):
        cfg, model = build(kind, args.moe_layers)
        if args.layer_ranges:
            add_layer_ranges(model)
        write_config(cfg, os.path.join(args.out, kind, "config.json"))
        print(f"{kind}: {sum(p.numel() for p in model.parameters()) / 1e9:.3f}e9 parameters, "
              f"config {os.path.join(args.out, kind, 'config.json')}", flush=True)
        for context in contexts:
            for batch in batches:
                try:
                    got = run_config(kind, cfg, model, batch, context, args.steps, args.warmup,
                                     args.nvtx, peaks,
                                     os.path.join(args.out, "layers.json") if args.layer_ranges
                                     else None, args.torch_profile, args.profile_steps)
                except Exception as e:  # out of memory, or an API this transformers lacks
                    got = [dict(model=kind, step="decode", batch=batch, context=context,
                                error=f"{type(e).__name__}: {e}")]
                for r in got:
                    rows.append(r)
                    sweep.write(json.dumps(r) + "\n")
                    if "error" in r:
                        print(f"{kind} batch {batch} context {context}: {r['error'][:200]}",
                              flush=True)
                sweep.flush()
                torch.cuda.empty_cache()  # after a failure too, once its tensors are gone
        if args.snapshot:
            # The model still alive: its weights are in the dump.
            torch.cuda.memory._dump_snapshot(args.snapshot)
            print(f"snapshot {args.snapshot}: the model's parameters "
                  f"{sum(p.numel() * p.element_size() for p in model.parameters())} B", flush=True)
            args.snapshot = None
        del model
        torch.cuda.empty_cache()
    sweep.close()
    print()
    print(f"{'model':6} {'step':7} {'batch':>5} {'ctx':>5} {'ms/step':>9} {'floor ms':>9} {'mem ms':>8} "
          f"{'cmp ms':>8} {'bound':>7} {'ratio':>6} {'weights GB':>10} {'KV GB':>7} {'TFLOP':>7}")
    for r in rows:
        if "error" in r:
            print(f"{r['model']:6} {r['step']:7} {r['batch']:>5} {r['context']:>5} error")
            continue
        print(f"{r['model']:6} {r['step']:7} {r['batch']:>5} {r['context']:>5} {r['median_ns'] / 1e6:>9.3f} "
              f"{r['floor_ns'] / 1e6:>9.3f} {r['memory_floor_ns'] / 1e6:>8.3f} "
              f"{r['compute_floor_ns'] / 1e6:>8.3f} {r['bound']:>7} {r['ratio']:>6.2f} "
              f"{r['weight_bytes'] / 1e9:>10.3f} {r['kv_read_bytes'] / 1e9:>7.3f} "
              f"{r['flops'] / 1e12:>7.3f}")
    print(f"\nfloor = max(bytes / {peaks[0]:.0f} GB/s, FLOPs / {peaks[1]:.0f} TFLOP/s), measured in "
          f"this run; {time.time() - t0:.0f} s in all")


if __name__ == "__main__":
    sys.exit(main())
