#!/usr/bin/env python3
"""A serving-shaped PyTorch loop with continuous batching, instrumented with the sightline Python
package: requests arrive (Poisson, seeded), are scheduled (prefill: one pass over the prompt), decode
one token per iteration until their output length, and stream tokens out; every iteration is an
`iteration N` range with a log line, every request event goes to SIGHTLINE_REQUEST_LOG, and garbage
collections are marked "Python GC" (SIGHTLINE_GC_MARKERS=1).

Planted causes of a latency tail, so the analysis has something to find:
  - prefills run in the same iterations as decodes (no chunking): the decode gaps of those iterations
    are longer (prefill interference);
  - every --gc-every iterations the loop builds cyclic garbage and collects it (GC pauses).

  SIGHTLINE_REQUEST_LOG=rq.jsonl SIGHTLINE_ITERATION_LOG=it.jsonl SIGHTLINE_GC_MARKERS=1 \\
    sightline record -o run.slrec -- python3 examples/serving_loop/serving_loop.py
  sightline analyze run.slrec --iteration-log it.jsonl --requests rq.jsonl
"""
import argparse
import gc
import random
import time

import torch

import sightline


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--rate", type=float, default=40.0, help="arrivals per second")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--gc-every", type=int, default=50, help="0: no planted GC pauses")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    gc.disable()  # collections happen where the loop plants them (as a runtime with gc.freeze would)
    rng = random.Random(args.seed)
    dev = torch.device("cuda")
    torch.manual_seed(args.seed)
    weights = [torch.randn(args.hidden, args.hidden, device=dev, dtype=torch.bfloat16) * 0.02
               for _ in range(args.layers)]

    # The workload: arrival times, prompt and output lengths.
    t = 0.0
    pending = []
    for i in range(args.requests):
        t += rng.expovariate(args.rate)
        pending.append({"id": f"req-{i}", "arrive": t, "prompt": rng.choice([256, 512, 1024, 2048]),
                        "out": rng.randint(16, 64)})
    waiting, active, done = [], [], 0

    def forward(tokens):
        x = torch.randn(tokens, args.hidden, device=dev, dtype=torch.bfloat16)
        for w in weights:
            x = torch.nn.functional.gelu(x @ w)
        return x

    forward(64)  # warm-up (cuBLAS handles, kernels) before the clock starts
    torch.cuda.synchronize()
    start = time.monotonic()
    iteration = 0
    while done < args.requests:
        now = time.monotonic() - start
        while pending and pending[0]["arrive"] <= now:
            r = pending.pop(0)
            sightline.request_event(r["id"], sightline.ARRIVED, r["prompt"])
            waiting.append(r)
        if not waiting and not active:
            time.sleep(max(0.0, pending[0]["arrive"] - now))
            continue
        with sightline.iteration(iteration):
            # Schedule: new requests run their prefill in this iteration, beside the decodes.
            new = []
            while waiting and len(active) + len(new) < args.max_batch:
                r = waiting.pop(0)
                sightline.request_event(r["id"], sightline.SCHEDULED)
                new.append(r)
            ctx_tokens = sum(r["prompt"] for r in new)
            with sightline.range("prefill"):
                if ctx_tokens:
                    forward(ctx_tokens)
            with sightline.range("decode"):
                if active:
                    forward(len(active))
            torch.cuda.synchronize()  # sampling needs the logits on the host
            for r in new:
                r["left"] = r["out"] - 1
                sightline.request_event(r["id"], sightline.TOKENS, 1)  # the prefill's first token
            for r in active:
                r["left"] -= 1
                sightline.request_event(r["id"], sightline.TOKENS, 1)
            active.extend(new)
            for r in [r for r in active if r["left"] <= 0]:
                sightline.request_event(r["id"], sightline.FINISHED)
                active.remove(r)
                done += 1
            sightline.log_field("active_requests", len(active))
            sightline.log_field("context_requests", len(new))
            sightline.log_field("context_tokens", ctx_tokens)
            sightline.log_field("generation_requests", len(active) - len(new))
            if args.gc_every and iteration % args.gc_every == args.gc_every - 1:
                junk = []
                for _ in range(200000):
                    a, b = [], []
                    a.append(b)
                    b.append(a)
                    junk.append(a)
                del junk
                gc.collect()
        iteration += 1
    sightline.flush()
    print(f"serving_loop: {args.requests} requests in {iteration} iterations, "
          f"{time.monotonic() - start:.2f} s")


if __name__ == "__main__":
    main()
