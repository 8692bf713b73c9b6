#!/usr/bin/python3
"""PyTorch side of attn-bench-attention-train-step (tests/bench/attention-train-step.cpp).

One teacher-forced training step of attnc's Bahdanau encoder-decoder (task: seq2seq,
model.rnn: {cell: gru, hidden: He, bidirectional: true}, model.seq2seq.decoder_hidden: Hd,
model.attention: {type: bahdanau}) written the way a PyTorch user writes it, with the decoder
as a Python for-loop over the target positions (as in the PyTorch seq2seq tutorial). The
encoder is bidirectional, so the importer always bridges (initialCarried), also for He == Hd:

    encoder   embedding [Vs, E] -> bidirectional nn.GRU (hidden He) -> memory h [B, S, 2He]
    bridge    s_0 = tanh(W_b [h_fwd_S; h_bwd_1] + b_b)                          [B, Hd]
    keys      U h [B, S, A], once
    each step i (Python loop):
              e_ij = v^T tanh(W s_{i-1} + U h_j); a_i = masked softmax_j(e_i)
              c_i = sum_j a_ij h_j (torch.bmm); s_i = nn.GRUCell([y_{i-1}; c_i], s_{i-1})
    readout   logits = Linear([s_i; c_i]) over all steps at once, cross-entropy (pad 0
              ignored, mean), backward, torch.optim.Adam.

--data FILE: a safetensors file from the benchmark with attnc's initial weights, named and laid
out as attnc's (x @ W with W [in, out]; GRU gates r, z, n as in PyTorch, so weights are only
transposed), and the batches src<k>, src_mask<k>, tgt_in<k>, tgt_out<k> (ids stored as f32);
step s uses batch (s - 1) % NB. Every parameter in the file must be used here (the importer's
names; an unused or missing one is an error). Without --data: random weights and batches.

Protocol (--serve): see bench_io.py. If torch cannot be imported it prints "error: ..." and
exits with status 3.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import (autocast, import_torch, parse_args, read_safetensors,  # noqa: E402
                      seq2seq_batches, seq2seq_loss, time_training, unused_weights)


def main():
    a = parse_args(__doc__, batches=4, warmup=3, reps=5, iters=5, src_len=30, tgt_len=30,
                   src_vocab=1000, tgt_vocab=1000, embed=64, enc_hidden=128, dec_hidden=256,
                   att_dim=256)
    np, torch = import_torch(a)
    import torch.nn as nn
    import torch.nn.functional as F

    E, He, Hd, A = a.embed, a.enc_hidden, a.dec_hidden, a.att_dim
    M = 2 * He  # memory width: both directions side by side

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(a.src_vocab, E)
            self.encoder = nn.GRU(E, He, batch_first=True, bidirectional=True)
            self.bridge = nn.Linear(M, Hd)
            self.key = nn.Linear(M, A, bias=False)     # U
            self.query = nn.Linear(Hd, A, bias=False)  # W
            self.v = nn.Parameter(torch.empty(A))
            self.tgt_embed = nn.Embedding(a.tgt_vocab, E)
            self.cell = nn.GRUCell(E + M, Hd)
            self.out = nn.Linear(Hd + M, a.tgt_vocab)

        def forward(self, src, src_mask, tgt_in):
            memory, h_n = self.encoder(self.src_embed(src))          # [B, S, M], [2, B, He]
            s = torch.tanh(self.bridge(torch.cat([h_n[0], h_n[1]], dim=1)))
            keys = self.key(memory)                                   # [B, S, A]
            pad = src_mask == 0
            ys = self.tgt_embed(tgt_in)                               # [B, T, E]
            features = []
            for i in range(ys.shape[1]):
                e = torch.tanh(self.query(s).unsqueeze(1) + keys) @ self.v   # [B, S]
                alpha = torch.softmax(e.masked_fill(pad, float("-inf")), dim=1)
                c = torch.bmm(alpha.unsqueeze(1), memory).squeeze(1)         # [B, M]
                s = self.cell(torch.cat([ys[:, i], c], dim=1), s)
                features.append(torch.cat([s, c], dim=1))
            return self.out(torch.stack(features, dim=1))             # [B, T, V]

    model = Seq2Seq()
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
            model.src_embed.weight.copy_(t("encoder.embedding"))
            for suffix, q in (("", "encoder.layer0."), ("_reverse", "encoder.layer0.reverse.")):
                getattr(model.encoder, "weight_ih_l0" + suffix).copy_(tt(q + "w_ih"))
                getattr(model.encoder, "weight_hh_l0" + suffix).copy_(tt(q + "w_hh"))
                getattr(model.encoder, "bias_ih_l0" + suffix).copy_(t(q + "b_ih"))
                getattr(model.encoder, "bias_hh_l0" + suffix).copy_(t(q + "b_hh"))
            model.bridge.weight.copy_(tt("bridge.layer0.weight"))
            model.bridge.bias.copy_(t("bridge.layer0.bias"))
            model.key.weight.copy_(tt("attention.key.weight"))
            model.query.weight.copy_(tt("attention.query.weight"))
            model.v.copy_(t("attention.v"))
            model.tgt_embed.weight.copy_(t("decoder.embedding"))
            model.cell.weight_ih.copy_(tt("decoder.layer0.w_ih"))
            model.cell.weight_hh.copy_(tt("decoder.layer0.w_hh"))
            model.cell.bias_ih.copy_(t("decoder.layer0.b_ih"))
            model.cell.bias_hh.copy_(t("decoder.layer0.b_hh"))
            model.out.weight.copy_(tt("decoder.output.weight"))
            model.out.bias.copy_(t("decoder.output.bias"))
        unused = unused_weights(d, used, a)
        if unused:
            print(f"error: attnc parameters without a PyTorch counterpart: {unused}", flush=True)
            return 3
        batches = seq2seq_batches(d, a, torch)
    else:
        with torch.no_grad():
            model.v.uniform_(-A ** -0.5, A ** -0.5)
        B, S, T = a.batch, a.src_len, a.tgt_len
        batches = [(torch.randint(4, a.src_vocab, (B, S)), torch.ones(B, S),
                    torch.randint(4, a.tgt_vocab, (B, T)), torch.randint(4, a.tgt_vocab, (B, T)))
                   for _ in range(a.batches)]

    opt = torch.optim.Adam(model.parameters(), lr=a.lr)

    return time_training(
        a, torch, opt, batches, autocast(a, torch, seq2seq_loss(model, F)),
        lambda med: f"PyTorch {torch.__version__} Bahdanau seq2seq (enc {He} x2, dec {Hd}), "
                    f"{a.threads} thread(s): {med * 1e3:.2f} ms/step")


if __name__ == "__main__":
    sys.exit(main())
