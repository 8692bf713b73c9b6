#!/usr/bin/python3
"""PyTorch reference for the loss and gradients of attnc's convolutional seq2seq (model.conv).

Writes tests/reference/convs2s-reference.safetensors, which tests/reference/
pytorch-reference-test.cpp compares attnc's @loss_grad against. The test reads only that file;
Python and PyTorch are needed only to regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-convs2s-reference.py           # from the repo root
    # (or: ... make-convs2s-reference.py -o OTHER.safetensors)

The model is what frontends/yaml/Conv.cpp builds for `model.conv` with `task: seq2seq` (its
@loss: encode, decodeAll, attendAndAdd, readout, weight(), gatedConv; Gehring et al. 2017,
"Convolutional Sequence to Sequence Learning", as fairseq's fconv has it; no dropout). For
src [B, S] (ids, right-padded with 0), src_mask [B, S] (1 at tokens, 0 at padding),
tgt_in [B, T] (bos y1 .. yn, then 0) and tgt_out [B, T] (y1 .. yn eos, then 0), with
e = embedding, C = channels, K = kernel taps, every weight multiplying from the right
(x W + b) and r = sqrt(0.5):

  embed     e_src = encoder.embedding[src] + encoder.positions[:S]  (learned positions,
            added at every position, padding included),
            g = decoder.embedding[tgt_in] + decoder.positions[:T].
  encoder   h = e_src encoder.input.weight + b; per layer l:
              y = conv(h * src_mask[:, :, None]) with encoder.layer{l}.conv (zero padding
                  (K-1)//2 before the first step, K-1-(K-1)//2 after the last),
              h = (GLU(y) + h) r;
            z = h encoder.output.weight + b (the keys), values = z + e_src.
  decoder   h = g decoder.input.weight + b; per layer l (p = decoder.layer{l}):
              a = GLU(conv(h)) with p.conv, causal (K-1 zeros before the first step, none
                  after; the input is not masked),
              d = a p.attention.in.weight + b + g,
              alpha[b, i, :] = softmax_j(d[b, i] . z[b, j]) (no scaling; src_mask == 0
                  filled with -inf first),
              a = (a + (alpha values) p.attention.out.weight + b) r,
              h = (a + h) r.
  readout   logits = (h decoder.output.weight + b) output.weight + output.bias
  loss      F.cross_entropy(logits, tgt_out, ignore_index=0): the mean over non-pad targets.

conv: attnc's weight W [K, C, 2C] and bias [2C] give y[b, t, n] = bias[n] + sum_k sum_c
xpad[b, t + k, c] W[k, c, n]; here that is F.conv1d on the padded input [B, C, T'] with
PyTorch's weight [2C, C, K] = W.permute(2, 1, 0) (not attnc's im2col), then
GLU(y) = F.glu(y, dim=channels) = y[:C] sigmoid(y[C:]). The permutes are of leaves in attnc's
layout, so autograd gives the gradients in attnc's layout directly.

weight_norm: each of the weights encoder.input, encoder.layer{l}.conv, encoder.output,
decoder.input, decoder.layer{l}.conv, decoder.layer{l}.attention.{in,out}, decoder.output and
output is then w = v g / sqrt(sum of v^2 over every axis but the last (kept) + 1e-12) from the
parameters <layer>.weight_v (the weight's shape) and <layer>.weight_g [outputs] instead of
<layer>.weight; the embedding and position tables are never normalised, the biases unchanged.

Parameters (attnc's names and shapes, l over each stack's layers; drawn so that every gradient
is far from trivial, unlike attnc's initialisation with zero biases and unit gains):
    encoder.embedding [Vs, e], decoder.embedding [Vt, e],
    encoder.positions [S, e], decoder.positions [T, e]              N(0, 0.5)
    encoder.input.weight [e, C], decoder.input.weight [e, C]        U(+-1/sqrt(e))
    {encoder,decoder}.layer{l}.conv.weight [K, C, 2C]               U(+-1/sqrt(K C))
    decoder.layer{l}.attention.in.weight [C, e]                     U(+-1/sqrt(C))
    decoder.layer{l}.attention.out.weight [e, C]                    U(+-1/sqrt(e))
    encoder.output.weight [C, e], decoder.output.weight [C, e]      U(+-1/sqrt(C))
    output.weight [e, Vt]                                           U(+-1/sqrt(e))
    <layer>.bias [outputs]                              U(+-1/sqrt(fan_in of its layer))
    with weight_norm, <layer>.weight_v as <layer>.weight, and
    <layer>.weight_g [outputs]                                      1 + U(-0.2, 0.2)
(N(0, 0.5): standard deviation 0.5) from numpy.random.default_rng(SEED + index), rounded to
float32, as are the inputs. The loss and gradients are computed in float64 from those float32
values (the reference), and again in float32 to record how far a float32 evaluation is from
it (metadata only).

File contents (safetensors; F32 unless noted), for each configuration CFG in CONFIGS:
    CFG/<param>        the parameters, named like attnc's attn.param ops
    CFG/src, CFG/tgt_in, CFG/tgt_out   I32 [B, S], [B, T], [B, T]
    CFG/src_mask       [B, S]
    CFG/loss           the float64 loss, rank 0
    CFG/grad:<param>   the float64 gradients, shaped like the parameters
and __metadata__ with "configs", per configuration every spec override the test applies
("CFG.batch", "CFG.layers", "CFG.decoder_layers", "CFG.kernel", "CFG.channels",
"CFG.embedding", "CFG.weight_norm" as "true" / "false"), the importer's sizes
("CFG.source_vocab", "CFG.target_vocab", "CFG.source_length", "CFG.target_length"),
"CFG.float32_max_rel_err" and "generator".
"""

