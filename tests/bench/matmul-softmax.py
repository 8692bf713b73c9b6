#!/usr/bin/python3
"""PyTorch side of attn-bench-matmul-softmax (tests/bench/matmul-softmax.cpp): softmax(A x B)
on axis 1 as a PyTorch user writes it, torch.softmax(torch.mm(a, b), dim=1). Run by the
benchmark with /usr/bin/python3; also alone:

    /usr/bin/python3 tests/bench/matmul-softmax.py --data FILE

--data FILE: a safetensors file from the benchmark with a and b [N, N]. The reported "loss" is
the sum of the output's first column, which the benchmark compares with its own. Protocol with
--serve: as bench_io.time_steps.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import import_torch, parse_args, read_safetensors, time_steps  # noqa: E402


def main():
    a = parse_args(__doc__, batches=1, warmup=3, reps=15, iters=5)
    np, torch = import_torch(a)
    d = read_safetensors(a.data, np)
    x, w = torch.from_numpy(d["a"]), torch.from_numpy(d["b"])

    def step():
        y = torch.softmax(torch.mm(x, w), dim=1)
        return y[:, 0].sum()

    with torch.no_grad():
        med = time_steps(step, a, torch.__version__)
    if not a.serve:
        print(f"softmax(A x B) {x.shape[0]}^2: {med * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
