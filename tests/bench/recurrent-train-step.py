#!/usr/bin/python3
"""PyTorch side of attn-bench-recurrent-train-step (tests/bench/recurrent-train-step.cpp).

One training step of a 1-layer nn.LSTM or nn.GRU (batch_first) + nn.Linear on the last hidden
state, loss = mean((prediction - target)^2), backward, torch.optim.Adam (zeroing the gradients
first, as a training loop must). Run by the benchmark with /usr/bin/python3; also alone:

    /usr/bin/python3 tests/bench/recurrent-train-step.py --cell lstm --threads 1   # random data

--data FILE: a safetensors file from the benchmark with attnc's initial weights in attnc's
row-major layout (rnn.layer0.w_ih [I, G*H], w_hh [H, G*H], and b [4H] for the LSTM or b_ih,
b_hh [3H] for the GRU; output.weight [H, 1], output.bias [1]) and the batches x<k> [B, T, I],
target<k> [B, 1]; step s uses batch (s - 1) % NB. Gate orders agree (LSTM i, f, g, o; GRU r, z,
n), so weights are transposed only. The LSTM has one bias in attnc: torch's bias_hh stays 0 and
is not trained.

Protocol with --serve: after the warm-up it prints "ready TORCH_VERSION FIRST_LOSS
LAST_WARMUP_LOSS", then for each "rep" line on stdin runs --iters steps and prints the seconds
per step; "quit" (or end of input) prints "median SECONDS" and exits. Without --serve it runs
--reps repetitions and prints the median. If torch cannot be imported it prints "error: ..."
and exits with status 3. --precision bf16: the step under torch.autocast('cpu',
dtype=torch.bfloat16) (bench_io.autocast). --device cuda: the same step on the GPU (cuDNN's
LSTM), for scripts/gpu-check.sh, with --json FILE for its median.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import (autocast, import_torch, parse_args, read_safetensors,  # noqa: E402
                      time_training)


def main():
    a = parse_args(__doc__, batches=8, warmup=5, reps=7, iters=10, cell=("lstm", "gru"),
                   length=50, input=64, hidden=256)
    np, torch = import_torch(a)

    Cell = torch.nn.LSTM if a.cell == "lstm" else torch.nn.GRU
    rnn = Cell(input_size=a.input, hidden_size=a.hidden, num_layers=1, batch_first=True)
    head = torch.nn.Linear(a.hidden, 1)
    if a.data:
        d = read_safetensors(a.data, np)
        with torch.no_grad():
            q = "rnn.layer0"
            rnn.weight_ih_l0.copy_(torch.from_numpy(d[q + ".w_ih"].T.copy()))
            rnn.weight_hh_l0.copy_(torch.from_numpy(d[q + ".w_hh"].T.copy()))
            if a.cell == "lstm":
                rnn.bias_ih_l0.copy_(torch.from_numpy(d[q + ".b"]))
                rnn.bias_hh_l0.zero_()
            else:
                rnn.bias_ih_l0.copy_(torch.from_numpy(d[q + ".b_ih"]))
                rnn.bias_hh_l0.copy_(torch.from_numpy(d[q + ".b_hh"]))
            head.weight.copy_(torch.from_numpy(d["output.weight"].T.copy()))
            head.bias.copy_(torch.from_numpy(d["output.bias"]))
        xs = [torch.from_numpy(d[f"x{k}"]) for k in range(a.batches)]
        ts = [torch.from_numpy(d[f"target{k}"]) for k in range(a.batches)]
    else:
        xs = [torch.rand(a.batch, a.length, a.input) * 2 - 1 for _ in range(a.batches)]
        ts = [torch.rand(a.batch, 1) * 2 - 1 for _ in range(a.batches)]
    dev = torch.device(a.device)
    rnn.to(dev)
    head.to(dev)
    xs = [x.to(dev) for x in xs]
    ts = [t.to(dev) for t in ts]
    frozen = "bias_hh_l0" if a.cell == "lstm" else None
    params = [prm for name, prm in rnn.named_parameters() if name != frozen]
    params += list(head.parameters())
    for name, prm in rnn.named_parameters():
        if name == frozen:
            prm.requires_grad_(False)
    opt = torch.optim.Adam(params, lr=a.lr)

    def loss_of(x, target):
        states, _ = rnn(x)
        return torch.mean((head(states[:, -1, :]) - target) ** 2)

    return time_training(
        a, torch, opt, list(zip(xs, ts)), autocast(a, torch, loss_of),
        lambda med: f"PyTorch {torch.__version__} {a.cell} on {a.device}, {a.threads} thread(s): "
                    f"{med * 1e3:.2f} ms/step")


if __name__ == "__main__":
    sys.exit(main())
