#!/usr/bin/env python3
"""Generates a synthetic PyTorch profiler (Kineto) Chrome-trace JSON for benchmarks and tests.

The layout follows what libkineto's ChromeTraceLogger writes (PyTorch 2.x): schemaVersion,
deviceProperties, version metadata, distributedInfo, displayTimeUnit, baseTimeNanoseconds, then
traceEvents with one event per block in Kineto's own formatting, then traceName. Timestamps are
microseconds relative to baseTimeNanoseconds with three decimals, as Kineto writes them.

Each kernel comes with what the profiler records around it in an LLM forward pass: a cpu_op
(aten::...) with a nested cpu_op, a cuda_runtime launch with its ac2g flow pair, and the kernel
itself on a CUDA stream. Each step (ProfilerStep#i) adds a user_annotation, its
gpu_user_annotation, an HtoD input copy, a memset and a DtoH copy with their cudaMemcpyAsync /
cudaMemsetAsync calls, and a cudaStreamSynchronize. --python adds python_function frames.
Standard library only.

  python3 bench/gen_kineto_json.py --kernels 100000 -o /tmp/k100k.json
  python3 bench/gen_kineto_json.py --kernels 1000000 --gzip -o /tmp/k1m.json.gz
"""

import argparse
import gzip
import io
import random
import sys

KERNELS = [
    # (name, grid, block, registers per thread, shared memory, typical duration ns)
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
     (1024, 1, 1), (128, 1, 1), 26, 0, 3000),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off"
     "_kernel__5x_cublas", (132, 1, 1), (384, 1, 1), 168, 213248, 42000),
    ("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
     "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, "
     "false, false>(Flash_fwd_params)", (16, 32, 1), (128, 1, 1), 255, 49152, 65000),
    ("void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, "
     "float, int, int)", (16, 1, 1), (1024, 1, 1), 32, 128, 4000),
    ("void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>"
     "(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)", (16, 1, 1), (1024, 1, 1),
     22, 0, 5000),
    ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, "
     "c10::BFloat16 const*, int, long, long, int, int, int)", (16, 1, 1), (512, 1, 1), 40, 0, 3500),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", (16, 1, 1),
     (512, 1, 1), 96, 0, 25000),
    ("triton_poi_fused_add_mul_0", (256, 1, 1), (128, 1, 1), 18, 0, 2500),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda("
     "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
     "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
     "std::array<char*, 2ul>)", (17888, 1, 1), (128, 1, 1), 16, 0, 18000),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
     (16, 1, 1), (1024, 1, 1), 38, 256, 7000),
]
OPS = [("aten::linear", "aten::addmm"), ("aten::add", "aten::add_"), ("aten::mul", "aten::mul_"),
       ("vllm::unified_attention", "aten::empty"), ("aten::silu", "aten::silu_"),
       ("_C::rms_norm", "aten::empty_like")]
PYTHON_FRAMES = ["vllm/model_executor/models/llama.py(311): forward",
                 "torch/nn/modules/module.py(1750): _call_impl",
                 "vllm/model_executor/layers/linear.py(546): forward"]


