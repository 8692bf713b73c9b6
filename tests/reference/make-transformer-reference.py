#!/usr/bin/python3
"""PyTorch reference for the loss and gradients of attnc's Transformer (task: seq2seq).

Writes tests/reference/transformer-reference.safetensors, which
tests/reference/pytorch-reference-test.cpp (ctest: attn-pytorch-reference-tests, suite
Transformer/TransformerPyTorchReference) compares attnc's @loss_grad against. The test reads
only that file; Python and PyTorch are needed only to regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-transformer-reference.py       # from the repo root
    # (or: ... make-transformer-reference.py -o OTHER.safetensors)

The model is what frontends/yaml/Transformer.cpp's encoderDecoder() builds for
`model.transformer` with `task: seq2seq` (encode, decodeAll, encoderStack, decoderStack,
residual, outputLayer; sinusoidal positions, no dropout, no shared or tied embeddings), and
here it is torch.nn.Transformer itself. For src [B, S] (ids, right-padded with 0),
src_mask [B, S] (1 at tokens, 0 at padding), tgt_in [B, T] (bos y1 .. yn, then 0) and
tgt_out [B, T] (y1 .. yn eos, then 0), with d = d_model:

  embed     x = encoder.embedding[src] sqrt(d) + PE[:S],
            y = decoder.embedding[tgt_in] sqrt(d) + PE[:T],
            PE(p, 2i) = sin(p exp(-2i ln(10000) / d)), PE(p, 2i+1) = cos(same) (constants).
  stacks    torch.nn.Transformer(d_model=d, nhead=heads, num_encoder_layers=layers,
            num_decoder_layers=layers, dim_feedforward=ffn, dropout=0, activation=relu|gelu,
            batch_first=True, norm_first=(norm == "pre")) in training mode (so PyTorch's
            inference fast path is never taken), called as
            transformer(x, y, tgt_mask=causal [T, T], src_key_padding_mask=(src_mask == 0),
                        memory_key_padding_mask=(src_mask == 0)).
            No target padding mask: the causal mask keeps real positions from seeing the
            padding after them, and the padded positions' losses are ignored. Every sublayer
            is  post: x = LayerNorm(x + f(x)),  pre: x = x + f(LayerNorm(x)); the encoder
            layers are self-attention (norm1), feed-forward (norm2); the decoder layers causal
            self-attention (norm1), cross attention over the encoder's output (norm2),
            feed-forward (norm3); both stacks end with a LayerNorm (eps 1e-5 throughout),
            nn.Transformer's encoder.norm / decoder.norm, which attnc has under the same names.
            Attention: softmax(q k^T / sqrt(d / heads)) v per head, head h the columns
            [h d/heads, (h+1) d/heads) of the projections. feed-forward:
            act(x linear1.weight + b1) linear2.weight + b2, act = relu or exact gelu.
  readout   logits = out output.weight + output.bias
  loss      F.cross_entropy(logits, tgt_out, ignore_index=0): the mean over non-pad targets.

The configuration alibi_softcap_window sets model.transformer.attention (score_mod, softcap,
mask, sliding_window and a learned slope per head in every self-attention layer, attnc's
{encoder,decoder}.layer{l}.self_attn.slope [heads], drawn U(0.2, 0.8)): there every layer's self_attn
is ModAttention, the same projections with the score and mask written out in torch; cross
attention stays nn.MultiheadAttention. Its softcap is not shift-invariant, so its key biases
have gradients (the test measures them as any other).

attnc's weights multiply from the right (x W + b), PyTorch's from the left (x W^T + b), so:
in_proj_weight [3d, d] = [q.weight^T; k.weight^T; v.weight^T], in_proj_bias = [q.bias; k.bias;
v.bias], out_proj.weight = out.weight^T, linear{1,2}.weight = linear{1,2}.weight^T (attnc's
encoder.layer{l}.self_attn.* is nn's encoder.layers.{l}.self_attn.*, decoder.layer{l}.
cross_attn.* is decoder.layers.{l}.multihead_attn.*). The module gets these views of leaves in
attnc's layout through torch.nn.utils.stateless.functional_call, so autograd gives the
gradients in attnc's layout directly.

Parameters (attnc's names and shapes, l = 0 .. layers-1; drawn so that every gradient is
far from trivial, unlike attnc's initialisation with zero biases and unit norms):
    encoder.embedding [Vs, d], decoder.embedding [Vt, d]           N(0, 1/d)
    {encoder,decoder}.layer{l}.{self_attn,cross_attn}.{q,k,v,out}.weight [d, d],
        .bias [d] (cross_attn: decoder only)                        U(+-1/sqrt(d))
    {encoder,decoder}.layer{l}.linear1.weight [d, ffn], .bias [ffn] U(+-1/sqrt(d))
    {encoder,decoder}.layer{l}.linear2.weight [ffn, d], .bias [d]   U(+-1/sqrt(ffn))
    {encoder,decoder}.layer{l}.norm{1,2[,3]}.weight, encoder.norm.weight, decoder.norm.weight
        [d]                                                         1 + U(-0.2, 0.2)
    the norms' .bias [d]                                            U(-0.2, 0.2)
    output.weight [d, Vt], output.bias [Vt]                         U(+-1/sqrt(d))
from numpy.random.default_rng(SEED + index), rounded to float32, as are the inputs. The loss
and gradients are computed in float64 from those float32 values (the reference), and again in
float32 to record how far a float32 evaluation is from it (metadata only).

The attention key biases' gradients are zero for every input: b_k adds q . b_k to all of a
query's scores, which the softmax cancels. The float64 reference holds ~1e-19 there, and the
test's usual 1e-6 floor would measure float32 rounding (PyTorch's own float32 evaluation is
~1e-9 there, 8e-4 "relative"), so the test (Reference::zeroGrads) and this script measure
grad:*.k.bias against the scale of the same projection's grad:*.k.weight; the script checks
that the reference is below 1e-10 of it.

File contents (safetensors; F32 unless noted), for each configuration CFG in CONFIGS:
    CFG/<param>        the parameters, named like attnc's attn.param ops
    CFG/src, CFG/tgt_in, CFG/tgt_out   I32 [B, S], [B, T], [B, T]
    CFG/src_mask       [B, S]
    CFG/loss           the float64 loss, rank 0
    CFG/grad:<param>   the float64 gradients, shaped like the parameters
and __metadata__ with "configs", per configuration every spec override the test applies
("CFG.batch", "CFG.layers", "CFG.d_model", "CFG.heads", "CFG.ffn", "CFG.norm",
"CFG.activation"), the importer's sizes ("CFG.source_vocab", "CFG.target_vocab",
"CFG.source_length", "CFG.target_length"), "CFG.float32_max_rel_err" and "generator".
"""

