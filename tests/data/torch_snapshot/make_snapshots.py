#!/usr/bin/env python3
"""Writes the small PyTorch memory snapshots the tests read (tests/torch_snapshot_test.cc).

They are plain dicts shaped like torch.cuda.memory._dump_snapshot's output (checked against a real
PyTorch 2.11 snapshot: ../../../docs/formats/torch_snapshot.md), pickled by the standard library,
so no PyTorch is needed. Run it from anywhere: python3 tests/data/torch_snapshot/make_snapshots.py
"""
import datetime
import os
import pickle

MiB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))


def frames(op, py_line):
    """A stack innermost first: allocator internals, the aten op, torch's Python, the caller."""
    return [
        {"filename": "??", "line": 0, "name": "torch::unwind::unwind()"},
        {"filename": "CUDACachingAllocator.cpp", "line": 0,
         "name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc()"},
        {"filename": "??", "line": 0, "name": f"at::_ops::{op}::redispatch(c10::DispatchKeySet)"},
        {"filename": "??", "line": 0, "name": f"at::_ops::{op}::call(at::Tensor const&)"},
        {"filename": "/usr/lib/python3/site-packages/torch/nn/functional.py", "line": 10,
         "name": "linear"},
        {"filename": "/home/user/model.py", "line": py_line, "name": "forward"},
        {"filename": "??", "line": 0, "name": "_start"},
    ]


def event(action, addr, size, t, fr=None):
    e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
         "compile_context": "N/A", "user_metadata": ""}
    if fr is not None:
        e["frames"] = fr
    return e


A, B, C = 0x7F0000000000, 0x7F0000900000, 0x7F0005000000
MM = frames("mm", 60)
EMPTY = frames("empty_memory_format", 50)

# Device 0. Before the history began, segment C (2 MiB) held a 1 MiB block. Then:
#   segment A 2 MiB; alloc 1 MiB (mm, line 42) and 512 KiB (empty, line 50) in it; free the 1 MiB;
#   segment B 20 MiB; alloc 16 MiB (mm, line 60): the peak, 17.5 MiB allocated, 24 MiB reserved;
#   free the 512 KiB; segment A freed (empty_cache): 17 MiB allocated, 22 MiB reserved at the dump.
history = [
    event("segment_alloc", A, 2 * MiB, 1_000_000),
    event("alloc", A, 1 * MiB, 1_000_001, frames("mm", 42)),
    event("alloc", A + MiB, MiB // 2, 1_000_002, EMPTY),
    event("free_requested", A, 1 * MiB, 1_000_003),
    event("free_completed", A, 1 * MiB, 1_000_004),
    event("segment_alloc", B, 20 * MiB, 1_000_005),
    event("alloc", B, 16 * MiB, 1_000_006, MM),
    event("free_requested", A + MiB, MiB // 2, 1_000_007),
    event("free_completed", A + MiB, MiB // 2, 1_000_008),
    event("segment_free", A, 2 * MiB, 1_000_009),
    event("oom", 0, 64 * MiB, 1_000_010),
    event("teleport", 0, 0, 1_000_011),  # an action this version does not know
]


def segment(addr, total, blocks):
    return {"device": 0, "address": addr, "total_size": total,
            "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
            "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks}


def block(addr, size, state, fr):
    return {"address": addr, "size": size, "requested_size": size, "state": state, "frames": fr}


segments = [
    segment(B, 20 * MiB, [block(B, 16 * MiB, "active_allocated", MM),
                          block(B + 16 * MiB, 4 * MiB, "inactive", [])]),
    segment(C, 2 * MiB, [block(C, 1 * MiB, "active_allocated", EMPTY),
                         block(C + MiB, 1 * MiB, "active_pending_free", [])]),
]

snapshot = {"segments": segments, "device_traces": [history, []],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0},
            "external_annotations": []}

# Without history (_record_memory_history off): only the dump's segments.
no_history = {"segments": segments, "device_traces": [[]]}

files = {
    "history.pickle": pickle.dumps(snapshot, protocol=4),
    "no_history.pickle": pickle.dumps(no_history, protocol=4),
    # Objects, not plain data: the reader must refuse them without running anything.
    "object_p4.pickle": pickle.dumps(datetime.date(2024, 1, 1), protocol=4),
    "object_p2.pickle": pickle.dumps(datetime.date(2024, 1, 1), protocol=2),
}
for name, data in files.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    print(name, len(data), "bytes")
