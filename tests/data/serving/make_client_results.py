#!/usr/bin/env python3
"""Writes small result files shaped exactly like three benchmark clients write them, for tests:

- sglang_bench_serving_small.jsonl: `python -m sglang.bench_serving --output-file F --output-details`
  (sgl-project/sglang python/sglang/bench_serving.py at 0033168f): one JSON line per run appended to
  the file; the first line is an earlier run without --output-details, the second has the per-request
  lists. Aggregates as its calculate_metrics computes them (np.mean, np.median, np.std population,
  np.percentile linear; TPOT = (latency - ttft) / (output_len - 1); failed requests output_len 0).
  Its default request rate is inf, which json.dumps writes as the bare token Infinity.
- aiperf_profile_export_small.jsonl: AIPerf's artifacts/<run>/profile_export.jsonl (ai-dynamo/aiperf
  at db4f6397, aiperf/common/models/record_models.py MetricRecordInfo): metadata with time.time_ns()
  stamps, metrics {value, unit} in display units (ms), error; two warm-up records, one failed
  (cancelled) record.
- trtllm_bench_report_small.json: `trtllm-bench ... --report_json` (NVIDIA/TensorRT-LLM
  tensorrt_llm/bench/dataclasses/reporting.py get_statistics_dict at 02499765): aggregates only.

The percentiles here are computed in plain Python with numpy's linear interpolation, independently
of Sightline's C++. Run: /usr/bin/python3 tests/data/serving/make_client_results.py
"""
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def percentile(values, p):  # numpy's default (linear) method
    v = sorted(values)
    if not v:
        return 0.0
    k = (len(v) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def mean(v):
    return sum(v) / len(v) if v else 0.0


def std(v):
    m = mean(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / len(v)) if v else 0.0


def sglang():
    random.seed(11)
    n = 30
    ttfts, itls, lat, ins, outs, errs = [], [], [], [], [], []
    for i in range(n):
        ins.append(random.randint(100, 900))
        if i == 7:  # a failed request: SGLang keeps ttft 0, no gaps, output_len 0 and the error
            ttfts.append(0.0); itls.append([]); lat.append(0.0); outs.append(0); errs.append("Bad Request")
            continue
        k = random.randint(4, 24)
        ttft = random.uniform(0.03, 0.12) * (6 if i in (3, 19) else 1)
        gaps = [random.uniform(0.008, 0.014) * (8 if (i == 12 and j == 2) else 1) for j in range(k - 1)]
        ttfts.append(ttft); itls.append(gaps); outs.append(k); errs.append("")
        lat.append(ttft + sum(gaps) + 0.0004)  # SGLang's latency also counts the final [DONE] chunk
    ok = [i for i in range(n) if errs[i] == ""]
    dur = 2.75
    t = [ttfts[i] for i in ok]
    g = [x for i in ok for x in itls[i]]
    tp = [(lat[i] - ttfts[i]) / (outs[i] - 1) for i in ok if outs[i] > 1]
    e = [lat[i] for i in ok]
    total_in = sum(ins[i] for i in ok)
    base = {
        "backend": "sglang", "dataset_name": "random", "request_rate": float("inf"),
        "max_concurrency": 16, "sharegpt_output_len": None, "random_input_len": 1024,
        "random_output_len": 24, "random_range_ratio": 0.0,
    }
    res = dict(base)
    res.update({
        "duration": dur, "completed": len(ok), "total_input_tokens": total_in,
        "total_output_tokens": sum(outs), "total_output_tokens_retokenized": sum(outs),
        "request_throughput": len(ok) / dur, "input_throughput": total_in / dur,
        "output_throughput": sum(outs) / dur,
        "mean_e2e_latency_ms": mean(e) * 1000, "median_e2e_latency_ms": percentile(e, 50) * 1000,
        "std_e2e_latency_ms": std(e) * 1000, "p99_e2e_latency_ms": percentile(e, 99) * 1000,
        "mean_ttft_ms": mean(t) * 1000, "median_ttft_ms": percentile(t, 50) * 1000,
        "std_ttft_ms": std(t) * 1000, "p99_ttft_ms": percentile(t, 99) * 1000,
        "mean_tpot_ms": mean(tp) * 1000, "median_tpot_ms": percentile(tp, 50) * 1000,
        "std_tpot_ms": std(tp) * 1000, "p99_tpot_ms": percentile(tp, 99) * 1000,
        "mean_itl_ms": mean(g) * 1000, "median_itl_ms": percentile(g, 50) * 1000,
        "std_itl_ms": std(g) * 1000, "p95_itl_ms": percentile(g, 95) * 1000,
        "p99_itl_ms": percentile(g, 99) * 1000,
        "concurrency": sum(e) / dur, "accept_length": None,
    })
    earlier = dict(res)  # an earlier run in the same file, without --output-details
    earlier["duration"] = 3.5
    details = {"input_lens": ins, "output_lens": outs, "ttfts": ttfts, "itls": itls,
               "generated_texts": ["x" * o for o in outs], "errors": errs}
    with open(os.path.join(HERE, "sglang_bench_serving_small.jsonl"), "w") as f:
        f.write(json.dumps(earlier) + "\n")
        f.write(json.dumps(res | details) + "\n")


def aiperf():
    random.seed(5)
    t0 = 1759813207532900363
    lines = []
    def record(i, phase, start, ttft_ms, gaps_ms, isl, error=None):
        latency_ms = ttft_ms + sum(gaps_ms)
        end = start + int(round(latency_ms * 1e6))
        meta = {"session_num": i, "x_request_id": "req-%04d" % i, "x_correlation_id": "corr-%04d" % i,
                "conversation_id": "conv-%04d" % i, "turn_index": 0, "request_start_ns": start,
                "request_ack_ns": None if error else start + 2_000_000, "request_end_ns": end,
                "worker_id": "worker_0", "record_processor_id": "record_processor_0",
                "benchmark_phase": phase, "was_cancelled": error is not None,
                "cancellation_time_ns": end if error else None}
        if error:
            return {"metadata": meta, "metrics": {"error_isl": {"value": isl, "unit": "tokens"}},
                    "error": {"code": 499, "type": "RequestCancellationError",
                              "message": "Request was cancelled after 0.000 seconds"}}
        osl = len(gaps_ms) + 1
        m = {"input_sequence_length": {"value": isl, "unit": "tokens"},
             "time_to_first_token": {"value": ttft_ms, "unit": "ms"},
             "request_latency": {"value": latency_ms, "unit": "ms"},
             "output_token_count": {"value": osl, "unit": "tokens"},
             "inter_chunk_latency": {"value": gaps_ms, "unit": "ms"},
             "output_sequence_length": {"value": osl, "unit": "tokens"}}
        if osl >= 2:
            m["inter_token_latency"] = {"value": (latency_ms - ttft_ms) / (osl - 1), "unit": "ms"}
            m["output_token_throughput_per_user"] = {"value": 1000.0 / m["inter_token_latency"]["value"],
                                                     "unit": "tokens/sec/user"}
        return {"metadata": meta, "metrics": m, "error": None}
    start = t0
    for i in range(2):  # warm-up
        lines.append(record(i, "warmup", start, 80.0, [6.0] * 3, 200)); start += 50_000_000
    for i in range(2, 26):
        start += random.randint(5_000_000, 40_000_000)
        if i == 9:
            lines.append(record(i, "profiling", start, 0, [], 300, error=True)); continue
        k = random.randint(2, 16)
        gaps = [round(random.uniform(4.5, 6.0) * (9 if (i == 15 and j == 1) else 1), 6) for j in range(k - 1)]
        lines.append(record(i, "profiling", start, round(random.uniform(20, 60) * (5 if i == 20 else 1), 6),
                            gaps, random.randint(100, 600)))
    with open(os.path.join(HERE, "aiperf_profile_export_small.jsonl"), "w") as f:
        for r in lines:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def trtllm_bench():
    pct = lambda lo: {"p50": lo * 1.0, "p90": lo * 1.4, "p95": lo * 1.6, "p99": lo * 2.1,
                      "minimum": lo * 0.7, "maximum": lo * 2.4, "average": lo * 1.1}
    d = {
        "engine": {"model": "meta-llama/Llama-3.1-8B", "model_path": "None", "engine_dir": "None",
                   "version": "1.1.0rc1", "backend": "Pytorch", "dtype": "bfloat16",
                   "kv_cache_dtype": None, "quantization": None},
        "machine": {"name": "NVIDIA H100 80GB HBM3", "memory.total": 79.19, "clocks.mem": 2.619},
        "world_info": {"tp_size": 1, "pp_size": 1, "ep_size": 1, "world_size": 1,
                       "max_batch_size": 256, "max_num_tokens": 8192, "scheduling_policy": "GUARANTEED_NO_EVICT",
                       "kv_cache_percentage": 0.9, "issue_rate": 1.2e12},
        "request_info": {"num_requests": 512, "avg_num_concurrent_requests": 204.7,
                         "avg_input_length": 128.0, "avg_output_length": 128.0},
        "performance": {"total_latency_ms": 24513.2, "avg_request_latency_ms": 9802.4,
                        "request_throughput_req_s": 20.887, "system_output_throughput_tok_s": 2673.5,
                        "system_total_throughput_tok_s": 5347.0, "output_throughput_per_user_tok_s": 13.06,
                        "output_throughput_per_gpu_tok_s": 2673.5,
                        "request_latency_percentiles_ms": pct(9000.0)},
        "streaming_metrics": {"token_output_speed_tok_s": 14.2, "avg_ttft_ms": 812.5, "avg_tpot_ms": 70.3,
                              "tpot_percentiles": pct(68.0), "ttft_percentiles": pct(700.0),
                              "gen_tps_percentiles": pct(14.0)},
        "dataset": {"isl_stats": pct(128.0), "osl_stats": pct(128.0), "num_requests": 512},
    }
    with open(os.path.join(HERE, "trtllm_bench_report_small.json"), "w") as f:
        json.dump(d, f, indent=4)


sglang()
aiperf()
trtllm_bench()
