"""Sightline's instrument library for Python runtimes (docs/instrument.md).

A ctypes binding over libsightline_instrument's C API, so the NVTX levels, the profiling window
(SIGHTLINE_PROFILE_START_STOP), the iteration log (SIGHTLINE_ITERATION_LOG) and the request log
(SIGHTLINE_REQUEST_LOG) behave exactly as in C++; plus GC markers through gc.callbacks. Without the
library every call does nothing (one warning on stderr).
"""
import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os
import sys

__all__ = [
    "OFF", "BASIC", "VERBOSE", "ARRIVED", "SCHEDULED", "TOKENS", "PREEMPTED", "FINISHED",
    "available", "level", "enabled", "push", "pop", "mark", "range", "iteration", "step",
    "iteration_begin", "iteration_end", "log_field", "log", "request_event", "flush",
    "profiler_active", "rank", "enable_gc_markers", "disable_gc_markers", "GC_RANGE_NAME",
]

OFF, BASIC, VERBOSE = 0, 1, 2
# sightline_request_event_kind, in the C header's order.
ARRIVED, SCHEDULED, TOKENS, PREEMPTED, FINISHED = 0, 1, 2, 3, 4
# The NVTX range a collection is wrapped in: the name TensorRT-LLM's TLLM_PROFILE_RECORD_GC uses, and
# the analyzer's default GC range name.
GC_RANGE_NAME = "Python GC"

# sightline_field, in the C header's order; the iteration log's keys.
_FIELDS = {name: i for i, name in enumerate([
    "active_requests", "context_requests", "generation_requests", "context_tokens",
    "generated_tokens", "kv_blocks_used", "kv_blocks_free", "kv_blocks_max", "kv_tokens_per_block",
    "gpu_memory_bytes", "cpu_memory_bytes", "pinned_memory_bytes"])}


def _load():
    candidates = []
    if os.environ.get("SIGHTLINE_INSTRUMENT_LIB"):
        candidates.append(os.environ["SIGHTLINE_INSTRUMENT_LIB"])
    candidates.append("libsightline_instrument.so.0")
    candidates.append("libsightline_instrument.so")
    found = ctypes.util.find_library("sightline_instrument")
    if found:
        candidates.append(found)
    errors = []
    for name in candidates:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
    sys.stderr.write(
        "sightline: libsightline_instrument not found (set SIGHTLINE_INSTRUMENT_LIB to its path, or "
        "install it: cmake --install BUILD --component instrument); instrumentation is off\n")
    return None


_lib = _load()
if _lib is not None:
    _i64 = ctypes.c_int64
    for _name, _args, _res in [
        ("sightline_nvtx_level", [], ctypes.c_int),
        ("sightline_range_push", [ctypes.c_int, ctypes.c_char_p], None),
        ("sightline_range_pop", [ctypes.c_int], None),
        ("sightline_mark", [ctypes.c_int, ctypes.c_char_p], None),
        ("sightline_iteration_begin", [_i64], None),
        ("sightline_iteration_end", [_i64], None),
        ("sightline_step", [_i64], None),
        ("sightline_log_field", [ctypes.c_int, _i64], None),
        ("sightline_log_int", [ctypes.c_char_p, _i64], None),
        ("sightline_log_double", [ctypes.c_char_p, ctypes.c_double], None),
        ("sightline_log_string", [ctypes.c_char_p, ctypes.c_char_p], None),
        ("sightline_request_event", [ctypes.c_char_p, ctypes.c_int, _i64], None),
        ("sightline_flush", [], None),
        ("sightline_profiler_active", [], ctypes.c_int),
        ("sightline_rank", [], ctypes.c_int),
    ]:
        _f = getattr(_lib, _name)
        _f.argtypes = _args
        _f.restype = _res
    _level = _lib.sightline_nvtx_level()
else:
    _level = OFF


def _b(s):
    return s if isinstance(s, bytes) else str(s).encode("utf-8", "replace")


def available():
    """True when the C library was loaded."""
    return _lib is not None


def level():
    """The NVTX level in effect (SIGHTLINE_NVTX_LEVEL; 0 when the library is missing)."""
    return _level


def enabled(lvl=BASIC):
    return _level >= lvl


def push(name, lvl=BASIC):
    if _level >= lvl:
        _lib.sightline_range_push(lvl, _b(name))


def pop(lvl=BASIC):
    if _level >= lvl:
        _lib.sightline_range_pop(lvl)


def mark(name, lvl=BASIC):
    if _level >= lvl:
        _lib.sightline_mark(lvl, _b(name))


class range(contextlib.ContextDecorator):  # noqa: A001 - the natural name, as nvtx.annotate
    """An NVTX range for a `with` block or a decorated function, emitted when `level` is enabled."""

    def __init__(self, name, level=BASIC):
        self.name = name
        self.level = level

    def __enter__(self):
        push(self.name, self.level)
        return self

    def __exit__(self, *exc):
        pop(self.level)
        return False


@contextlib.contextmanager
def iteration(i):
    """One loop iteration: NVTX "iteration i", the profiling window, one iteration-log line."""
    iteration_begin(i)
    try:
        yield
    finally:
        iteration_end(i)


def iteration_begin(i):
    if _lib is not None:
        _lib.sightline_iteration_begin(int(i))


def iteration_end(i):
    if _lib is not None:
        _lib.sightline_iteration_end(int(i))


def step(i):
    """Ends the open iteration (if any) and begins iteration i."""
    if _lib is not None:
        _lib.sightline_step(int(i))


def log_field(name, value):
    """A well-known iteration-log field ("active_requests", "kv_blocks_used", ...)."""
    if name not in _FIELDS:
        raise ValueError(f"unknown iteration-log field {name!r}; known: {', '.join(_FIELDS)}")
    if _lib is not None:
        _lib.sightline_log_field(_FIELDS[name], int(value))


def log(key, value):
    """A user field of the open iteration's log line (int, float or str)."""
    if _lib is None:
        return
    if isinstance(value, bool) or isinstance(value, int):
        _lib.sightline_log_int(_b(key), int(value))
    elif isinstance(value, float):
        _lib.sightline_log_double(_b(key), value)
    else:
        _lib.sightline_log_string(_b(key), _b(value))


def request_event(request_id, event, tokens=0):
    """A request event (ARRIVED, SCHEDULED, TOKENS, PREEMPTED, FINISHED) for SIGHTLINE_REQUEST_LOG."""
    if _lib is not None:
        _lib.sightline_request_event(_b(request_id), int(event), int(tokens))


def flush():
    if _lib is not None:
        _lib.sightline_flush()


def profiler_active():
    return bool(_lib is not None and _lib.sightline_profiler_active())


def rank():
    return _lib.sightline_rank() if _lib is not None else -1


_gc_depth = 0


def _on_gc(phase, info):
    # gc.callbacks run on the collecting thread, with the GIL held: push on start, pop on stop.
    global _gc_depth
    if phase == "start":
        _gc_depth += 1
        push(GC_RANGE_NAME, BASIC)
    elif phase == "stop" and _gc_depth > 0:
        _gc_depth -= 1
        pop(BASIC)


def enable_gc_markers():
    """Wraps every garbage collection in the NVTX range "Python GC" (level basic)."""
    if _on_gc not in gc.callbacks:
        gc.callbacks.append(_on_gc)


def disable_gc_markers():
    if _on_gc in gc.callbacks:
        gc.callbacks.remove(_on_gc)


if os.environ.get("SIGHTLINE_GC_MARKERS", "") not in ("", "0"):
    enable_gc_markers()
