#!/usr/bin/env python3
"""A PyTorch op over libsightline_allreduce, checked against torch.distributed (NCCL) and timed.

  mpirun -n 2 python3 cuda/allreduce/examples/torch_allreduce.py --lib-dir build/cuda/allreduce

(or torchrun --nproc-per-node 2 ...). Builds torch_allreduce_op.cc with
torch.utils.cpp_extension.load against include/sightline/allreduce.h and the library in --lib-dir,
creates the communicator from the launcher's environment, and compares each call with
torch.distributed.all_reduce on the same input (small integers: sums are exact, so the results must
be equal; the fused RMSNorm within bf16 rounding). Exit code 0 when all agree, 1 when not, 2 for
bad arguments.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def launcher_env():
    for rank, size, local in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
                              ("RANK", "WORLD_SIZE", "LOCAL_RANK")):
        if rank in os.environ and size in os.environ:
            return int(os.environ[rank]), int(os.environ[size]), int(os.environ.get(local, os.environ[rank]))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib-dir", required=True, help="folder holding libsightline_allreduce.so")
    ap.add_argument("--build-dir", default="/tmp/sightline_torch_ext", help="extension build folder")
    args = ap.parse_args()
    env = launcher_env()
    if env is None:
        print("error: start with mpirun -n 2 or torchrun --nproc-per-node 2", file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(args.lib_dir, "libsightline_allreduce.so")):
        print(f"error: no libsightline_allreduce.so in {args.lib_dir}", file=sys.stderr)
        return 2
    rank, world, local = env
    torch.cuda.set_device(local)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    os.makedirs(args.build_dir, exist_ok=True)
    t0 = time.time()
    # Rank 0 builds; the others load what it built. with_cuda: the op includes PyTorch's CUDA headers
    # (c10/cuda), which include cuda_runtime.h.
    if rank != 0:
        dist.barrier()
    ext = load(name="sightline_allreduce_op", sources=[os.path.join(HERE, "torch_allreduce_op.cc")],
               extra_include_paths=[os.path.join(REPO, "include")],
               extra_ldflags=[f"-L{args.lib_dir}", "-lsightline_allreduce", f"-Wl,-rpath,{args.lib_dir}"],
               build_directory=args.build_dir, with_cuda=True, verbose=False)
    if rank == 0:
        dist.barrier()
    if rank == 0:
        print(f"extension built/loaded in {time.time() - t0:.1f} s; torch {torch.__version__}, "
              f"{torch.cuda.get_device_name()}, world {world}")
    ext.init(64 << 20)
    failures = 0
    g = torch.Generator(device="cuda").manual_seed(1234 + rank)

    def ints(shape, lo=-2, hi=3, gen=g):
        return torch.randint(lo, hi, shape, device="cuda", generator=gen).to(torch.bfloat16)

    # Plain all-reduce: every strategy (auto: the table's choice) equal to dist.all_reduce.
    for count in (4096, 1 << 18, 3 << 20, 16 << 20):
        x = ints((count // 4096, 4096))
        ref = x.clone()
        dist.all_reduce(ref)
        for strategy in ("auto", "nccl", "oneshot", "twoshot", "lamport"):
            if strategy == "lamport" and count * 2 > (1 << 20):
                continue
            y = ext.all_reduce(x, strategy)
            ok = torch.equal(y, ref)
            failures += not ok
            if rank == 0:
                print(f"  all_reduce {count * 2:>9} B  {strategy:8s} ran {ext.last_strategy():8s} "
                      f"{'equal to dist.all_reduce' if ok else 'DIFFERS'}")
    # Fused residual add + RMSNorm against the same computed by PyTorch after dist.all_reduce.
    gen0 = torch.Generator(device="cuda").manual_seed(99)  # residual and gamma: the same on all ranks
    for tokens, hidden in ((1, 4096), (128, 4096), (2048, 8192)):
        x = ints((tokens, hidden))
        residual = ints((tokens, hidden), -3, 4, gen0)
        gamma = (0.5 + 0.25 * (torch.arange(hidden, device="cuda") % 4)).to(torch.bfloat16)
        s = x.clone()
        dist.all_reduce(s)
        ref_res = (s.float() + residual.float()).to(torch.bfloat16)
        r = ref_res.float()
        ref_out = (r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + 1e-6) * gamma.float())
        for strategy in ("auto", "nccl", "oneshot", "twoshot"):
            out, res_out = ext.fused_add_rmsnorm(x, residual, gamma, 1e-6, strategy)
            ok_res = torch.equal(res_out, ref_res)
            err = ((out.float() - ref_out).abs() / ref_out.abs().clamp_min(1e-3)).max().item()
            ok = ok_res and err <= 1 / 64
            failures += not ok
            if rank == 0:
                print(f"  fused {tokens:>5}x{hidden:<5} {strategy:8s} ran {ext.last_strategy():8s} "
                      f"residual_out {'exact' if ok_res else 'DIFFERS'}, out max rel err {err:.2e}")
    # Inside a CUDA graph: the op captures like any other.
    x = ints((16, 4096))
    ref = x.clone()
    dist.all_reduce(ref)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        ext.all_reduce(x)  # warm-up outside capture
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        y = ext.all_reduce(x)
    graph.replay()
    torch.cuda.synchronize()
    ok = torch.equal(y, ref)
    failures += not ok
    if rank == 0:
        print(f"  all_reduce in torch.cuda.graph: {'equal to dist.all_reduce' if ok else 'DIFFERS'}")

    # Timing, eager, as a runtime calls it: the op against dist.all_reduce (median of 5 x 50 calls).
    def timed(fn, n=50):
        ts = []
        for _ in range(5):
            dist.barrier()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(n):
                fn()
            b.record()
            torch.cuda.synchronize()
            ts.append(a.elapsed_time(b) * 1e3 / n)
        return sorted(ts)[2]

    if rank == 0:
        print(f"\ntiming, eager, bf16, {world} x {torch.cuda.get_device_name()} (us per call, median of 5 x 50):")
        print(f"{'bytes':>10} {'op (auto)':>10} {'ran':>8} {'dist.all_reduce':>16}")
    for count in (4096, 1 << 17, 1 << 21, 32 << 20):
        x = ints((count // 4096, 4096))
        t_op = timed(lambda: ext.all_reduce(x))
        ran = ext.last_strategy()
        t_nccl = timed(lambda: dist.all_reduce(x))
        if rank == 0:
            print(f"{count * 2:>10} {t_op:>10.2f} {ran:>8} {t_nccl:>16.2f}")

    torch.cuda.synchronize()
    total = torch.tensor([failures], device="cuda")
    dist.all_reduce(total)
    ext.shutdown()
    if rank == 0:
        print(f"\ntorch example: {'PASSED' if total.item() == 0 else 'FAILED'} ({int(total.item())} failures)")
    dist.destroy_process_group()
    return 0 if total.item() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