import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.utils.stateless import functional_call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_io import rel_err, write_safetensors  # noqa: E402

SEED = 20240915
B, S, T = 3, 7, 6
SOURCE_VOCAB, TARGET_VOCAB = 10, 8      # with the specials pad 0, bos 1, eos 2, unk 3
SRC_LENGTHS = [7, 4, 6]                 # real source tokens per row (the rest is padding)
TGT_LENGTHS = [6, 3, 5]                 # real targets per row in tgt_out (y1 .. yn eos)
PAD, BOS, EOS, FIRST_TOKEN = 0, 1, 2, 4

DEFAULTS = dict(layers=2, d_model=64, heads=4, ffn=32, norm="post", activation="relu")
# New configurations go at the end: configuration i draws from default_rng(SEED + i).
# pre_gelu is narrower (d_model 32, 2 heads of 16, ffn 48) to keep the file small.
CONFIGS = {
    "post": dict(norm="post", activation="relu"),
    "pre": dict(norm="pre", activation="relu"),
    "pre_gelu": dict(norm="pre", activation="gelu", d_model=32, heads=2, ffn=48),
    # model.transformer.attention: ALiBi with a learned slope per head and layer, softcapped, in
    # a sliding window of 4 with a mask expression on top (ModAttention below).
    "alibi_softcap_window": dict(norm="pre", activation="relu", d_model=32, heads=2, ffn=32,
                                 attention=dict(score_mod='"score - slope[h] * abs(i - j)"',
                                                softcap="2.5",
                                                mask='"j == 0 or i - j != 1"',
                                                sliding_window="4",
                                                params="{slope: {shape: [heads], init: alibi}}")),
    # T5's relative bias: a learned table of 7 values per head and layer, read at the clamped
    # distance i - j (ModAttention's "table").
    "relative_table": dict(norm="pre", activation="relu", d_model=32, heads=2, ffn=32,
                           mod="table",
                           attention=dict(score_mod='"score + rel[h, min(max(i - j, -3), 3) + 3]"',
                                          params="{rel: {shape: [heads, 7], init: 0}}")),
}
TABLE_RADIUS = 3  # relative_table's columns: distances -3 .. 3


def full(cfg):
    c = dict(DEFAULTS)
    c.update(cfg)
    return c


NORMAL, UNIFORM, NORM_WEIGHT, NORM_BIAS, SLOPE, TABLE = ("normal", "uniform", "norm_weight",
                                                         "norm_bias", "slope", "table")


