#!/usr/bin/env python3
"""Makes the shipped Hugging Face generate() snapshots from the H200 originals.

  python3 make_hf_samples.py DIR    # DIR holds hf_{eager,static}.pickle and .truth.json, written by
                                    # examples/programs/hf_generate.py --snapshot (4 layers, batch 4,
                                    # 1 call of 16 new tokens; PyTorch 2.11, transformers 5.17)

For each mode it writes, beside this script (gzip, no time stamp, so the bytes are reproducible):
  hf_MODE_h200.pickle.gz        the snapshot, its history from before the model was built
  hf_MODE_h200_late.pickle.gz   the same with the history ring starting at the first generate()
                                call: the entries before it are dropped, as if
                                _record_memory_history had been called after the model was built
                                (the segments, the state at the dump, are untouched)
  hf_MODE_h200.truth.json       the program's truth line, without its pid
Only plain dicts, lists and tuples are read and written (pickle protocol 4, as torch writes it).
Paths that name the machine are rewritten: the program's checkout becomes /app/, Inductor's cache
directory (/tmp/torchinductor_USER) becomes /tmp/torchinductor_user; library paths are kept.
"""
import gzip
import json
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REWRITES = [("/work/main/", "/app/"), ("/tmp/torchinductor_root/", "/tmp/torchinductor_user/")]


def redact(x, done=None):
    """A copy with the paths rewritten that shares what the original shares (torch's snapshot refers
    to one frame dict from many stacks: the pickle's memo keeps it small)."""
    done = {} if done is None else done
    if id(x) in done:
        return done[id(x)][0]
    if isinstance(x, dict):
        y = {redact(k, done): redact(v, done) for k, v in x.items()}
    elif isinstance(x, list):
        y = [redact(v, done) for v in x]
    elif isinstance(x, tuple):
        y = tuple(redact(v, done) for v in x)
    elif isinstance(x, str):
        y = x
        for old, new in REWRITES:
            y = y.replace(old, new)
    else:
        return x
    done[id(x)] = (y, x)  # keeps x alive, so that its id is not reused
    return y


def in_generate(entry):
    return any(f["name"] == "generate" and f["filename"].endswith("generation/utils.py")
               for f in entry.get("frames", []))


def write(snapshot, name):
    data = pickle.dumps(snapshot, protocol=4)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(gzip.compress(data, compresslevel=9, mtime=0))
    print(name, len(data), "bytes,", os.path.getsize(os.path.join(HERE, name)), "gzipped")


def main(src):
    for mode in ("eager", "static"):
        with open(os.path.join(src, f"hf_{mode}.pickle"), "rb") as f:
            snap = redact(pickle.load(f))
        write(snap, f"hf_{mode}_h200.pickle.gz")
        trace = snap["device_traces"][0]
        first = next(i for i, e in enumerate(trace) if in_generate(e))
        late = dict(snap)
        late["device_traces"] = [trace[first:]] + snap["device_traces"][1:]
        print(f"  late: {first} of {len(trace)} entries dropped")
        write(late, f"hf_{mode}_h200_late.pickle.gz")
        with open(os.path.join(src, f"hf_{mode}.truth.json")) as f:
            truth = json.load(f)
        truth.pop("pid", None)
        with open(os.path.join(HERE, f"hf_{mode}_h200.truth.json"), "w") as f:
            f.write(json.dumps(truth) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
