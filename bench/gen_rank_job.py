#!/usr/bin/env python3
"""Generates the PyTorch-profiler traces of every rank of one job, for `sightline analyze DIR`.

Each rank is a gen_kineto_json.py trace with the job's kernel sequence (same seed: every rank runs
the same collectives in the same order, as SPMD inference does), its distributedInfo rank, a clock
offset per host (--ranks-per-host ranks share one), a small random lateness at each collective,
PyTorch's record_param_comms records (process group, sequence number) and one straggler that
arrives late at every collective while the others wait inside it. Files: DIR/rank00000.json ...,
or with --names tensorboard as torch.profiler.tensorboard_trace_handler names them by default,
DIR/host{H}_{pid}.{time}.pt.trace.json (the host in the name: sightline aligns clocks per host).
Standard library only; --jobs processes write ranks in parallel.

  python3 bench/gen_rank_job.py --ranks 1024 --kernels 2000 -o /tmp/job1024
"""

import argparse
import io
import multiprocessing
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_kineto_json  # noqa: E402


def write_rank(job):
    a, rank = job
    host = rank // a.ranks_per_host
    pid = 4000 + rank % a.ranks_per_host
    if a.names == "tensorboard":
        name = "host%d_%d.%d.pt.trace.json" % (host, pid, 1_700_000_000_000 + rank)
    else:
        name = "rank%05d.json" % rank
    path = os.path.join(a.output, name)
    argv = ["--kernels", str(a.kernels), "--kernels-per-step", str(a.kernels_per_step),
            "--rank", str(rank), "--world-size", str(a.ranks), "--devices", str(a.ranks_per_host),
            "--pid", str(pid), "--seed", str(a.seed),
            # Hosts' clocks differ by milliseconds; ranks of one host share a clock.
            "--clock-offset-ns", str(host * 1_712_345),
            "--straggler", str(a.straggler), "--straggle-ns", str(a.straggle_ns),
            "--collective-jitter-ns", str(a.jitter_ns), "--comm-records", "-o", path]
    args = gen_kineto_json.parser().parse_args(argv)
    with open(path + ".tmp", "w", encoding="utf-8", buffering=1 << 20) as out:
        gen_kineto_json.generate(args, out)
    os.replace(path + ".tmp", path)
    return os.path.getsize(path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=16)
    p.add_argument("--ranks-per-host", type=int, default=8)
    p.add_argument("--kernels", type=int, default=2000, help="kernels per rank (default 2000)")
    p.add_argument("--kernels-per-step", type=int, default=500)
    p.add_argument("--straggler", type=int, default=3, help="the late rank (-1: none)")
    p.add_argument("--straggle-ns", type=int, default=40_000)
    p.add_argument("--jitter-ns", type=int, default=2_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--names", choices=("rank", "tensorboard"), default="rank",
                   help="file names: rankNNNNN.json, or tensorboard_trace_handler's "
                        "{hostname}_{pid}.{time}.pt.trace.json")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("-o", "--output", required=True, help="directory to write (created)")
    a = p.parse_args()
    if a.ranks < 1 or a.ranks_per_host < 1 or a.kernels < 0:
        p.error("--ranks and --ranks-per-host must be >= 1, --kernels >= 0")
    os.makedirs(a.output, exist_ok=True)
    jobs = [(a, r) for r in range(a.ranks)]
    with multiprocessing.Pool(max(1, a.jobs)) as pool:
        total = sum(pool.imap_unordered(write_rank, jobs, chunksize=4))
    print("%d ranks, %.1f MB in %s" % (a.ranks, total / 1e6, a.output), file=sys.stderr)


if __name__ == "__main__":
    main()
