#!/usr/bin/env python3
"""Makes a large Kineto trace from a real one by repeating its traceEvents ("tiling"), for reader
benchmarks on real event shapes (names, args, nesting, formatting) rather than generated ones.

Copy k of the events is shifted k periods later in time (period: the trace's span plus 1 ms) and
its correlation ids, External ids and flow ids are offset by k times the largest id of the trace,
so that kernels still link to their own launches. Everything else is copied byte for byte (the
text is edited with regular expressions, not re-serialised), so the file keeps the profiler's
formatting. The header and the keys after traceEvents appear once. Standard library only.

  python3 bench/tile_kineto_json.py --copies 33 \\
      ../shared/traces/kineto_vllm_b200_tp8_rank0.json.gz -o /tmp/vllm_x33.json   # 470 MB
"""
import argparse
import gzip
import json
import re
import sys

TS = re.compile(rb'("ts": *)(-?\d+)')
IDS = re.compile(rb'("(?:correlation|External id|id)": *)(\d+)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("trace", help="a Kineto JSON trace (.json or .json.gz)")
    ap.add_argument("--copies", type=int, required=True)
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rb") as f:
        data = f.read()
    key = re.search(rb'"traceEvents" *: *\[', data)
    if not key:
        sys.exit(f"{args.trace}: no traceEvents array")
    text = data.decode("utf-8")
    # The array's end, found by decoding it (byte offsets equal character offsets only for ASCII).
    char_open = len(data[:key.end() - 1].decode("utf-8"))
    events, char_end = json.JSONDecoder().raw_decode(text, char_open)
    array_end = len(text[:char_end].encode("utf-8"))  # one past the ']'
    body = data[key.end():array_end - 1].rstrip()  # the elements, without the brackets
    lead = body[:len(body) - len(body.lstrip())]  # whitespace before the first element
    body = body.lstrip()

    starts = [e["ts"] for e in events if isinstance(e, dict) and isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in events
            if isinstance(e, dict) and isinstance(e.get("ts"), (int, float))
            and isinstance(e.get("dur", 0), (int, float))]
    period = int(max(ends) - min(starts)) + 1000  # microseconds
    max_id = 0
    for m in IDS.finditer(body):
        max_id = max(max_id, int(m.group(2)))
    id_step = max_id + 1

    with open(args.out, "wb") as out:
        out.write(data[:key.end()])
        for k in range(args.copies):
            if k == 0:
                copy = body
            else:
                shift, offset = k * period, k * id_step
                copy = TS.sub(lambda m: m.group(1) + str(int(m.group(2)) + shift).encode(), body)
                copy = IDS.sub(lambda m: m.group(1) + str(int(m.group(2)) + offset).encode(), copy)
            out.write(lead if k == 0 else b"," + lead)
            out.write(copy)
        out.write(data[array_end - 1 - (len(data[:array_end - 1]) -
                                        len(data[:array_end - 1].rstrip())):])
    print(f"{args.out}: {args.copies} copies of {len(events)} events, period {period} us, "
          f"id step {id_step}", file=sys.stderr)


if __name__ == "__main__":
    main()