def param_shapes(c):
    """(name, shape, draw, fan) for every parameter of @loss, stack by stack (the test matches
    them by name, so the order is only this file's)."""
    d, f = c["d_model"], c["ffn"]
    shapes = []

    def attention(prefix):
        for p in ["q", "k", "v", "out"]:
            shapes.extend([(f"{prefix}.{p}.weight", (d, d), UNIFORM, d),
                           (f"{prefix}.{p}.bias", (d,), UNIFORM, d)])
        if "attention" in c and prefix.endswith(".self_attn"):
            if c.get("mod") == "table":
                shapes.append((prefix + ".rel", (c["heads"], 2 * TABLE_RADIUS + 1), TABLE, 0))
            else:
                shapes.append((prefix + ".slope", (c["heads"],), SLOPE, 0))

    def norm(name):
        shapes.extend([(name + ".weight", (d,), NORM_WEIGHT, 0),
                       (name + ".bias", (d,), NORM_BIAS, 0)])

    def feed_forward(prefix):
        shapes.extend([(prefix + ".linear1.weight", (d, f), UNIFORM, d),
                       (prefix + ".linear1.bias", (f,), UNIFORM, d),
                       (prefix + ".linear2.weight", (f, d), UNIFORM, f),
                       (prefix + ".linear2.bias", (d,), UNIFORM, f)])

    shapes.append(("encoder.embedding", (SOURCE_VOCAB, d), NORMAL, d))
    for layer in range(c["layers"]):
        p = f"encoder.layer{layer}"
        attention(p + ".self_attn")
        norm(p + ".norm1")
        feed_forward(p)
        norm(p + ".norm2")
    norm("encoder.norm")
    shapes.append(("decoder.embedding", (TARGET_VOCAB, d), NORMAL, d))
    for layer in range(c["layers"]):
        p = f"decoder.layer{layer}"
        attention(p + ".self_attn")
        norm(p + ".norm1")
        attention(p + ".cross_attn")
        norm(p + ".norm2")
        feed_forward(p)
        norm(p + ".norm3")
    norm("decoder.norm")
    shapes.extend([("output.weight", (d, TARGET_VOCAB), UNIFORM, d),
                   ("output.bias", (TARGET_VOCAB,), UNIFORM, d)])
    return shapes


# Gradients that are zero in exact arithmetic: suffix -> the suffix naming the gradient whose
# largest magnitude is their scale (as the test's Reference::zeroGrads).
ZERO_GRADS = {".k.bias": ".k.weight"}


def scale_name(name):
    for suffix, other in ZERO_GRADS.items():
        if name.endswith(suffix):
            return name[:-len(suffix)] + other
    return None


def grad_err(grads, ref, name):
    """The test's measure for grad:<name>: rel_err, or for ZERO_GRADS against their scale."""
    other = scale_name(name)
    if other is None:
        return rel_err(grads[name], ref[name])
    scale = max(float(np.max(np.abs(ref[other]))), 1e-6)
    return float(np.max(np.abs(grads[name] - ref[name]))) / scale


def make_inputs(rng, c):
    params = {}
    for name, shape, draw, fan in param_shapes(c):
        if draw == NORMAL:
            v = rng.normal(0.0, 1.0 / math.sqrt(fan), size=shape)
        elif draw == UNIFORM:
            s = 1.0 / math.sqrt(fan)
            v = rng.uniform(-s, s, size=shape)
        elif draw == NORM_WEIGHT:
            v = 1.0 + rng.uniform(-0.2, 0.2, size=shape)
        elif draw == SLOPE:
            v = rng.uniform(0.2, 0.8, size=shape)
        elif draw == TABLE:
            v = rng.uniform(-0.5, 0.5, size=shape)
        else:
            v = rng.uniform(-0.2, 0.2, size=shape)
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


def positions(n, d, dtype):
    """PE [n, d] as attnc's positionTable computes it (in double, then rounded to float32,
    since attnc stores the table as a float32 constant)."""
    pe = np.zeros((n, d), np.float64)
    for p in range(n):
        for i in range(0, d, 2):
            angle = p * math.exp(-i * math.log(10000.0) / d)
            pe[p, i] = math.sin(angle)
            if i + 1 < d:
                pe[p, i + 1] = math.cos(angle)
    return torch.from_numpy(pe.astype(np.float32)).to(dtype)


