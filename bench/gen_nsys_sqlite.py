#!/usr/bin/env python3
"""Generates a synthetic Nsight Systems SQLite export for benchmarks and importer tests.

The tables mirror the columns of a real `nsys export --type sqlite` file (schema 3.16.1, Nsight
Systems 2024.6): META_DATA_EXPORT, StringIds, the ENUM_* tables the importer reads,
TARGET_INFO_GPU, PROCESSES, ThreadNames, CUPTI_ACTIVITY_KIND_{KERNEL,RUNTIME,MEMCPY,MEMSET} and
NVTX_EVENTS. Rows are generated inside SQLite (INSERT ... SELECT over a recursive counter), so
10^7 kernels take about a minute. Only the Python standard library is used.

The timeline: one process (pid 4242, thread 4242) launches N kernels on device 0, stream 7, one
every 5 us. Kernel i is launched by a cudaLaunchKernel_v7000 call with the same correlationId.
Every 100th kernel is followed by a cudaStreamSynchronize; every 1000th slot also has a
cudaMemcpyAsync (HtoD, pinned -> device) and, offset by 500, a cudaMemsetAsync. NVTX: a
"decode_step" push/pop range (registered string, domain "sightline") every 100 kernels, with a
nested "layer_K" range (explicit text) every 10 kernels. All tables are in start order, as nsys
writes them.

Usage: gen_nsys_sqlite.py --kernels 1000000 --out /tmp/nsys_1e6.sqlite
"""

import argparse
import os
import sqlite3
import sys

SCHEMA = {
    "META_DATA_EXPORT": "name TEXT NOT NULL, value TEXT",
    "StringIds": "id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL",
    "ENUM_NSYS_EVENT_CLASS": "id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT",
    "ENUM_CUDA_MEMCPY_OPER": "id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT",
    "ENUM_CUDA_MEM_KIND": "id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT",
    "TARGET_INFO_GPU": "vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, "
    "isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, "
    "clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, "
    "chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, "
    "nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, "
    "maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, "
    "maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, "
    "maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, "
    "maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, "
    "maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER, computeMinor INTEGER, "
    "smMajor INTEGER, smMinor INTEGER",
    "PROCESSES": "globalPid INTEGER, pid INTEGER, name TEXT",
    "ThreadNames": "nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER",
    "CUPTI_ACTIVITY_KIND_KERNEL": "start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, "
    "launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, "
    "gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, "
    "blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
    "staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, "
    "localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, "
    "gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, "
    "sharedMemoryLimitConfig INTEGER",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, "
    "nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER",
    "CUPTI_ACTIVITY_KIND_MEMCPY": "start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, "
    "srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, "
    "dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, "
    "virtualAddress INTEGER",
    "CUPTI_ACTIVITY_KIND_MEMSET": "start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER",
    "NVTX_EVENTS": "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, "
    "rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
    "endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, "
    "int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
    "floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT",
}

# (short name, demangled name, grid, block, registers, static smem, dynamic smem)
KERNELS = [
    ("rms_norm_kernel",
     "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, "
     "c10::BFloat16 const*, float, int, int)", (8, 1, 1), (1024, 1, 1), 32, 128, 0),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas", (132, 1, 1), (384, 1, 1), 168, 0, 213248),
    ("rotary_embedding_kernel",
     "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
     "c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)",
     (8, 1, 1), (512, 1, 1), 40, 0, 0),
    ("reshape_and_cache_flash_kernel",
     "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, "
     "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, "
     "__nv_bfloat16*, long const*, long, long, long, long, int, int, int, float const*, "
     "float const*)", (8, 1, 1), (512, 1, 1), 28, 0, 0),
    ("flash_fwd_splitkv_kernel",
     "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, "
     "false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, "
     "false, false, false, false, true, false, false, false>(Flash_fwd_params)",
     (1, 8, 4), (128, 1, 1), 255, 0, 49152),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas", (64, 1, 1), (128, 1, 1), 90, 0, 98304),
    ("cross_device_reduce_1stage",
     "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, "
     "vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
     (36, 1, 1), (512, 1, 1), 40, 0, 0),
    ("fused_add_rms_norm_kernel",
     "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, "
     "c10::BFloat16 const*, float, int, int)", (8, 1, 1), (1024, 1, 1), 30, 128, 0),
    ("act_and_mul_kernel",
     "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>("
     "c10::BFloat16*, c10::BFloat16 const*, int)", (8, 1, 1), (1024, 1, 1), 16, 0, 0),
    ("vectorized_elementwise_kernel",
     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
     "c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char*, 3ul>)", (264, 1, 1), (128, 1, 1), 24, 0, 0),
]