class Writer:
    """Writes events in libkineto's formatting; times are integer ns, printed as us.nnn."""

    def __init__(self, out):
        self.out = out
        self.first = True

    @staticmethod
    def us(ns):
        return "%d.%03d" % (ns // 1000, ns % 1000)

    def event(self, text):
        self.out.write(text if self.first else "," + text)
        self.first = False

    def complete(self, cat, name, pid, tid, ts, dur, args):
        self.event('\n  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %s, "tid": %s,\n'
                   '    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  }'
                   % (cat, name, pid, tid, self.us(ts), self.us(dur), args))

    def flow(self, ph, flow_id, pid, tid, ts):
        bp = ', "bp": "e"' if ph == "f" else ""
        self.event('\n  {\n    "ph": "%s", "id": %d, "pid": %s, "tid": %s, "ts": %s,\n'
                   '    "cat": "ac2g", "name": "ac2g"%s\n  }' % (ph, flow_id, pid, tid, self.us(ts), bp))

    def metadata(self, what, pid, tid, ts, key, value):
        self.event('\n  {\n    "name": "%s", "ph": "M", "ts": %s, "pid": %s, "tid": %s,\n'
                   '    "args": {\n      "%s": %s\n    }\n  }' % (what, self.us(ts), pid, tid, key, value))


def device_properties(n):
    props = []
    for i in range(n):
        props.append('\n    {\n      "id": %d, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85024112640,\n'
                     '      "computeMajor": 9, "computeMinor": 0,\n'
                     '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
                     '      "regsPerBlock": 65536, "warpSize": 32,\n'
                     '      "sharedMemPerBlock": 49152, "numSms": 132\n'
                     '    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, '
                     '"sharedMemPerMultiprocessor": 233472\n    }' % i)
    return ",".join(props)


def generate(args, out):
    rng = random.Random(args.seed)
    base_ns = 1767189312000000000  # Kineto rounds its base time down to 3-month intervals
    pid, tid, device, stream = args.pid, args.pid, args.rank % args.devices, 7
    out.write('\n{\n  "schemaVersion": 1,\n  "deviceProperties": [%s\n  ],' % device_properties(args.devices))
    out.write('\n  "cupti_version": 24,\n  "cuda_runtime_version": 12080,\n  "cuda_driver_version": 12080,'
              '\n  "with_stack": %d,\n  "record_shapes": 1,' % (1 if args.python else 0))
    ranks = ", ".join(str(r) for r in range(args.world_size))
    out.write('\n  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": 1, '
              '"pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", '
              '"pg_size": %d, "ranks": [%s]}], "nccl_version": "2.21.5"},'
              % (args.rank, args.world_size, args.world_size, ranks))
    out.write('\n  "trace_id": "0123456789ABCDEF0123456789ABCDEF",\n  "displayTimeUnit": "ms",'
              '\n  "baseTimeNanoseconds": %d,\n  "traceEvents": [' % base_ns)
    w = Writer(out)
    t = 1_365_627_862_757_064  # ns after the base, like a real capture
    w.metadata("process_name", pid, 0, t, "name", '"python3"')
    w.metadata("process_labels", pid, 0, t, "labels", '"CPU"')
    w.metadata("process_sort_index", pid, 0, t, "sort_index", pid)
    w.metadata("process_name", device, 0, t, "name", '"python3"')
    w.metadata("process_labels", device, 0, t, "labels", '"GPU %d"' % device)
    w.metadata("thread_name", pid, tid, t, "name", '"thread %d (python3)"' % tid)
    w.metadata("thread_name", device, stream, t, "name", '"stream %d "' % stream)

    # A rank of a job (bench/gen_rank_job.py): its own clock offset, start jitter at collectives
    # from a per-rank generator (kernel choices stay the job's, so every rank runs the same
    # collectives), and the straggler arriving late while the others wait inside the collective.
    t += args.clock_offset_ns
    jitter = random.Random(args.seed * 1_000_003 + args.rank) if args.collective_jitter_ns else None
    seq = 0
    correlation, external = 1000, 1
    gpu_t = t
    kernels_left = args.kernels
    step = 0
    while kernels_left > 0:
        step_kernels = min(args.kernels_per_step, kernels_left)
        kernels_left -= step_kernels
        step_start = t
        step_ext = external
        external += 1
        t += 5_000
        # The step's input copy, a memset and (at the end) the sampled tokens back to the host.
        copies = [("Memcpy HtoD (Pinned -> Device)", "cudaMemcpyAsync", 65536, "gpu_memcpy"),
                  ("Memset (Device)", "cudaMemsetAsync", 4096, "gpu_memset")]
        first_gpu = None
        for name, api, size, cat in copies:
            correlation += 1
            api_dur = 6_000 + rng.randrange(2_000)
            w.complete("cuda_runtime", api, pid, tid, t, api_dur,
                       '"External id": %d, "cbid": 41, "correlation": %d' % (external, correlation))
            w.flow("s", correlation, pid, tid, t)
            gpu_t = max(gpu_t, t + 3_000)
            first_gpu = gpu_t if first_gpu is None else first_gpu
            dur = 1_500 + rng.randrange(500)
            w.complete(cat, name, device, stream, gpu_t, dur,
                       '"External id": %d,\n      "device": %d, "context": 1,\n      "stream": %d, '
                       '"correlation": %d,\n      "bytes": %d, "memory bandwidth (GB/s)": %.6f'
                       % (external, device, stream, correlation, size, size / dur))
            w.flow("f", correlation, device, stream, gpu_t)
            gpu_t += dur
            t += api_dur + 1_000
        for k in range(step_kernels):
            name, grid, block, regs, smem, kdur = KERNELS[rng.randrange(len(KERNELS))]
            outer, inner = OPS[rng.randrange(len(OPS))]
            op_start = t
            ext_outer, ext_inner = external, external + 1
            external += 2
            correlation += 1
            if args.python:
                op_start = t + 2_000
            launch_ts = op_start + 9_000
            launch_dur = 4_000 + rng.randrange(3_000)
            op_end = launch_ts + launch_dur + 2_000
            if args.python:
                # The Python frame that called the op encloses it.
                w.complete("python_function", PYTHON_FRAMES[k % len(PYTHON_FRAMES)], pid, tid, t,
                           op_end + 1_500 - t, '"Python parent id": %d, "Python id": %d, "Ev Idx": %d'
                           % (ext_outer, ext_outer + 1, ext_outer))
            w.complete("cpu_op", outer, pid, tid, op_start, op_end + 1_000 - op_start,
                       '"External id": %d, "Record function id": 0, "Concrete Inputs": ["", ""], '
                       '"Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[4096, 1], [4096, 1]], '
                       '"Input Dims": [[16, 4096], [4096, 4096]], "Ev Idx": %d' % (ext_outer, ext_outer))
            w.complete("cpu_op", inner, pid, tid, op_start + 3_000, op_end - op_start - 3_000,
                       '"External id": %d, "Record function id": 0, "Input type": ["c10::BFloat16"], '
                       '"Input Strides": [[4096, 1]], "Input Dims": [[16, 4096]], "Ev Idx": %d'
                       % (ext_inner, ext_inner))
            w.complete("cuda_runtime", "cudaLaunchKernel", pid, tid, launch_ts, launch_dur,
                       '"External id": %d, "cbid": 211, "correlation": %d' % (ext_inner, correlation))
            w.flow("s", correlation, pid, tid, launch_ts)
            gpu_t = max(gpu_t + 1_000, launch_ts + 5_000)
            dur = kdur + rng.randrange(kdur // 4 + 1)
            if name.startswith("nccl"):
                # PyTorch's record_param_comms around the collective: process group, sequence number.
                if args.comm_records:
                    w.complete("cpu_op", "record_param_comms", pid, tid, launch_ts - 1_000, launch_dur + 1_500,
                               '"External id": %d, "Record function id": 0, "Collective name": "allreduce", '
                               '"dtype": "BFloat16", "In msg nelems": 65536, "Out msg nelems": 65536, '
                               '"Group size": %d, "Process Group Name": "0", "Process Group Description": '
                               '"default_pg", "Process Group Ranks": "[%s]", "Seq": %d, "Ev Idx": %d'
                               % (external, args.world_size, ranks, seq, external))
                    external += 1
                seq += 1
                if args.straggler >= 0:
                    # All ranks leave the collective together: the straggler starts it late, the
                    # others wait inside it for as long.
                    if args.rank == args.straggler:
                        gpu_t += args.straggle_ns
                    else:
                        dur += args.straggle_ns
                if jitter is not None:
                    j = jitter.randrange(args.collective_jitter_ns)
                    gpu_t += j
                    dur += args.collective_jitter_ns - j + jitter.randrange(args.collective_jitter_ns // 4 + 1)
            blocks = grid[0] * grid[1] * grid[2]
            w.complete("kernel", name, device, stream, gpu_t, dur,
                       '"External id": %d,\n      "queued": 0, "device": %d, "context": 1,\n'
                       '      "stream": %d, "correlation": %d,\n      "registers per thread": %d,\n'
                       '      "shared memory": %d,\n      "blocks per SM": %.6f,\n      "warps per SM": %.6f,\n'
                       '      "grid": [%d, %d, %d],\n      "block": [%d, %d, %d],\n'
                       '      "est. achieved occupancy %%": %d'
                       % (ext_inner, device, stream, correlation, regs, smem, blocks / 132.0,
                          blocks * block[0] * block[1] * block[2] / 32.0 / 132.0, grid[0], grid[1], grid[2],
                          block[0], block[1], block[2], rng.randrange(100)))
            w.flow("f", correlation, device, stream, gpu_t)
            gpu_t += dur
            t = op_end + 2_000
        correlation += 1
        w.complete("cuda_runtime", "cudaMemcpyAsync", pid, tid, t, 8_000,
                   '"External id": %d, "cbid": 41, "correlation": %d' % (external, correlation))
        w.flow("s", correlation, pid, tid, t)
        gpu_t = max(gpu_t, t + 3_000)
        w.complete("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", device, stream, gpu_t, 2_000,
                   '"External id": %d,\n      "device": %d, "context": 1,\n      "stream": %d, '
                   '"correlation": %d,\n      "bytes": 64, "memory bandwidth (GB/s)": 0.032'
                   % (external, device, stream, correlation))
        w.flow("f", correlation, device, stream, gpu_t)
        gpu_t += 2_000
        external += 1
        correlation += 1
        sync_end = max(t + 10_000, gpu_t + 2_000)
        w.complete("cuda_runtime", "cudaStreamSynchronize", pid, tid, t + 9_000, sync_end - t - 9_000,
                   '"External id": %d, "cbid": 131, "correlation": %d' % (external, correlation))
        t = sync_end + 3_000
        w.complete("user_annotation", "ProfilerStep#%d" % step, pid, tid, step_start, t - step_start,
                   '"External id": %d, "Record function id": 0, "Ev Idx": %d' % (step_ext, step_ext))
        w.complete("gpu_user_annotation", "ProfilerStep#%d" % step, device, stream, first_gpu - 1,
                   gpu_t - first_gpu + 2, '"External id": %d' % step_ext)
        step += 1
        t += 20_000
    w.event('\n  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n    "pid": "", "tid": "", "ts": %s\n  }'
            % w.us(t))
    out.write('\n  ],\n  "traceName": "%s"\n}' % args.output)


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", type=int, default=100000, help="number of kernels (default 100000)")
    p.add_argument("--kernels-per-step", type=int, default=500, help="kernels per ProfilerStep (default 500)")
    p.add_argument("--python", action="store_true", help="add python_function frames (with_stack=True)")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world-size", type=int, default=8)
    p.add_argument("--devices", type=int, default=8, help="GPUs in deviceProperties (default 8)")
    p.add_argument("--pid", type=int, default=4242)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--clock-offset-ns", type=int, default=0, help="shift every timestamp (a host's clock)")
    p.add_argument("--straggler", type=int, default=-1, help="the rank that arrives late at collectives")
    p.add_argument("--straggle-ns", type=int, default=0, help="how late the straggler arrives")
    p.add_argument("--collective-jitter-ns", type=int, default=0,
                   help="per-rank random lateness at collectives (seeded by --seed and --rank)")
    p.add_argument("--gzip", action="store_true", help="gzip the output (level 6)")
    p.add_argument("--comm-records", action="store_true",
                   help="add PyTorch's record_param_comms cpu_op (process group, Seq) to each NCCL kernel")
    p.add_argument("-o", "--output", required=True, help="output file ('-' for stdout)")
    return p


def main():
    p = parser()
    args = p.parse_args()
    if args.kernels < 0 or args.kernels_per_step <= 0:
        p.error("--kernels must be >= 0 and --kernels-per-step > 0")
    if args.output == "-":
        raw = sys.stdout.buffer
    else:
        raw = open(args.output, "wb")
    if args.gzip:
        raw = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6)
    with io.TextIOWrapper(raw, encoding="utf-8", write_through=False) as out:
        generate(args, out)


if __name__ == "__main__":
    main()
