#!/usr/bin/env python3
"""Compares Nsight Compute's block limits with the calculator's predictions, launch by launch.

Usage: compare_ncu_launch.py PLAN.csv NCU_RAW.csv
PLAN.csv is what `validate_occupancy --launch M --plan PLAN.csv` wrote; NCU_RAW.csv is
`ncu --section LaunchStats --section Occupancy --csv --page raw --print-units base` of the same
run (ncu's own lines before the table are skipped). Prints agreement counts per field and, for the
shared-memory carveout the driver picked, the cases where the calculator's guess differs.
"""
import csv
import io
import sys


def read_ncu_raw(path):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, units, data = rows[0], rows[1], rows[2:]
    return [dict(zip(header, r)) for r in data if len(r) == len(header)], dict(zip(header, units))


def num(s):
    s = s.replace(",", "")
    return float(s) if s not in ("", "n/a") else float("nan")


def main():
    plan = list(csv.DictReader(open(sys.argv[1])))
    ncu, units = read_ncu_raw(sys.argv[2])
    if len(plan) != len(ncu):
        print(f"WARNING: {len(plan)} planned launches, {len(ncu)} profiled")
    fields = [
        ("registers", "launch__registers_per_thread", "registers"),
        ("block limit registers", "launch__occupancy_limit_registers", "calc_limit_regs"),
        ("block limit warps", "launch__occupancy_limit_warps", "calc_limit_warps"),
        ("block limit SM", "launch__occupancy_limit_blocks", "calc_limit_sm"),
        ("block limit shared mem", "launch__occupancy_limit_shared_mem", "calc_limit_smem"),
        ("smem config (no preference)", "launch__shared_mem_config_size", "calc_smem_config"),
        ("smem config (preference set)", "launch__shared_mem_config_size", "calc_smem_config"),
        ("theoretical warps", "sm__maximum_warps_avg_per_active_cycle", "calc_active_warps"),
        ("theoretical occupancy %", "sm__maximum_warps_per_active_cycle_pct",
         "calc_occupancy_pct"),
    ]
    agree = {f[0]: 0 for f in fields}
    present = {f[0]: 0 for f in fields}
    smem_given_config_ok = 0
    config_misses = []
    for p, n in zip(plan, ncu):
        for label, metric, col in fields:
            if metric not in n:
                continue
            preference = p["carveout_pct"] != "-1"
            if label.startswith("smem config") and preference != label.endswith("set)"):
                continue
            present[label] += 1
            got, want = num(n[metric]), float(p[col])
            if abs(got - want) <= (0.01 if "%" in label else 0.5):
                agree[label] += 1
            elif label.startswith("smem config"):
                config_misses.append((p, n))
        if "launch__shared_mem_config_size" in n and "launch__occupancy_limit_shared_mem" in n:
            config = num(n["launch__shared_mem_config_size"])
            limit = int(config // int(p["smem_per_block"]))
            smem_given_config_ok += limit == int(num(n["launch__occupancy_limit_shared_mem"]))
    total = len(min(plan, ncu, key=len))
    for label, _, _ in fields:
        print(f"NCU {label:26s} {agree[label]}/{present[label]} launches agree")
    print(f"NCU block limit shared mem at ncu's own carveout: {smem_given_config_ok}/{total}")
    for p, n in config_misses[:30]:
        others = min(int(p["calc_limit_regs"]), int(p["calc_limit_warps"]), int(p["calc_limit_sm"]))
        print(f"  carveout: {p['kernel']} block={p['block']} regs={p['registers']} "
              f"smem/block={p['smem_per_block']} carveout%={p['carveout_pct']} "
              f"others={others} needed={others * int(p['smem_per_block'])} "
              f"calc={p['calc_smem_config']} ncu={n.get('launch__shared_mem_config_size')}")


if __name__ == "__main__":
    main()
