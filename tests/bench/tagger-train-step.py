#!/usr/bin/python3
"""PyTorch side of attn-bench-tagger-train-step (tests/bench/tagger-train-step.cpp).

One training step of attnc's masked bidirectional tagger (task: tag, model.rnn: {cell: gru,
hidden: H, layers: L, bidirectional: true}) written the way a PyTorch user writes it for
right-padded batches of different lengths:

    embedding [V, E] -> pack_padded_sequence (lengths from src_mask) -> nn.GRU(num_layers=L,
    bidirectional=True) -> pad_packed_sequence -> nn.Linear(2H, tags) at every token ->
    cross-entropy (padding, tag 0, ignored; mean), backward, torch.optim.Adam.

--data FILE: a safetensors file from the benchmark with attnc's initial weights, named and laid
out as attnc's (x @ W with W [in, out]; GRU gates r, z, n as in PyTorch, so weights are only
transposed), and the batches src<k>, src_mask<k>, tags<k> (ids stored as f32); step s uses
batch (s - 1) % NB. Every parameter in the file must be used here. Without --data: random
weights and batches.

Protocol (--serve): see bench_io.py. If torch cannot be imported it prints "error: ..." and
exits with status 3.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import (autocast, import_torch, parse_args, read_safetensors,  # noqa: E402
                      time_training, unused_weights)


def main():
    a = parse_args(__doc__, batches=4, warmup=3, reps=5, iters=5, length=50, vocab=10000,
                   tags=50, embed=128, hidden=256, layers=2)
    np, torch = import_torch(a)
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(a.vocab, a.embed)
            self.rnn = nn.GRU(a.embed, a.hidden, num_layers=a.layers, batch_first=True,
                              bidirectional=True)
            self.out = nn.Linear(2 * a.hidden, a.tags)

        def forward(self, src, src_mask):
            lengths = src_mask.sum(dim=1).long()
            packed = pack_padded_sequence(self.embed(src), lengths, batch_first=True,
                                          enforce_sorted=False)
            h, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True,
                                       total_length=src.shape[1])          # [B, T, 2H]
            return self.out(h)                                              # [B, T, tags]

    model = Tagger()
    if a.data:
        d = read_safetensors(a.data, np)
        used = set()

        def t(name):
            used.add(name)
            return torch.from_numpy(d[name])

        def tt(name):
            used.add(name)
            return torch.from_numpy(d[name].T.copy())

        with torch.no_grad():
            model.embed.weight.copy_(t("embedding"))
            for layer in range(a.layers):
                for suffix, q in (("", f"rnn.layer{layer}."),
                                  ("_reverse", f"rnn.layer{layer}.reverse.")):
                    p = f"_l{layer}{suffix}"
                    getattr(model.rnn, "weight_ih" + p).copy_(tt(q + "w_ih"))
                    getattr(model.rnn, "weight_hh" + p).copy_(tt(q + "w_hh"))
                    getattr(model.rnn, "bias_ih" + p).copy_(t(q + "b_ih"))
                    getattr(model.rnn, "bias_hh" + p).copy_(t(q + "b_hh"))
            model.out.weight.copy_(tt("output.weight"))
            model.out.bias.copy_(t("output.bias"))
        batch_names = {f"{n}{k}" for n in ("src", "src_mask", "tags") for k in range(a.batches)}
        unused = [n for n in unused_weights(d, used, a) if n not in batch_names]
        if unused:
            print(f"error: attnc parameters without a PyTorch counterpart: {unused}", flush=True)
            return 3
        ids = lambda name: torch.from_numpy(d[name]).long()  # noqa: E731
        batches = [(ids(f"src{k}"), torch.from_numpy(d[f"src_mask{k}"]), ids(f"tags{k}"))
                   for k in range(a.batches)]
    else:
        B, T = a.batch, a.length
        batches = []
        for _ in range(a.batches):
            lengths = torch.randint(T // 2, T + 1, (B,))
            mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).float()
            batches.append((torch.randint(4, a.vocab, (B, T)) * mask.long(), mask,
                            torch.randint(1, a.tags, (B, T)) * mask.long()))

    def loss_of(src, src_mask, tags):
        scores = model(src, src_mask)
        return F.cross_entropy(scores.reshape(-1, a.tags), tags.reshape(-1), ignore_index=0)

    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    return time_training(
        a, torch, opt, batches, autocast(a, torch, loss_of),
        lambda med: f"PyTorch {torch.__version__} packed bidirectional GRU tagger "
                    f"({a.layers} x {a.hidden}), {a.threads} thread(s): {med * 1e3:.2f} ms/step")


if __name__ == "__main__":
    sys.exit(main())
