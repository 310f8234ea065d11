#!/usr/bin/env python3
"""Writes vllm_detailed_small.json: a result file shaped like `vllm bench serve --save-result
--save-detailed --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99,99.9
--goodput ttft:300 tpot:40` writes it, for 40 synthetic requests (2 failed, 2 with one output token, a
slow tail planted in 4 of them). Its aggregate fields (mean_ttft_ms, p99_itl_ms, request_goodput, ...)
are computed here with numpy exactly as vLLM's calculate_metrics does (vllm/benchmarks/serve.py):
np.mean, np.std (population), np.median, np.percentile (linear); TPOT = (latency - ttft) /
(output_len - 1) over requests with more than one output token (0 for the goodput check); ITL over
every gap of every successful request; throughputs over `duration`. The C++ tests check that
Sightline's own computation from the per-request lists gives the same numbers.

Needs numpy (Debian: python3-numpy): /usr/bin/python3 tests/data/serving/make_vllm_detailed.py
"""
import json
import os
import random

import numpy as np

random.seed(7)
n = 40
start_times, ttfts, itls, latencies, input_lens, output_lens, errors = [], [], [], [], [], [], []
t = 1000.0
for i in range(n):
    t += random.expovariate(8.0)
    start_times.append(t)
    input_lens.append(random.randint(64, 512))
    if i in (11, 29):  # failed requests
        ttfts.append(0.0)
        itls.append([])
        latencies.append(0.0)
        output_lens.append(0)
        errors.append("Bad Request: context length exceeded")
        continue
    out = 1 if i in (5, 17) else random.randint(8, 48)
    ttft = random.uniform(0.05, 0.25) + (0.6 if i in (3, 20, 33, 38) else 0.0)
    gaps = [random.uniform(0.018, 0.030) for _ in range(out - 1)]
    if i in (3, 20):  # a stall in the middle of decoding
        gaps[len(gaps) // 2] += 0.35
    ttfts.append(ttft)
    itls.append(gaps)
    latencies.append(ttft + sum(gaps) + random.uniform(0.0, 0.002))
    output_lens.append(out)
    errors.append("")
duration = max(s + l for s, l in zip(start_times, latencies)) - start_times[0]

ok = [i for i in range(n) if errors[i] == ""]
tt = [ttfts[i] for i in ok]
e2 = [latencies[i] for i in ok]
tpots = [(latencies[i] - ttfts[i]) / (output_lens[i] - 1) for i in ok if output_lens[i] > 1]
all_tpots = [(latencies[i] - ttfts[i]) / (output_lens[i] - 1) if output_lens[i] > 1 else 0.0 for i in ok]
itl = [g for i in ok for g in itls[i]]
slo = {"ttft": 300.0, "tpot": 40.0}
good = sum(1 for a, b in zip(tt, all_tpots) if slo["ttft"] / 1000 >= a and slo["tpot"] / 1000 >= b)
percentiles = [50, 90, 95, 99, 99.9]
result = {
    "date": "20261123-204900", "endpoint_type": "openai", "backend": "vllm",
    "model_id": "synthetic/llama-shaped", "num_prompts": n, "request_rate": 8.0,
    "burstiness": 1.0, "max_concurrency": None,
    "duration": duration, "completed": len(ok), "failed": n - len(ok),
    "total_input_tokens": sum(input_lens[i] for i in ok), "total_output_tokens": sum(output_lens),
    "request_throughput": len(ok) / duration, "request_goodput": good / duration,
    "output_throughput": sum(output_lens) / duration,
    "total_token_throughput": (sum(input_lens[i] for i in ok) + sum(output_lens)) / duration,
    "input_lens": input_lens, "output_lens": output_lens, "ttfts": ttfts, "itls": itls,
    "latencies": latencies, "start_times": start_times, "errors": errors,
    "generated_texts": ["" for _ in range(n)],
}
for key, values in (("ttft", tt), ("tpot", tpots), ("itl", itl), ("e2el", e2)):
    result[f"mean_{key}_ms"] = float(np.mean(values)) * 1000
    result[f"median_{key}_ms"] = float(np.median(values)) * 1000
    result[f"std_{key}_ms"] = float(np.std(values)) * 1000
    for p in percentiles:
        word = str(int(p)) if int(p) == p else str(p)
        result[f"p{word}_{key}_ms"] = float(np.percentile(values, p)) * 1000
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vllm_detailed_small.json")
with open(out, "w") as f:
    json.dump(result, f, indent=1)
print(f"wrote {out}: {len(ok)} completed, {n - len(ok)} failed, goodput {good} requests")
