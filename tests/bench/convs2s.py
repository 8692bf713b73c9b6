#!/usr/bin/python3
"""PyTorch side of attn-bench-convs2s (tests/bench/convs2s.cpp).

attnc's convolutional encoder-decoder (task: seq2seq, model.conv; Gehring et al. 2017, as
frontends/yaml/Conv.cpp builds it, no dropout) written the way a PyTorch user writes it:
nn.Embedding for tokens and learned positions, nn.Linear, nn.Conv1d with F.glu, the
multi-step attention as bmm + masked softmax, r = sqrt(0.5):

    encoder  e = E[src] + P[:S]; h = in(e); per block h = (GLU(conv(h * mask)) + h) r;
             z = out(h); values = z + e
    decoder  g = E'[tgt_in] + P'[:T]; h = in'(g); per block
             a = GLU(causal conv(h)); d = att_in(a) + g; alpha = softmax(d z^T) (padding
             masked); a = (a + att_out(alpha values)) r; h = (a + h) r
    logits   output(dec_out(h)); cross-entropy (pad 0 ignored, mean)

One training step: forward, backward, torch.optim.Adam.

--precision bf16: the step under torch.autocast('cpu', dtype=torch.bfloat16) (bench_io.autocast).

--data FILE: a safetensors file from the benchmark with attnc's initial weights, named and laid
out as attnc's (x @ W with W [in, out]; a convolution's W [K, C, 2C] is nn.Conv1d's weight
permuted (2, 1, 0)), and the batches src<k>, src_mask<k>, tgt_in<k>, tgt_out<k> (ids stored
as f32). Every parameter in the file must be used here. Protocol (--serve): see bench_io.py.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import (autocast, import_torch, parse_args, read_safetensors,  # noqa: E402
                      seq2seq_batches, seq2seq_loss, time_training, unused_weights)


def main():
    a = parse_args(__doc__, batches=4, warmup=2, reps=5, iters=3, src_len=30, tgt_len=30,
                   vocab=1000, embedding=256, channels=256, layers=4, kernel=3)
    np, torch = import_torch(a)
    import torch.nn as nn
    import torch.nn.functional as F

    e, c, k = a.embedding, a.channels, a.kernel
    r = math.sqrt(0.5)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(a.vocab, e)
            self.src_pos = nn.Embedding(a.src_len, e)
            self.tgt_embed = nn.Embedding(a.vocab, e)
            self.tgt_pos = nn.Embedding(a.tgt_len, e)
            self.enc_in, self.enc_out = nn.Linear(e, c), nn.Linear(c, e)
            self.enc_convs = nn.ModuleList(nn.Conv1d(c, 2 * c, k) for _ in range(a.layers))
            self.dec_in, self.dec_out = nn.Linear(e, c), nn.Linear(c, e)
            self.dec_convs = nn.ModuleList(nn.Conv1d(c, 2 * c, k) for _ in range(a.layers))
            self.att_in = nn.ModuleList(nn.Linear(c, e) for _ in range(a.layers))
            self.att_out = nn.ModuleList(nn.Linear(e, c) for _ in range(a.layers))
            self.out = nn.Linear(e, a.vocab)

        def forward(self, src, src_mask, tgt_in):
            s, t = src.shape[1], tgt_in.shape[1]
            emb = self.src_embed(src) + self.src_pos.weight[:s]
            h = self.enc_in(emb).transpose(1, 2)  # [B, C, S]: Conv1d's layout
            keep = src_mask[:, None, :]
            low = (k - 1) // 2
            for conv in self.enc_convs:
                h = (F.glu(conv(F.pad(h * keep, (low, k - 1 - low))), dim=1) + h) * r
            z = self.enc_out(h.transpose(1, 2))  # [B, S, e]
            values = z + emb
            bias = torch.zeros_like(src_mask).masked_fill(src_mask == 0, float("-inf"))[:, None]
            g = self.tgt_embed(tgt_in) + self.tgt_pos.weight[:t]
            h = self.dec_in(g).transpose(1, 2)  # [B, C, T]
            for conv, att_in, att_out in zip(self.dec_convs, self.att_in, self.att_out):
                act = F.glu(conv(F.pad(h, (k - 1, 0))), dim=1).transpose(1, 2)  # [B, T, C]
                d = att_in(act) + g
                alpha = torch.softmax(torch.bmm(d, z.transpose(1, 2)) + bias, -1)
                act = (act + att_out(torch.bmm(alpha, values))) * r
                h = (act.transpose(1, 2) + h) * r
            return self.out(self.dec_out(h.transpose(1, 2)))

    model = Model()
    if not a.data:
        print("error: --data is required", flush=True)
        return 3
    w = read_safetensors(a.data, np)
    used = set()

    def t(name):
        used.add(name)
        return torch.from_numpy(w[name])

    def linear(lin, name):
        lin.weight.copy_(t(name + ".weight").T)
        lin.bias.copy_(t(name + ".bias"))

    def conv(cv, name):
        cv.weight.copy_(t(name + ".weight").permute(2, 1, 0))
        cv.bias.copy_(t(name + ".bias"))

    with torch.no_grad():
        model.src_embed.weight.copy_(t("encoder.embedding"))
        model.src_pos.weight.copy_(t("encoder.positions"))
        model.tgt_embed.weight.copy_(t("decoder.embedding"))
        model.tgt_pos.weight.copy_(t("decoder.positions"))
        linear(model.enc_in, "encoder.input")
        linear(model.enc_out, "encoder.output")
        linear(model.dec_in, "decoder.input")
        linear(model.dec_out, "decoder.output")
        linear(model.out, "output")
        for l in range(a.layers):
            conv(model.enc_convs[l], f"encoder.layer{l}.conv")
            conv(model.dec_convs[l], f"decoder.layer{l}.conv")
            linear(model.att_in[l], f"decoder.layer{l}.attention.in")
            linear(model.att_out[l], f"decoder.layer{l}.attention.out")
    unused = unused_weights(w, used, a)
    if unused:
        print(f"error: attnc parameters without a PyTorch counterpart: {unused}", flush=True)
        return 3
    batches = seq2seq_batches(w, a, torch)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    return time_training(
        a, torch, opt, batches, autocast(a, torch, seq2seq_loss(model, F)),
        lambda med: f"PyTorch {torch.__version__} conv seq2seq, {a.threads} thread(s): "
                    f"{med * 1e3:.2f} ms/step")


if __name__ == "__main__":
    sys.exit(main())
