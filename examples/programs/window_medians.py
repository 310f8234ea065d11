"""The line the programs' --window-every prints (hf_generate.py, graph_serving_loop.py), read by
cuda/recorder/tools/window_bench.py: the median over the samples taken outside a profiler window
and over those inside one, wall and the calling thread's CPU time, in ms, and the ratios."""
import statistics


def print_window_medians(samples, what):
    """samples: (in_window, wall seconds, CPU seconds) per measured call or block; what: "calls"
    or "blocks", the name of the counts at the end of the line."""
    def med(xs):
        return statistics.median(xs) * 1e3 if xs else float("nan")

    out_ms = med([w for inside, w, _ in samples if not inside])
    in_ms = med([w for inside, w, _ in samples if inside])
    cpu_out = med([c for inside, _, c in samples if not inside])
    cpu_in = med([c for inside, _, c in samples if inside])
    print(f"median_out_ms={out_ms:.4f} median_in_ms={in_ms:.4f} "
          f"in_over_out_pct={(in_ms / out_ms - 1) * 100:.2f} cpu_out_ms={cpu_out:.4f} "
          f"cpu_in_ms={cpu_in:.4f} cpu_in_over_out_pct={(cpu_in / cpu_out - 1) * 100:.2f} "
          f"{what}_in={sum(1 for s in samples if s[0])} "
          f"{what}_out={sum(1 for s in samples if not s[0])}", flush=True)
