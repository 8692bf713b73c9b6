#!/usr/bin/python3
"""PyTorch side of attn-bench-attention-kernels (tests/bench/attention-kernels.cpp).

Scaled dot-product attention as PyTorch 1.13 composes it (torch.matmul, the mask as an additive
-1e9, torch.softmax, torch.matmul: what nn.MultiheadAttention does inside), forward only or
forward and backward (autograd) of sum(output * g). Run by the benchmark with /usr/bin/python3;
also alone:

    /usr/bin/python3 tests/bench/attention-kernels.py --b 8 --h 8 --t 512 --s 512 --d 64

--data FILE: a safetensors file from the benchmark with q [B, H, T, D], k, v [B, H, S, D] and
g [B, H, T, D]. The reported "loss" is sum(output * g), which the benchmark compares with its
own. Protocol with --serve: as bench_io.time_steps.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import import_torch, parse_args, read_safetensors, time_steps  # noqa: E402


def main():
    a = parse_args(__doc__, batches=1, warmup=2, reps=5, iters=1, b=8, h=8, t=512, s=512, d=64,
                   causal=0, mode=("forward", "backward"))
    np, torch = import_torch(a)
    if a.data:
        d = read_safetensors(a.data, np)
        q, k, v, g = (torch.from_numpy(d[n]) for n in ("q", "k", "v", "g"))
    else:
        q = torch.rand(a.b, a.h, a.t, a.d) * 2 - 1
        k, v = (torch.rand(a.b, a.h, a.s, a.d) * 2 - 1 for _ in range(2))
        g = torch.rand(a.b, a.h, a.t, a.d) * 2 - 1
    backward = a.mode == "backward"
    for x in (q, k, v):
        x.requires_grad_(backward)
    push = None
    if a.causal:
        i = torch.arange(a.t).unsqueeze(1)
        j = torch.arange(a.s).unsqueeze(0)
        push = (j > i + a.s - a.t).float() * -1e9
    scale = 1.0 / a.d ** 0.5

    def step():
        scores = torch.matmul(q, k.transpose(-1, -2)) * scale
        if push is not None:
            scores = scores + push
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        loss = (out * g).sum()
        if backward:
            for x in (q, k, v):
                x.grad = None
            loss.backward()
        return loss

    if backward:
        time_steps(step, a, torch.__version__)
    else:
        with torch.no_grad():
            time_steps(step, a, torch.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
