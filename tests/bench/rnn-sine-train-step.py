#!/usr/bin/python3
"""PyTorch side of attn-bench-rnn-sine-train-step (tests/bench/rnn-sine-train-step.cpp).

One training step of models/rnn-sine.yaml in eager PyTorch: nn.RNN(tanh, batch_first) +
nn.Linear on the last state, loss = mean((prediction - target)^2), backward, torch.optim.Adam
(the step also zeroes the gradients, as a training loop must). Run by the benchmark with
/usr/bin/python3 (Debian's python3-torch); it can also run alone:

    /usr/bin/python3 tests/bench/rnn-sine-train-step.py --threads 1        # random data

--data FILE: a safetensors file from the benchmark with attnc's initial weights (attnc's
row-major layout: rnn.layer<k>.w_ax [I, H], w_aa [H, H], b_a [H], output.weight [H, 1],
output.bias [1]) and the batches x<k> [B, T, 1], target<k> [B, 1]; step s uses batch
(s - 1) % NB, as the benchmark does. Without it, weights and batches are random.

Protocol with --serve (used by the benchmark, so that repetitions interleave with attnc's):
after the warm-up it prints "ready TORCH_VERSION FIRST_LOSS LAST_WARMUP_LOSS", then for each
line "rep" on stdin runs --iters steps and prints the seconds per step; "quit" (or end of
input) prints "median SECONDS" and exits. Without --serve it runs --reps repetitions back to
back and prints the median seconds per step. If torch cannot be imported it prints
"error: ..." and exits with status 3.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import read_safetensors, time_steps  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--window", type=int, default=16)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--batches", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--clip-norm", type=float, default=0.0)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--serve", action="store_true")
    a = p.parse_args()

    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"error: {sys.executable} cannot import torch/numpy ({e})", flush=True)
        return 3

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    rnn = torch.nn.RNN(input_size=1, hidden_size=a.hidden, num_layers=a.layers,
                       nonlinearity="tanh", batch_first=True)
    head = torch.nn.Linear(a.hidden, 1)
    if a.data:
        d = read_safetensors(a.data, np)
        with torch.no_grad():
            for k in range(a.layers):
                q = f"rnn.layer{k}"
                getattr(rnn, f"weight_ih_l{k}").copy_(torch.from_numpy(d[q + ".w_ax"].T.copy()))
                getattr(rnn, f"weight_hh_l{k}").copy_(torch.from_numpy(d[q + ".w_aa"].T.copy()))
                getattr(rnn, f"bias_ih_l{k}").copy_(torch.from_numpy(d[q + ".b_a"]))
                getattr(rnn, f"bias_hh_l{k}").zero_()
            head.weight.copy_(torch.from_numpy(d["output.weight"].T.copy()))
            head.bias.copy_(torch.from_numpy(d["output.bias"]))
        xs = [torch.from_numpy(d[f"x{k}"]) for k in range(a.batches)]
        ts = [torch.from_numpy(d[f"target{k}"]) for k in range(a.batches)]
    else:
        xs = [torch.rand(a.batch, a.window, 1) * 2 - 1 for _ in range(a.batches)]
        ts = [torch.rand(a.batch, 1) * 2 - 1 for _ in range(a.batches)]
    # attnc has one bias per layer (b_a); torch's second bias (bias_hh) stays 0 and is not trained.
    params = [prm for name, prm in rnn.named_parameters() if not name.startswith("bias_hh")]
    params += list(head.parameters())
    for name, prm in rnn.named_parameters():
        if name.startswith("bias_hh"):
            prm.requires_grad_(False)
    opt = torch.optim.Adam(params, lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps,
                           weight_decay=a.weight_decay)
    h0 = torch.zeros(a.layers, a.batch, a.hidden)
    step = [0]

    def train_step():
        k = step[0] % a.batches
        step[0] += 1
        opt.zero_grad(set_to_none=True)
        states, _ = rnn(xs[k], h0)
        loss = torch.mean((head(states[:, -1, :]) - ts[k]) ** 2)
        loss.backward()
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip_norm)
        opt.step()
        return loss

    med = time_steps(train_step, a, torch.__version__)
    if not a.serve:
        print(f"PyTorch {torch.__version__}, {a.threads} thread(s): {med * 1e6:.1f} us/step "
              f"(batch {a.batch}, window {a.window}, hidden {a.hidden}, layers {a.layers})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