import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_io import rel_err, write_safetensors  # noqa: E402

SEED = 20240916
B, S, T = 3, 7, 6
SOURCE_VOCAB, TARGET_VOCAB = 10, 8      # with the specials pad 0, bos 1, eos 2, unk 3
SRC_LENGTHS = [7, 4, 6]                 # real source tokens per row (the rest is padding)
TGT_LENGTHS = [6, 3, 5]                 # real targets per row in tgt_out (y1 .. yn eos)
PAD, BOS, EOS, FIRST_TOKEN = 0, 1, 2, 4
HALF = math.sqrt(0.5)

DEFAULTS = dict(layers=2, decoder_layers=2, kernel=3, channels=16, embedding=12,
                weight_norm=False)
# New configurations go at the end: configuration i draws from default_rng(SEED + i).
# Every size differs from the others within a configuration where it can, so a swapped
# dimension shows up as a shape mismatch; k1 has no padding in either convolution.
CONFIGS = {
    "k3": {},
    "k5_deep_decoder": dict(layers=1, decoder_layers=3, kernel=5, channels=8, embedding=8),
    "k2_weight_norm": dict(layers=2, decoder_layers=1, kernel=2, channels=8, embedding=10,
                           weight_norm=True),
    "k1": dict(layers=1, decoder_layers=1, kernel=1, channels=8, embedding=6),
}


def full(cfg):
    c = dict(DEFAULTS)
    c.update(cfg)
    return c


NORMAL, UNIFORM, GAIN = "normal", "uniform", "gain"


def param_shapes(c):
    """(name, shape, draw, fan) for every parameter of @loss, in the model's order (the test
    matches them by name, so the order is only this file's)."""
    e, ch, k = c["embedding"], c["channels"], c["kernel"]
    shapes = []

    def weighted(name, shape, fan):
        if c["weight_norm"]:
            shapes.extend([(name + ".weight_v", shape, UNIFORM, fan),
                           (name + ".weight_g", (shape[-1],), GAIN, 0)])
        else:
            shapes.append((name + ".weight", shape, UNIFORM, fan))
        shapes.append((name + ".bias", (shape[-1],), UNIFORM, fan))

    def linear(name, n_in, n_out):
        weighted(name, (n_in, n_out), n_in)

    def conv(name):
        weighted(name, (k, ch, 2 * ch), k * ch)

    shapes.extend([("encoder.embedding", (SOURCE_VOCAB, e), NORMAL, 0),
                   ("encoder.positions", (S, e), NORMAL, 0)])
    linear("encoder.input", e, ch)
    for layer in range(c["layers"]):
        conv(f"encoder.layer{layer}.conv")
    linear("encoder.output", ch, e)
    shapes.extend([("decoder.embedding", (TARGET_VOCAB, e), NORMAL, 0),
                   ("decoder.positions", (T, e), NORMAL, 0)])
    linear("decoder.input", e, ch)
    for layer in range(c["decoder_layers"]):
        p = f"decoder.layer{layer}"
        conv(p + ".conv")
        linear(p + ".attention.in", ch, e)
        linear(p + ".attention.out", e, ch)
    linear("decoder.output", ch, e)
    linear("output", e, TARGET_VOCAB)
    return shapes


