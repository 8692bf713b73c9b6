#!/usr/bin/env python3
"""Compares two runs of `attnc train`: every step's loss and grad_norm in metrics.jsonl, the
validation losses, and every tensor of last.safetensors. Prints the largest relative
differences and exits 1 when one is above --rtol.

    compare.py RUN_A RUN_B [--rtol 1e-5] [--ignore REGEX]

A metric's relative difference is |a - b| / max(|a|, |b|, 1e-3); a tensor's is
||a - b|| / ||a|| (an element near zero, whose value is mostly rounding, does not decide it).
"""
import argparse
import json
import math
import re
import struct
import sys
from array import array


def metrics(run):
    with open(f"{run}/metrics.jsonl") as f:
        return [json.loads(line) for line in f if line.strip()]


def tensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        values = array("f" if t["dtype"] == "F32" else "i")
        values.frombytes(data[begin:end])
        out[name] = values
    return out, header.get("__metadata__", {})


def rel(a, b, floor):
    return abs(a - b) / max(abs(a), abs(b), floor)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--ignore", help="tensors (and their optimizer state) not compared")
    args = p.parse_args()
    ok = True

    ma, mb = metrics(args.a), metrics(args.b)
    if [r["step"] for r in ma] != [r["step"] for r in mb]:
        print(f"the runs logged different steps: {len(ma)} and {len(mb)} lines")
        return 1
    for key in ("loss", "grad_norm", "valid_loss"):
        worst, where = 0.0, None
        for ra, rb in zip(ma, mb):
            if key in ra or key in rb:
                if (key in ra) != (key in rb):
                    print(f"step {ra['step']}: {key} in one run only")
                    return 1
                d = rel(ra[key], rb[key], 1e-3)
                if d > worst:
                    worst, where = d, ra["step"]
        print(f"{key}: max relative difference {worst:.3g}" + (f" (step {where})" if where else ""))
        ok = ok and worst <= args.rtol

    ta, meta_a = tensors(f"{args.a}/last.safetensors")
    tb, meta_b = tensors(f"{args.b}/last.safetensors")
    if sorted(ta) != sorted(tb):
        print("the checkpoints hold different tensors")
        return 1
    if meta_a.get("step") != meta_b.get("step"):
        print(f"the checkpoints are of steps {meta_a.get('step')} and {meta_b.get('step')}")
        return 1
    worst, where = 0.0, None
    ignored = [n for n in ta if args.ignore and re.search(args.ignore, n)]
    for name in ta:
        if name in ignored:
            continue
        va, vb = ta[name], tb[name]
        norm = math.sqrt(sum(x * x for x in va))
        diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(va, vb)))
        d = diff / norm if norm > 0 else diff
        if d > worst or math.isnan(d):
            worst, where = d, name
    print(f"parameters and optimizer state ({len(ta) - len(ignored)} tensors"
          + (f", {len(ignored)} ignored" if ignored else "")
          + f"): max relative difference {worst:.3g}" + (f" ({where})" if where else ""))
    ok = ok and worst <= args.rtol and not math.isnan(worst)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
