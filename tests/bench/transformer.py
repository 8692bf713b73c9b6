#!/usr/bin/python3
"""PyTorch side of attn-bench-transformer (tests/bench/transformer.cpp).

attnc's Transformer encoder-decoder (task: seq2seq, model.transformer: post-norm, relu,
sinusoidal positions, no dropout) written the way a PyTorch user writes it, around
torch.nn.Transformer(batch_first=True):

    x = src_embed[src] * sqrt(d) + PE[:S];  y = tgt_embed[tgt_in] * sqrt(d) + PE[:T]
    out = nn.Transformer(x, y, tgt_mask=causal, src/memory_key_padding_mask=src_mask == 0)
    logits = Linear(out); cross-entropy (pad 0 ignored, mean)

--mode train: one training step (forward, backward, torch.optim.Adam).
--mode train --precision bf16: the same step under torch.autocast('cpu', dtype=torch.bfloat16),
    PyTorch's mixed precision (the products in bf16, the loss, the weights and Adam in f32).
--mode greedy-cached --precision int8: the cached loop with every decoder projection (attention's
    q/k/v and output, feed-forward, output layer) through PyTorch's dynamic int8 linear, what
    torch.ao.quantization.quantize_dynamic gives nn.Linear (fbgemm, or oneDNN where PyTorch
    has no fbgemm: the weight quantised per output channel once and prepacked, the rows
    quantised per call); the encoder stays f32.
--mode greedy: greedy decoding of --decode-tokens tokens for the first batch's sources, in
    eval mode under torch.no_grad(): the encoder once, then for every new token the decoder
    over the whole prefix (nn.Transformer has no cache) and the output layer at the last
    position. Its "loss" in the protocol is the sum of the generated token ids, which the C++
    side compares with its own.
--mode greedy-cached: the same decoding with a key/value cache, the loop a PyTorch user
    writes for fast decoding: the cross-attention keys and values of the memory once per
    layer, and per new token each decoder layer run on that token alone, its self-attention
    keys and values appended to the layer's cache (nn.Transformer's own weights, the same
    post-norm layer formulas).

Without --data (--mode train only): PyTorch's initial weights and random full-length batches;
--device cuda runs the step on the GPU (scripts/gpu-check.sh), --json FILE writes its median.

--data FILE: a safetensors file from the benchmark with attnc's initial weights, named and laid
out as attnc's (x @ W with W [in, out]; nn.MultiheadAttention's in_proj_weight holds the rows
[W_q^T; W_k^T; W_v^T]), and the batches src<k>, src_mask<k>, tgt_in<k>, tgt_out<k> (ids stored
as f32). Every parameter in the file must be used here. Protocol (--serve): see bench_io.py.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_io import (autocast, import_torch, parse_args, read_safetensors,  # noqa: E402
                      seq2seq_batches, seq2seq_loss, time_steps, time_training, unused_weights)


def main():
    a = parse_args(__doc__, batches=4, warmup=2, reps=5, iters=3, src_len=64, tgt_len=64,
                   vocab=1000, d_model=256, heads=4, ffn=1024, layers=2, decode_tokens=32,
                   mode=("train", "greedy", "greedy-cached"))
    np, torch = import_torch(a)
    import torch.nn as nn
    import torch.nn.functional as F

    d = a.d_model

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(a.vocab, d)
            self.tgt_embed = nn.Embedding(a.vocab, d)
            self.transformer = nn.Transformer(d, a.heads, a.layers, a.layers, a.ffn, dropout=0.0,
                                              batch_first=True)
            self.out = nn.Linear(d, a.vocab)
            n = max(a.src_len, a.tgt_len)
            pos = torch.arange(n, dtype=torch.float32)[:, None]
            div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
            pe = torch.zeros(n, d)
            pe[:, 0::2] = torch.sin(pos * div)
            pe[:, 1::2] = torch.cos(pos * div)
            self.register_buffer("pe", pe)

        def encode(self, src, pad):
            x = self.src_embed(src) * math.sqrt(d) + self.pe[:src.shape[1]]
            return self.transformer.encoder(x, src_key_padding_mask=pad)

        def decode(self, memory, pad, tgt_in):
            t = tgt_in.shape[1]
            y = self.tgt_embed(tgt_in) * math.sqrt(d) + self.pe[:t]
            causal = self.transformer.generate_square_subsequent_mask(t).to(y.device)
            out = self.transformer.decoder(y, memory, tgt_mask=causal,
                                           memory_key_padding_mask=pad)
            return self.out(out)

        def forward(self, src, src_mask, tgt_in):
            pad = src_mask == 0
            return self.decode(self.encode(src, pad), pad, tgt_in)

    model = Model()
    if not a.data:
        if a.mode != "train":
            print("error: --data is required", flush=True)
            return 3
        # Alone (scripts/gpu-check.sh): PyTorch's own initial weights, random batches of full
        # length (ids from 3: 0 is padding, 1 and 2 bos and eos).
        def ids(n):
            return torch.randint(3, a.vocab, (a.batch, n))
        batches = [(ids(a.src_len), torch.ones(a.batch, a.src_len), ids(a.tgt_len),
                    ids(a.tgt_len)) for _ in range(a.batches)]
        return train(a, torch, F, model, batches)
    if a.device != "cpu" and a.mode != "train":
        print("error: --device cuda times --mode train only", flush=True)
        return 3
    w = read_safetensors(a.data, np)
    used = set()

    def t(name):
        used.add(name)
        return torch.from_numpy(w[name])

    def tt(name):
        used.add(name)
        return torch.from_numpy(w[name].T.copy())

    def attention(mha, prefix):
        mha.in_proj_weight.copy_(torch.cat([tt(f"{prefix}.{p}.weight") for p in "qkv"]))
        mha.in_proj_bias.copy_(torch.cat([t(f"{prefix}.{p}.bias") for p in "qkv"]))
        mha.out_proj.weight.copy_(tt(f"{prefix}.out.weight"))
        mha.out_proj.bias.copy_(t(f"{prefix}.out.bias"))

    def linear(lin, name):
        lin.weight.copy_(tt(name + ".weight"))
        lin.bias.copy_(t(name + ".bias"))

    def norm(ln, name):
        ln.weight.copy_(t(name + ".weight"))
        ln.bias.copy_(t(name + ".bias"))

    with torch.no_grad():
        model.src_embed.weight.copy_(t("encoder.embedding"))
        model.tgt_embed.weight.copy_(t("decoder.embedding"))
        for l, layer in enumerate(model.transformer.encoder.layers):
            p = f"encoder.layer{l}"
            attention(layer.self_attn, p + ".self_attn")
            linear(layer.linear1, p + ".linear1")
            linear(layer.linear2, p + ".linear2")
            norm(layer.norm1, p + ".norm1")
            norm(layer.norm2, p + ".norm2")
        norm(model.transformer.encoder.norm, "encoder.norm")
        for l, layer in enumerate(model.transformer.decoder.layers):
            p = f"decoder.layer{l}"
            attention(layer.self_attn, p + ".self_attn")
            attention(layer.multihead_attn, p + ".cross_attn")
            linear(layer.linear1, p + ".linear1")
            linear(layer.linear2, p + ".linear2")
            for k in (1, 2, 3):
                norm(getattr(layer, f"norm{k}"), f"{p}.norm{k}")
        norm(model.transformer.decoder.norm, "decoder.norm")
        linear(model.out, "output")
    unused = unused_weights(w, used, a)
    if unused:
        print(f"error: attnc parameters without a PyTorch counterpart: {unused}", flush=True)
        return 3
    batches = seq2seq_batches(w, a, torch)

    if a.mode == "greedy-cached":
        model.eval()
        src, src_mask = batches[0][0], batches[0][1]
        heads = a.heads
        dh = d // heads
        lin = F.linear
        if a.precision == "int8":
            # fbgemm where this PyTorch has it; Debian's has oneDNN's (the library attnc uses)
            engines = torch.backends.quantized.supported_engines
            torch.backends.quantized.engine = next(e for e in ("fbgemm", "x86", "onednn")
                                                   if e in engines)
            packed = {}  # (address, shape) of a weight -> its prepacked int8 form

            def lin(x, w, b):
                key = (w.data_ptr(), tuple(w.shape))
                if key not in packed:
                    w = w.detach().contiguous()
                    scales = (w.abs().amax(1) / 127).clamp(min=1e-12).double()
                    zeros = torch.zeros(w.shape[0], dtype=torch.long)
                    wq = torch.quantize_per_channel(w, scales, zeros, 0, torch.qint8)
                    packed[key] = torch.ops.quantized.linear_prepack(wq, b.detach())
                y = torch.ops.quantized.linear_dynamic(x.reshape(-1, x.shape[-1]), packed[key])
                return y.reshape(*x.shape[:-1], y.shape[-1])

        def split(x):  # [B, L, d] -> [B, heads, L, dh]
            return x.view(x.shape[0], x.shape[1], heads, dh).transpose(1, 2)

        def attend(mha, q, k, v, bias):
            # q [B, h, 1, dh], k and v [B, h, S, dh], bias [B, 1, 1, S] or None
            scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
            if bias is not None:
                scores = scores + bias
            out = torch.softmax(scores, -1) @ v
            out = out.transpose(1, 2).reshape(q.shape[0], 1, d)
            return lin(out, mha.out_proj.weight, mha.out_proj.bias)

        def greedy_cached():
            with torch.no_grad():
                pad = src_mask == 0
                memory = model.encode(src, pad)
                bias = torch.zeros(pad.shape).masked_fill(pad, float("-inf"))[:, None, None, :]
                layers = model.transformer.decoder.layers
                cross = []  # per layer: the memory's keys and values
                for layer in layers:
                    w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
                    k = lin(memory, w[d:2 * d], b[d:2 * d])
                    v = lin(memory, w[2 * d:], b[2 * d:])
                    cross.append((split(k), split(v)))
                cache = [None] * len(layers)  # per layer: (keys, values) of the prefix
                tok = torch.full((src.shape[0], 1), 1, dtype=torch.long)  # bos
                total = 0
                for t in range(a.decode_tokens):
                    x = model.tgt_embed(tok) * math.sqrt(d) + model.pe[t:t + 1]
                    for l, layer in enumerate(layers):
                        sa = layer.self_attn
                        q, k, v = lin(x, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1)
                        q, k, v = split(q), split(k), split(v)
                        if cache[l] is not None:
                            k = torch.cat([cache[l][0], k], 2)
                            v = torch.cat([cache[l][1], v], 2)
                        cache[l] = (k, v)
                        x = layer.norm1(x + attend(sa, q, k, v, None))
                        ca = layer.multihead_attn
                        q = split(lin(x, ca.in_proj_weight[:d], ca.in_proj_bias[:d]))
                        x = layer.norm2(x + attend(ca, q, cross[l][0], cross[l][1], bias))
                        ff = lin(torch.relu(lin(x, layer.linear1.weight, layer.linear1.bias)),
                                 layer.linear2.weight, layer.linear2.bias)
                        x = layer.norm3(x + ff)
                    y = model.transformer.decoder.norm(x)
                    logits = lin(y, model.out.weight, model.out.bias)[:, -1]
                    tok = logits.argmax(-1, keepdim=True)
                    total += int(tok.sum())
                return torch.tensor(float(total), dtype=torch.float64)

        med = time_steps(greedy_cached, a, torch.__version__)
        if not a.serve:
            print(f"PyTorch {torch.__version__} cached greedy decoding ({a.precision}), "
                  f"{a.threads} thread(s): "
                  f"{med * 1e3:.2f} ms")
        return 0

    if a.mode == "greedy":
        model.eval()
        src, src_mask = batches[0][0], batches[0][1]

        def greedy():
            with torch.no_grad():
                pad = src_mask == 0
                memory = model.encode(src, pad)
                ys = torch.full((src.shape[0], 1), 1, dtype=torch.long)  # bos
                for _ in range(a.decode_tokens):
                    logits = model.decode(memory, pad, ys)[:, -1]
                    ys = torch.cat([ys, logits.argmax(-1, keepdim=True)], dim=1)
                return ys[:, 1:].sum().double()

        med = time_steps(greedy, a, torch.__version__)
        if not a.serve:
            print(f"PyTorch {torch.__version__} greedy decoding, {a.threads} thread(s): "
                  f"{med * 1e3:.2f} ms")
        return 0

    return train(a, torch, F, model, batches)


def train(a, torch, F, model, batches):
    """Times training steps (--mode train) on a.device: forward, backward, Adam."""
    dev = torch.device(a.device)
    model.to(dev)
    batches = [tuple(x.to(dev) for x in batch) for batch in batches]
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    return time_training(
        a, torch, opt, batches, autocast(a, torch, seq2seq_loss(model, F)),
        lambda med: f"PyTorch {torch.__version__} Transformer on {a.device}, "
                    f"{a.threads} thread(s): {med * 1e3:.2f} ms/step")


if __name__ == "__main__":
    sys.exit(main())
