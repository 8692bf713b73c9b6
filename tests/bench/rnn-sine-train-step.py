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

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import import_torch, parse_args, read_safetensors, time_training  # noqa: E402


def main():
    a = parse_args(__doc__, batches=8, warmup=20, reps=15, iters=50, window=16, hidden=32,
                   layers=1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, clip_norm=0.0)
    np, torch = import_torch(a)

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

    def loss_of(x, target):
        states, _ = rnn(x, h0)
        return torch.mean((head(states[:, -1, :]) - target) ** 2)

    def clip():
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip_norm)

    return time_training(
        a, torch, opt, list(zip(xs, ts)), loss_of,
        lambda med: f"PyTorch {torch.__version__}, {a.threads} thread(s): {med * 1e6:.1f} us/step "
                    f"(batch {a.batch}, window {a.window}, hidden {a.hidden}, layers {a.layers})",
        after_backward=clip)


if __name__ == "__main__":
    sys.exit(main())
