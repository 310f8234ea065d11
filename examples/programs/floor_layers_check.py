#!/usr/bin/env python3
"""Checks the floor's per-layer table (`sightline analyze --model-config ... --format json`) against
the program's own per-layer bytes (floor_sweep.py --layer-ranges writes layers.json): each decoder
layer's weight bytes read and KV bytes (read + written), and the lm_head's bytes. Prints one line
per layer and a verdict; exit 1 when a figure differs by more than --tolerance (relative), or when
a layer of the program is missing from the table.

  python3 floor_layers_check.py REPORT.json layers.json [--tolerance 0.001]
"""
import argparse
import json
import sys


class Checks:
    """Relative comparisons against the program's figures, counting those beyond the tolerance
    (floor_shapes_check.py uses it too)."""

    def __init__(self, tolerance):
        self.tolerance = tolerance
        self.bad = 0

    def check(self, name, got, want):
        rel = abs(got - want) / max(want, 1)
        ok = rel <= self.tolerance
        self.bad += not ok
        return f"{name} {got:.4g} vs {want:.4g} ({rel * 100:.3f}%){'' if ok else ' MISMATCH'}"


def floor_section(report_path):
    """The floor section of a `sightline analyze --format json` report; None without one."""
    floor = [s for s in json.load(open(report_path))["sections"] if s["key"] == "floor"]
    return floor[0] if floor else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("report")
    ap.add_argument("layers")
    ap.add_argument("--tolerance", type=float, default=0.001)
    args = ap.parse_args()
    truth = json.load(open(args.layers))
    floor = floor_section(args.report)
    if floor is None or "layers" not in floor.get("tables", {}):
        print("no per-layer table in the report")
        return 1
    rows = {r["part"]: r for r in floor["tables"]["layers"]["rows"]}
    checks = Checks(args.tolerance)
    check = checks.check
    bad = 0

    for layer in truth["layers"]:
        name = f"layer {layer['layer']}"
        r = rows.get(name)
        if r is None:
            print(f"{name}: not in the table")
            bad += 1
            continue
        kv = layer["kv_read_bytes"] + layer["kv_write_bytes"]
        print(f"{name}: kernels/step {r['kernels']}, span {r['span_ns'] / 1e3:.1f} us, floor "
              f"{r['floor_ns'] / 1e3:.2f} us, {r['ratio']:.1f}x; "
              + check("weights", r["weight_bytes"], layer["weight_bytes"]) + "; "
              + check("KV", r["kv_bytes"], kv))
    head = rows.get("head")
    if head is not None:
        # The head's floor counts the final norm too (hidden x 2 bytes): within the tolerance.
        print("head: " + check("weights", head["weight_bytes"], truth["lm_head_bytes"]))
    bad += checks.bad
    print("verdict: " + ("all within tolerance" if bad == 0 else f"{bad} mismatch(es)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
