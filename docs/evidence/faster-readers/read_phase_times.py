#!/usr/bin/env python3
"""Alternates two sightline binaries on one trace under strace (clone3/exit_group only) and prints,
per run and as medians, the import (exec to the analysis thread's start: the last clone3) and the
analyses (that clone to exit_group) in wall seconds.
  phase_times.py BEFORE AFTER TRACE RUNS"""
import os, statistics, subprocess, sys, tempfile
before, after, trace, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
LOG = os.path.join(tempfile.mkdtemp(), 'strace.txt')
def one(binary):
    subprocess.run(['strace', '-f', '--seccomp-bpf', '-e', 'trace=clone3,execve,exit_group', '-ttt',
                    '-o', LOG, binary, 'analyze', trace, '-j', '2', '-o', '/dev/null'], check=True)
    t0 = None; clones = []; end = None
    for line in open(LOG):
        f = line.split()
        t = float(f[1])
        if t0 is None: t0 = t
        if 'clone3(' in line: clones.append(t)
        if 'exit_group(' in line: end = t
    return clones[-1] - t0, end - clones[-1], end - t0
res = {before: [], after: []}
for i in range(runs):
    for b in (before, after):
        r = one(b); res[b].append(r)
        print(f'{"before" if b == before else "after ":6s} run {i + 1}: import {r[0]:.2f} s, analyses {r[1]:.2f} s, total {r[2]:.2f} s', flush=True)
for name, b in (('before', before), ('after', after)):
    v = res[b]
    print(f'{name} medians: import {statistics.median(x[0] for x in v):.2f} s, analyses {statistics.median(x[1] for x in v):.2f} s, total {statistics.median(x[2] for x in v):.2f} s')