def module_params(c, w):
    """nn.Transformer's parameters as views of attnc's leaves `w` (transposed weights)."""
    out = {}

    def attention(ours, theirs):
        out[theirs + ".in_proj_weight"] = torch.cat(
            [w[f"{ours}.{p}.weight"].t() for p in ["q", "k", "v"]], 0)
        out[theirs + ".in_proj_bias"] = torch.cat([w[f"{ours}.{p}.bias"] for p in ["q", "k", "v"]])
        out[theirs + ".out_proj.weight"] = w[ours + ".out.weight"].t()
        out[theirs + ".out_proj.bias"] = w[ours + ".out.bias"]
        for extra in ["slope", "rel"]:
            if f"{ours}.{extra}" in w:
                out[f"{theirs}.{extra}"] = w[f"{ours}.{extra}"]

    def same(ours, theirs):
        for part in ["weight", "bias"]:
            out[f"{theirs}.{part}"] = w[f"{ours}.{part}"]

    def linear(ours, theirs):
        out[theirs + ".weight"] = w[ours + ".weight"].t()
        out[theirs + ".bias"] = w[ours + ".bias"]

    for layer in range(c["layers"]):
        ours, theirs = f"encoder.layer{layer}", f"encoder.layers.{layer}"
        attention(ours + ".self_attn", theirs + ".self_attn")
        for k in ["linear1", "linear2"]:
            linear(f"{ours}.{k}", f"{theirs}.{k}")
        for k in ["norm1", "norm2"]:
            same(f"{ours}.{k}", f"{theirs}.{k}")
        ours, theirs = f"decoder.layer{layer}", f"decoder.layers.{layer}"
        attention(ours + ".self_attn", theirs + ".self_attn")
        attention(ours + ".cross_attn", theirs + ".multihead_attn")
        for k in ["linear1", "linear2"]:
            linear(f"{ours}.{k}", f"{theirs}.{k}")
        for k in ["norm1", "norm2", "norm3"]:
            same(f"{ours}.{k}", f"{theirs}.{k}")
    same("encoder.norm", "encoder.norm")
    same("decoder.norm", "decoder.norm")
    return out


class ModAttention(torch.nn.Module):
    """nn.MultiheadAttention's self-attention (the same parameter names and call) with the
    configuration's model.transformer.attention, written out as the docs define it: with
    score = q . k / sqrt(D) per head h and positions i (query), j (key) from 0,
        s = score - slope[h] * |i - j|,   s = cap * tanh(s / cap),
        allowed = |i - j| < window  and  (j == 0 or i - j != 1)  and not padding / causal,
    softmax over the allowed keys ("alibi_softcap_window"); or, in "relative_table" (T5's bias),
        s = score + rel[h, min(max(i - j, -3), 3) + 3]
    over every key but padding and the decoder's future."""

    def __init__(self, d, heads, cap, window, dtype, mod="alibi"):
        super().__init__()
        self.heads, self.cap, self.window, self.mod = heads, cap, window, mod
        self.in_proj_weight = torch.nn.Parameter(torch.empty(3 * d, d, dtype=dtype))
        self.in_proj_bias = torch.nn.Parameter(torch.empty(3 * d, dtype=dtype))
        self.out_proj = torch.nn.Linear(d, d).to(dtype)
        if mod == "table":
            self.rel = torch.nn.Parameter(torch.empty(heads, 2 * TABLE_RADIUS + 1, dtype=dtype))
        else:
            self.slope = torch.nn.Parameter(torch.empty(heads, dtype=dtype))

    def forward(self, query, key, value, attn_mask=None, key_padding_mask=None,
                need_weights=False):
        B, T, d = query.shape
        S, H = key.shape[1], self.heads
        D = d // H
        w = self.in_proj_weight.chunk(3)
        b = self.in_proj_bias.chunk(3)

        def heads(x, k):
            return F.linear(x, w[k], b[k]).reshape(B, -1, H, D).transpose(1, 2)

        q, k, v = heads(query, 0), heads(key, 1), heads(value, 2)
        i = torch.arange(T, dtype=q.dtype).reshape(T, 1)
        j = torch.arange(S, dtype=q.dtype).reshape(1, S)
        if self.mod == "table":
            column = ((i - j).clamp(-TABLE_RADIUS, TABLE_RADIUS) + TABLE_RADIUS).to(torch.int64)
            s = q @ k.transpose(-1, -2) / math.sqrt(D) + self.rel[:, column]  # [H, T, S]
        else:
            s = (q @ k.transpose(-1, -2) / math.sqrt(D) -
                 self.slope.reshape(H, 1, 1) * (i - j).abs())
            s = self.cap * torch.tanh(s / self.cap)
            allowed = ((i - j).abs() < self.window) & ((j == 0) | (i - j != 1))
            s = s.masked_fill(~allowed, float("-inf"))
        if attn_mask is not None:       # the decoder's causal mask: 0 or -inf
            s = s + attn_mask
        if key_padding_mask is not None:  # True at padding
            s = s.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        out = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, d)
        return self.out_proj(out), None