def make_inputs(rng, c):
    params = {}
    for name, shape, draw, fan in param_shapes(c):
        if draw == NORMAL:
            v = rng.normal(0.0, 0.5, size=shape)
        elif draw == UNIFORM:
            s = 1.0 / math.sqrt(fan)
            v = rng.uniform(-s, s, size=shape)
        else:
            v = 1.0 + rng.uniform(-0.2, 0.2, size=shape)
        params[name] = v.astype(np.float32)
    src = np.zeros((B, S), np.int32)
    mask = np.zeros((B, S), np.float32)
    tgt_in = np.zeros((B, T), np.int32)
    tgt_out = np.zeros((B, T), np.int32)
    for row in range(B):
        n = SRC_LENGTHS[row]
        src[row, :n] = rng.integers(FIRST_TOKEN, SOURCE_VOCAB, size=n)
        mask[row, :n] = 1.0
        m = TGT_LENGTHS[row]  # y1 .. y_{m-1} eos
        ys = rng.integers(FIRST_TOKEN, TARGET_VOCAB, size=m - 1)
        tgt_out[row, :m - 1] = ys
        tgt_out[row, m - 1] = EOS
        tgt_in[row, 0] = BOS
        tgt_in[row, 1:m] = ys
    return params, dict(src=src, src_mask=mask, tgt_in=tgt_in, tgt_out=tgt_out)


