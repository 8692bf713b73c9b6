#!/usr/bin/python3
"""PyTorch side of attn-bench-attention-kernels (tests/bench/attention-kernels.cpp).

--family sdpa: scaled dot-product attention as PyTorch 1.13 composes it (torch.matmul, the mask
as an additive -1e9, torch.softmax, torch.matmul: what nn.MultiheadAttention does inside);
--family additive / local_p: an RNN decoder step's attention (Bahdanau's additive score;
Luong's local-p with its window and Gaussian); forward only or forward and backward
(autograd) of sum(output * g). Run by the benchmark with /usr/bin/python3;
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


def decoder_step(a, np, torch):
    """The RNN decoder's attention for one step: one query per row, as PyTorch composes it.
    additive: e_j = v_a . tanh(q + k_j) (Bahdanau); local_p: e_j = q . k_j inside the window
    |j - p| <= D, the softmax times exp(-(j - p)^2 / (2 (D/2)^2)) (Luong's local-p, p learned).
    q [B, A], k [B, S, A], v [B, S, Dv], g [B, Dv], and va [A] or p [B]."""
    d = read_safetensors(a.data, np)
    q, k, v, g = (torch.from_numpy(d[n]).reshape(d[n].shape[0], -1, d[n].shape[-1])
                  for n in ("q", "k", "v", "g"))
    q, g = q[:, 0, :], g[:, 0, :]
    extra = torch.from_numpy(d["va" if a.family == "additive" else "p"]).reshape(-1)
    backward = a.mode == "backward"
    leaves = (q, k, v, extra)
    for x in leaves:
        x.requires_grad_(backward)
    j = torch.arange(k.shape[1], dtype=torch.float32)
    sigma = a.window / 2.0

    def step():
        if a.family == "additive":
            scores = torch.matmul(torch.tanh(q.unsqueeze(1) + k), extra)  # [B, S]
            weights = torch.softmax(scores, dim=-1)
        else:
            scores = torch.bmm(k, q.unsqueeze(2)).squeeze(2)  # [B, S]
            dist = j.unsqueeze(0) - extra.unsqueeze(1)
            outside = (dist.abs() > a.window).float() * -1e9
            weights = torch.softmax(scores + outside, dim=-1) * torch.exp(
                -dist * dist / (2 * sigma * sigma))
        out = torch.bmm(weights.unsqueeze(1), v).squeeze(1)  # [B, Dv]
        loss = (out * g).sum()
        if backward:
            for x in leaves:
                x.grad = None
            loss.backward()
        return loss

    return step, backward


def main():
    a = parse_args(__doc__, batches=1, warmup=2, reps=5, iters=1, b=8, h=8, t=512, s=512, d=64,
                   causal=0, mode=("forward", "backward"),
                   family=("sdpa", "additive", "local_p"), window=10)
    np, torch = import_torch(a)
    if a.family != "sdpa":
        step, backward = decoder_step(a, np, torch)
    else:
        step, backward = scaled_dot_product(a, np, torch)
    if backward:
        time_steps(step, a, torch.__version__)
    else:
        with torch.no_grad():
            time_steps(step, a, torch.__version__)
    return 0


def scaled_dot_product(a, np, torch):
    """The Transformer's attention as nn.MultiheadAttention computes it inside."""
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

    return step, backward


if __name__ == "__main__":
    sys.exit(main())