def reference(params, data, c, dtype):
    """(loss, {name: grad}) in `dtype`."""
    d = c["d_model"]
    leaves = {n: torch.tensor(v, dtype=dtype, requires_grad=True) for n, v in params.items()}
    model = torch.nn.Transformer(d_model=d, nhead=c["heads"], num_encoder_layers=c["layers"],
                                 num_decoder_layers=c["layers"], dim_feedforward=c["ffn"],
                                 dropout=0.0, activation=c["activation"], batch_first=True,
                                 norm_first=c["norm"] == "pre").to(dtype)
    if "attention" in c:
        a = c["attention"]
        for stack in [model.encoder, model.decoder]:
            for layer in stack.layers:
                layer.self_attn = ModAttention(d, c["heads"], float(a.get("softcap", 0)),
                                               int(a.get("sliding_window", 0)), dtype,
                                               c.get("mod", "alibi"))
    model.train()  # dropout is 0; training mode keeps PyTorch off its inference fast path
    substitutes = module_params(c, leaves)
    assert sorted(substitutes) == sorted(n for n, _ in model.named_parameters()), \
        "the mapping misses or invents nn.Transformer parameters"

    src = torch.from_numpy(data["src"]).to(torch.int64)
    mask = torch.from_numpy(data["src_mask"]).to(dtype)
    tgt_in = torch.from_numpy(data["tgt_in"]).to(torch.int64)
    tgt_out = torch.from_numpy(data["tgt_out"]).to(torch.int64)
    scale = math.sqrt(d)
    x = F.embedding(src, leaves["encoder.embedding"]) * scale + positions(S, d, dtype)
    y = F.embedding(tgt_in, leaves["decoder.embedding"]) * scale + positions(T, d, dtype)
    padding = mask == 0
    causal = torch.nn.Transformer.generate_square_subsequent_mask(T).to(dtype)
    out = functional_call(model, substitutes, (x, y),
                          dict(tgt_mask=causal, src_key_padding_mask=padding,
                               memory_key_padding_mask=padding))
    logits = out @ leaves["output.weight"] + leaves["output.bias"]
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
                        default=os.path.join(here, "transformer-reference.safetensors"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-transformer-reference.py: torch "
                      f"{torch.__version__}, numpy {np.__version__}, seed {SEED}; "
                      "torch.nn.Transformer(batch_first, dropout 0) on attnc's weights "
                      "(transposed) via functional_call, sinusoidal positions, "
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
                    [grad_err(grads32, grads64, n) for n in grads64])
        shapes = param_shapes(c)
        assert list(grads64) == [n for n, _, _, _ in shapes]
        zero = max(float(np.max(np.abs(grads64[n]))) /
                   float(np.max(np.abs(grads64[scale_name(n)])))
                   for n in grads64 if scale_name(n))
        # (A softcap is not shift-invariant: there the key biases have gradients.)
        assert zero < 1e-10 or "attention" in c, \
            f"{name}: a key bias has a gradient ({zero:.3g} of its scale)"
        smallest = min(float(np.max(np.abs(grads64[n]))) for n in grads64 if not scale_name(n))
        for n, shape, _, _ in shapes:
            assert grads64[n].shape == shape
            tensors.append((f"{name}/{n}", params[n]))
        for k in ["src", "src_mask", "tgt_in", "tgt_out"]:
            tensors.append((f"{name}/{k}", data[k]))
        tensors.append((f"{name}/loss", np.array(loss64, dtype=np.float32)))
        for n, _, _, _ in shapes:
            tensors.append((f"{name}/grad:{n}", grads64[n].astype(np.float32)))
        meta = {"batch": B, "layers": c["layers"], "d_model": c["d_model"],
                "heads": c["heads"], "ffn": c["ffn"], "norm": c["norm"],
                "activation": c["activation"], **c.get("attention", {}),
                "source_vocab": SOURCE_VOCAB, "target_vocab": TARGET_VOCAB,
                "source_length": S, "target_length": T,
                "float32_max_rel_err": f"{worst:.3g}"}
        metadata.update({f"{name}.{k}": str(v) for k, v in meta.items()})
        print(f"{name}: norm={c['norm']} activation={c['activation']} layers={c['layers']} "
              f"d_model={c['d_model']} heads={c['heads']} ffn={c['ffn']}: loss {loss64:.9g}, "
              f"torch float32 vs float64 {worst:.3g}, smallest max|grad| {smallest:.3g} (key "
              f"biases: {zero:.3g} of the key weights' scale)")
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