API_NAMES = ["cudaLaunchKernel_v7000", "cudaStreamSynchronize_v3020", "cudaMemcpyAsync_v3020",
             "cudaMemsetAsync_v3020"]

PERIOD_NS = 5000     # one kernel slot
T0_NS = 1_000_000_000
PID = 4242
VM_BITS = 1 << 48    # nsys sets bits above 47 (machine / VM)
GLOBAL_PID = VM_BITS | (PID << 24)
GLOBAL_TID = GLOBAL_PID | PID


def counter(n):
    """A recursive CTE yielding i = 0 .. n-1 as table c(i)."""
    return f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {n - 1}) "


def generate(path, n_kernels, distinct_kernels):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -262144")
    for table, columns in SCHEMA.items():
        db.execute(f"CREATE TABLE {table} ({columns})")

    meta = [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
            ("EXPORT_PRODUCT_VERSION", "2024.6.2.225 (synthetic: bench/gen_nsys_sqlite.py)"),
            ("EXPORT_SCHEMA_VERSION", "3.16.1"), ("EXPORT_SCHEMA_VERSION_MAJOR", "3"),
            ("EXPORT_SCHEMA_VERSION_MINOR", "16"), ("EXPORT_SCHEMA_VERSION_MICRO", "1")]
    db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", meta)
    db.executemany("INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (?, ?, ?)", [
        (0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
        (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
        (67, "TRACE_PROCESS_EVENT_CUDABACKTRACE", "CUDA backtrace")])
    db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", [
        (0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"), (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
        (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"),
        (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"),
        (10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer")])
    db.executemany("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", [
        (0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
        (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
        (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"),
        (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown")])

    # Strings: kernel names (demangled then short), API names, NVTX strings, thread name.
    kernels = [KERNELS[k % len(KERNELS)] for k in range(distinct_kernels)]
    strings = []
    for k, kern in enumerate(kernels):
        suffix = "" if k < len(KERNELS) else f"_v{k // len(KERNELS)}"
        strings.append(kern[1] + suffix)
    for k, kern in enumerate(kernels):
        suffix = "" if k < len(KERNELS) else f"_v{k // len(KERNELS)}"
        strings.append(kern[0] + suffix)
    demangled0, short0 = 0, distinct_kernels
    api0 = len(strings)
    strings += API_NAMES
    step_name = len(strings)
    strings.append("decode_step")
    thread_name = len(strings)
    strings.append("python3")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(strings)))

    db.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, l2CacheSize, "
               "totalMemory, memoryBandwidth, clockRate, smCount, chipName, cuDevice, "
               "maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, "
               "maxRegistersPerSm, threadsPerWarp, asyncEngines, maxWarpsPerSm, maxBlocksPerSm, "
               "maxThreadsPerBlock, computeMajor, computeMinor, smMajor, smMinor) VALUES "
               "(?, 0, 'NVIDIA H100 80GB HBM3', '0000:19:00.0', 1, 52428800, 85045231616, "
               "3352320000000, 1980000000, 132, 'GH100', 0, 65536, 49152, 232448, 233472, "
               "65536, 32, 3, 64, 32, 1024, 9, 0, 9, 0)", (VM_BITS,))
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (GLOBAL_PID, PID))
    db.execute("INSERT INTO PROCESSES VALUES (?, 1, 'systemd')", (VM_BITS | (1 << 24),))
    db.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (thread_name, GLOBAL_TID))

    n = n_kernels
    slot = f"({T0_NS} + i * {PERIOD_NS})"
    # Kernel i runs at slot + 2000 for 500..2899 ns; its launch call has correlationId 4 * i + 1.
    kern_k = f"(i % {distinct_kernels})"

    def per_kernel(column):
        cases = " ".join(f"WHEN {k} THEN {kern[column]}" for k, kern in enumerate(kernels))
        return f"(CASE {kern_k} {cases} END)"

    def dim(column, axis):
        cases = " ".join(f"WHEN {k} THEN {kern[column][axis]}" for k, kern in enumerate(kernels))
        return f"(CASE {kern_k} {cases} END)"

    db.execute(
        counter(n) + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT "
        f"{slot} + 2000, {slot} + 2500 + (i * 7919) % 2400, 0, 1, 0, 7, 4 * i + 1, {GLOBAL_PID}, "
        f"{demangled0} + {kern_k}, {short0} + {kern_k}, NULL, 1, 0, {per_kernel(4)}, "
        f"{dim(2, 0)}, {dim(2, 1)}, {dim(2, 2)}, {dim(3, 0)}, {dim(3, 1)}, {dim(3, 2)}, "
        f"{per_kernel(5)}, {per_kernel(6)}, 0, 0, i + 1, {per_kernel(6)}, NULL, 0 FROM c")

    # API calls in start order within each slot: memcpy/memset call (j=0), launch (j=1),
    # synchronize (j=2). CROSS JOIN keeps c as the outer loop, so rows come out in (i, j) order
    # without a sort. correlationIds: launch 4i+1, memcpy 4i+2, sync 4i+3, memset 4i+4.
    db.execute(
        counter(n) + ", k(j) AS (VALUES (0), (1), (2)) "
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT "
        f"CASE j WHEN 0 THEN {slot} WHEN 1 THEN {slot} + 500 ELSE {slot} + 1600 END, "
        f"CASE j WHEN 0 THEN {slot} + 400 WHEN 1 THEN {slot} + 1500 ELSE {slot} + 4950 END, "
        f"0, {GLOBAL_TID}, "
        "CASE j WHEN 0 THEN (CASE WHEN i % 1000 = 0 THEN 4 * i + 2 ELSE 4 * i + 4 END) "
        "WHEN 1 THEN 4 * i + 1 ELSE 4 * i + 3 END, "
        f"CASE j WHEN 0 THEN (CASE WHEN i % 1000 = 0 THEN {api0 + 2} ELSE {api0 + 3} END) "
        f"WHEN 1 THEN {api0} ELSE {api0 + 1} END, 0, NULL "
        "FROM c CROSS JOIN k WHERE j = 1 OR (j = 0 AND i % 500 = 0) OR (j = 2 AND i % 100 = 99)")

    db.execute(
        counter(n) + "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
        "greenContextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) "
        f"SELECT {slot} + 450, {slot} + 1450, 0, 1, 0, 7, 4 * i + 2, {GLOBAL_PID}, 1048576, 1, "
        "1, 2 FROM c WHERE i % 1000 = 0")
    db.execute(
        counter(n) + "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
        "greenContextId, streamId, correlationId, globalPid, value, bytes, memKind) "
        f"SELECT {slot} + 450, {slot} + 700, 0, 1, 0, 7, 4 * i + 4, {GLOBAL_PID}, 0, 65536, 2 "
        "FROM c WHERE i % 1000 = 500")

    # NVTX: the domain, then per 10 kernels (j): a decode_step range when j % 10 == 0, then a layer.
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
               "VALUES (?, NULL, 75, 'sightline', ?, 1)", (T0_NS - 1000, GLOBAL_TID))
    layers = (n + 9) // 10
    # Nested, never crossing: step [s - 30, next step - 35], layer [l - 20, next layer - 40].
    step_start = f"({T0_NS} + 10 * i * {PERIOD_NS} - 30)"
    step_end = f"({T0_NS} + min(10 * i + 100, 10 * {layers}) * {PERIOD_NS} - 35)"
    layer_start = f"({T0_NS} + 10 * i * {PERIOD_NS} - 20)"
    layer_end = f"({T0_NS} + (10 * i + 10) * {PERIOD_NS} - 40)"
    db.execute(
        counter(layers) + ", k(j) AS (VALUES (0), (1)) "
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) SELECT "
        f"CASE j WHEN 0 THEN {step_start} ELSE {layer_start} END, "
        f"CASE j WHEN 0 THEN {step_end} ELSE {layer_end} END, 59, "
        "CASE j WHEN 0 THEN NULL ELSE 'layer_' || (i % 10) END, "
        f"{GLOBAL_TID}, CASE j WHEN 0 THEN {step_name} ELSE NULL END, "
        "CASE j WHEN 0 THEN 1 ELSE 0 END "
        "FROM c CROSS JOIN k WHERE j = 1 OR i % 10 = 0")
    db.commit()
    db.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000, help="number of kernels")
    parser.add_argument("--distinct-kernels", type=int, default=24,
                        help="distinct kernel names (cycled)")
    parser.add_argument("--out", required=True, help="output .sqlite path (overwritten)")
    args = parser.parse_args()
    if args.kernels < 1 or args.distinct_kernels < 1:
        sys.exit("--kernels and --distinct-kernels must be at least 1")
    generate(args.out, args.kernels, args.distinct_kernels)


if __name__ == "__main__":
    main()