def reference(params, data, c, dtype):
    """(loss, {name: grad}) in `dtype`."""
    leaves = {n: torch.tensor(v, dtype=dtype, requires_grad=True) for n, v in params.items()}
    k = c["kernel"]

    def weight(name):
        """<name>.weight in attnc's layout, or with weight_norm v g / |v| (every axis but the
        outputs')."""
        if not c["weight_norm"]:
            return leaves[name + ".weight"]
        v, g = leaves[name + ".weight_v"], leaves[name + ".weight_g"]
        axes = tuple(range(v.dim() - 1))
        return v * (g / torch.sqrt((v * v).sum(dim=axes, keepdim=True) + 1e-12))

    def linear(name, x):
        return x @ weight(name) + leaves[name + ".bias"]

    def gated_conv(name, x, low, high):
        """GLU(conv(x)): x [B, T, C] -> [B, T + low + high - K + 1, C] via F.conv1d on
        PyTorch's layout (input [B, C, T], weight [2C, C, K] = attnc's permuted)."""
        w = weight(name).permute(2, 1, 0)
        y = F.conv1d(F.pad(x.transpose(1, 2), (low, high)), w, leaves[name + ".bias"])
        return F.glu(y, dim=1).transpose(1, 2)

    src = torch.from_numpy(data["src"]).to(torch.int64)
    mask = torch.from_numpy(data["src_mask"]).to(dtype)
    tgt_in = torch.from_numpy(data["tgt_in"]).to(torch.int64)
    tgt_out = torch.from_numpy(data["tgt_out"]).to(torch.int64)

    # encoder
    e_src = F.embedding(src, leaves["encoder.embedding"]) + leaves["encoder.positions"][:S]
    h = linear("encoder.input", e_src)
    low = (k - 1) // 2
    for layer in range(c["layers"]):
        a = gated_conv(f"encoder.layer{layer}.conv", h * mask[:, :, None], low, k - 1 - low)
        h = (a + h) * HALF
    z = linear("encoder.output", h)
    values = z + e_src

    # decoder
    g = F.embedding(tgt_in, leaves["decoder.embedding"]) + leaves["decoder.positions"][:T]
    h = linear("decoder.input", g)
    padding = (mask == 0)[:, None, :]  # [B, 1, S]
    for layer in range(c["decoder_layers"]):
        p = f"decoder.layer{layer}"
        a = gated_conv(p + ".conv", h, k - 1, 0)
        d = linear(p + ".attention.in", a) + g
        scores = torch.bmm(d, z.transpose(1, 2)).masked_fill(padding, float("-inf"))
        alpha = torch.softmax(scores, dim=-1)
        context = torch.bmm(alpha, values)
        a = (a + linear(p + ".attention.out", context)) * HALF
        h = (a + h) * HALF
    logits = linear("output", linear("decoder.output", h))
    loss = F.cross_entropy(logits.reshape(-1, TARGET_VOCAB), tgt_out.reshape(-1),
                           ignore_index=PAD)
    names = list(leaves)
    grads = torch.autograd.grad(loss, [leaves[n] for n in names])
    return (float(loss.detach()),
            {n: g.detach().to(torch.float64).numpy().copy() for n, g in zip(names, grads)})


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output",
                        default=os.path.join(here, "convs2s-reference.safetensors"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-convs2s-reference.py: torch "
                      f"{torch.__version__}, numpy {np.__version__}, seed {SEED}; "
                      "convolutional seq2seq (fconv) as torch ops on attnc's weights, "
                      "F.conv1d (permuted weights) + F.glu, learned positions, "
                      "F.cross_entropy(ignore_index=0); loss and grad:* in float64, stored "
                      "as float32"),
    }
    for index, (name, cfg) in enumerate(CONFIGS.items()):
        c = full(cfg)
        rng = np.random.default_rng(SEED + index)
        params, data = make_inputs(rng, c)
        loss64, grads64 = reference(params, data, c, torch.float64)
        loss32, grads32 = reference(params, data, c, torch.float32)
        worst = max([abs(loss32 - loss64) / max(abs(loss64), 1e-6)] +
                    [rel_err(grads32[n], grads64[n]) for n in grads64])
        shapes = param_shapes(c)
        assert list(grads64) == [n for n, _, _, _ in shapes], f"{name}: parameter list"
        smallest = min(float(np.max(np.abs(grads64[n]))) for n in grads64)
        assert smallest > 1e-6, f"{name}: a trivial gradient ({smallest:.3g})"
        for n, shape, _, _ in shapes:
            assert params[n].shape == shape and grads64[n].shape == shape, f"{name}: {n}"
            tensors.append((f"{name}/{n}", params[n]))
        for key in ["src", "src_mask", "tgt_in", "tgt_out"]:
            tensors.append((f"{name}/{key}", data[key]))
        tensors.append((f"{name}/loss", np.array(loss64, dtype=np.float32)))
        for n, _, _, _ in shapes:
            tensors.append((f"{name}/grad:{n}", grads64[n].astype(np.float32)))
        meta = {"batch": B, "layers": c["layers"], "decoder_layers": c["decoder_layers"],
                "kernel": c["kernel"], "channels": c["channels"], "embedding": c["embedding"],
                "weight_norm": "true" if c["weight_norm"] else "false",
                "source_vocab": SOURCE_VOCAB, "target_vocab": TARGET_VOCAB,
                "source_length": S, "target_length": T,
                "float32_max_rel_err": f"{worst:.3g}"}
        metadata.update({f"{name}.{k}": str(v) for k, v in meta.items()})
        print(f"{name}: layers={c['layers']} decoder_layers={c['decoder_layers']} "
              f"kernel={c['kernel']} channels={c['channels']} embedding={c['embedding']} "
              f"weight_norm={meta['weight_norm']}: loss {loss64:.9g}, torch float32 vs "
              f"float64 {worst:.3g}, smallest max|grad| {smallest:.3g}")
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
