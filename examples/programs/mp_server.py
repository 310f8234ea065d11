#!/usr/bin/env python3
"""A server shaped like vLLM V1, in several processes, with nothing written for a profiler:

  front (this process)  tokenizes each request (CPU work), sends it to the engine core, and
                        collects the finished requests from the detokenizer;
  engine core           schedules (continuous batching) and runs one decode step per iteration:
                        one CUDA graph replay and a synchronisation (--workers 0), or, with
                        --workers N, sends each step to N worker processes that each replay their
                        own graph (tensor-parallel shaped, on the one GPU lent) and waits for all;
  detokenizer           turns each step's tokens into text (CPU work) and tells the front when a
                        request is complete.

The processes start with multiprocessing's "spawn", as vLLM's do. The truth a profile should
find is printed as one JSON line on stdout: the pid and role of every process, the requests, the
engine's steps, the tokens.

  python3 mp_server.py --requests 64 --tokens 32 --workers 0
  python3 mp_server.py --requests 64 --tokens 32 --workers 2
  python3 mp_server.py --nvtx ...   # the front marks "tokenize" and the detokenizer "detokenize"
                                    # with NVTX ranges (processes that never touch CUDA)
"""
import argparse
import json
import multiprocessing as mp
import os
import random
import time


class Marks:
    """NVTX ranges where --nvtx asks for them (torch.cuda.nvtx: NVTX, no CUDA initialised)."""

    def __init__(self, on):
        self.nvtx = None
        if on:
            import torch.cuda.nvtx as nvtx
            self.nvtx = nvtx

    def push(self, name):
        if self.nvtx:
            self.nvtx.range_push(name)

    def pop(self):
        if self.nvtx:
            self.nvtx.range_pop()


def busy(seconds):
    """CPU work of a known length (tokenizing, detokenizing), in Python as real servers do it."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def make_graph(hidden, layers, batch):
    import torch
    torch.manual_seed(os.getpid() % 1000)
    ws = [torch.randn(hidden, hidden, device="cuda", dtype=torch.bfloat16) * 0.02
          for _ in range(layers)]
    x = torch.randn(batch, hidden, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm-up outside the graph, as graph capture requires
            y = x
            for w in ws:
                y = torch.nn.functional.silu(y @ w)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = x
        for w in ws:
            y = torch.nn.functional.silu(y @ w)
    torch.cuda.synchronize()
    return graph


def worker_main(rank, conn, hidden, layers, batch):
    import torch
    graph = make_graph(hidden, layers, batch)
    steps = 0
    conn.send(("ready", os.getpid()))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        graph.replay()
        torch.cuda.synchronize()
        steps += 1
        conn.send(steps)
    conn.send(("done", os.getpid(), steps))


def engine_main(args, requests_q, tokens_q, result_q):
    rng = random.Random(1)
    workers, conns = [], []
    graph = None
    if args.workers == 0:
        import torch
        graph = make_graph(args.hidden, args.layers, args.max_batch)
    else:
        ctx = mp.get_context("spawn")
        for r in range(args.workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=worker_main, name=f"worker{r}",
                            args=(r, child, args.hidden // args.workers, args.layers, args.max_batch))
            p.start()
            workers.append(p)
            conns.append(parent)
        worker_pids = [c.recv()[1] for c in conns]
    active = {}  # request id -> tokens still to make
    waiting = []
    steps = 0
    finished = 0
    while finished < args.requests:
        # Take what arrived; block only when there is nothing to run.
        while True:
            try:
                item = requests_q.get(block=not active and not waiting, timeout=None)
            except Exception:
                break
            waiting.append(item)
            if requests_q.empty():
                break
        while waiting and len(active) < args.max_batch:
            rid = waiting.pop(0)
            active[rid] = args.tokens
        busy(args.schedule_ms / 1000.0)  # the scheduler's own Python work per step
        if graph is not None:
            graph.replay()
            torch.cuda.synchronize()
        else:
            for c in conns:
                c.send(steps)
            for c in conns:
                c.recv()
        steps += 1
        out = []
        for rid in list(active):
            active[rid] -= 1
            out.append((rid, rng.randrange(32000), active[rid] == 0))
            if active[rid] == 0:
                del active[rid]
                finished += 1
        tokens_q.put(out)
    tokens_q.put(None)
    worker_steps = []
    for c in conns:
        c.send(None)
        worker_steps.append(c.recv()[2])
    for p in workers:
        p.join()
    result_q.put({"role": "engine_core", "pid": os.getpid(), "steps": steps,
                  "workers": [{"role": f"worker{i}", "pid": workers[i].pid, "steps": s}
                              for i, s in enumerate(worker_steps)]})


def detokenizer_main(args, tokens_q, done_q):
    marks = Marks(args.nvtx)
    tokens = 0
    while True:
        batch = tokens_q.get()
        if batch is None:
            break
        for rid, tok, last in batch:
            marks.push("detokenize")
            busy(args.detok_us / 1e6)
            marks.pop()
            tokens += 1
            if last:
                done_q.put(rid)
    done_q.put(("detokenizer", os.getpid(), tokens))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=32, help="output tokens per request")
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--tokenize-ms", type=float, default=2.0)
    ap.add_argument("--schedule-ms", type=float, default=0.5)
    ap.add_argument("--detok-us", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=200.0, help="arrivals per second")
    ap.add_argument("--nvtx", action="store_true",
                    help="NVTX ranges in the front (tokenize) and the detokenizer (detokenize)")
    args = ap.parse_args()
    marks = Marks(args.nvtx)

    ctx = mp.get_context("spawn")
    requests_q, tokens_q, done_q, result_q = ctx.Queue(), ctx.Queue(), ctx.Queue(), ctx.Queue()
    engine = ctx.Process(target=engine_main, name="engine_core",
                         args=(args, requests_q, tokens_q, result_q))
    detok = ctx.Process(target=detokenizer_main, name="detokenizer", args=(args, tokens_q, done_q))
    engine.start()
    detok.start()
    rng = random.Random(0)
    t0 = time.perf_counter()
    for rid in range(args.requests):
        marks.push("tokenize")
        busy(args.tokenize_ms / 1000.0)  # tokenizing the prompt
        marks.pop()
        requests_q.put(rid)
        time.sleep(rng.expovariate(args.rate))
    done = 0
    detok_info = None
    while detok_info is None:
        item = done_q.get()
        if isinstance(item, tuple):
            detok_info = item
        else:
            done += 1
    wall = time.perf_counter() - t0
    engine_info = result_q.get()
    engine.join()
    detok.join()
    print(json.dumps({
        "program": "mp_server", "requests": args.requests, "completed": done,
        "tokens": detok_info[2], "wall_s": round(wall, 3),
        "processes": [{"role": "front", "pid": os.getpid()},
                      {"role": "engine_core", "pid": engine_info["pid"], "steps": engine_info["steps"],
                       "cuda": args.workers == 0},
                      {"role": "detokenizer", "pid": detok_info[1]}] +
                     [dict(w, cuda=True) for w in engine_info["workers"]],
    }), flush=True)


if __name__ == "__main__":
    main()
