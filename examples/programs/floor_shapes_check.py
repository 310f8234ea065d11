#!/usr/bin/env python3
"""Checks the floor from GEMM shapes (`sightline analyze TRACE --batch B --context C --format json`
on a PyTorch profiler trace recorded with record_shapes=True, without --model-config) against the
program's own counts (floor_sweep.py --torch-profile FILE writes FILE.truth.json): the decode
step's weight bytes against the model's parameter bytes, its FLOPs against the program's FLOP
count. Prints the figures and a verdict; exit 1 when either differs by more than --tolerance
(relative), or when the report has no floor from shapes.

The tolerance, 0.1%: the shapes see every linear weight (the lm_head is the tied embedding) but not
the RMSNorm weights (33 x 2048 x 2 B = 135 kB of 2.47 GB for the dense model, 0.005%), and the
program's FLOPs leave out the rotary embedding's float matmul (16 x 32 x 2 FLOPs of 1.1e11). The KV
bytes are printed, not checked: the attention's keys and values as the operator reads them, which
transformers' repeat_kv may have expanded from the KV heads to the query heads (x4 for 32/8).

  python3 floor_shapes_check.py REPORT.json kineto.json.truth.json [--tolerance 0.001]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floor_layers_check import Checks, floor_section  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("report")
    ap.add_argument("truth")
    ap.add_argument("--tolerance", type=float, default=0.001)
    args = ap.parse_args()
    truth = json.load(open(args.truth))
    floor = floor_section(args.report)
    if floor is None or "families" not in floor.get("tables", {}):
        print("no floor in the report" + (f": {floor.get('notes')}" if floor else ""))
        return 1
    facts = floor["facts"]
    print(f"weights from: {facts.get('weights_from')}")
    if not str(facts.get("weights_from", "")).startswith("GEMM shapes"):
        print("verdict: the floor is not the one from GEMM shapes")
        return 1
    checks = Checks(args.tolerance)
    check = checks.check

    for r in floor["tables"]["families"]["rows"]:
        print(f"{r['family']}: {r['steps']} steps, wall {r['wall_ns'] / 1e3:.1f} us, floor "
              f"{r['floor_ns'] / 1e3:.1f} us ({r['ratio']:.2f}x, {r['bound']}-bound); "
              + check("weights", r["weight_bytes"], truth["param_bytes"]) + "; "
              + check("FLOPs", r["flops"], truth["flops"])
              + f"; KV read by attention {r['kv_bytes'] / 1e6:.1f} MB (the cache holds "
              f"{truth['kv_read_bytes'] / 1e6:.1f} MB)")
    verdict = "all within tolerance" if checks.bad == 0 else f"{checks.bad} mismatch(es)"
    print("verdict: " + verdict)
    return 1 if checks.bad else 0


if __name__ == "__main__":
    sys.exit(main())
