#!/usr/bin/python3
"""PyTorch reference for the loss and gradients of models/rnn-sine.yaml with gated cells.

Writes tests/reference/gated-reference.safetensors, which tests/reference/pytorch-reference-test.cpp
(ctest: attn-pytorch-reference-tests, suite GatedCells/GatedPyTorchReference) compares attnc's
@loss_grad against. The test reads only that file; Python and PyTorch are needed only to
regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-gated-reference.py             # from the repo root
    # (or: ... make-gated-reference.py -o OTHER.safetensors)

The model is models/rnn-sine.yaml with `model.rnn.cell=lstm|gru` and the overrides below: for
x [B, T, 1], stacked layers from zero states (layer l > 0 reads layer l-1's per-step outputs),
prediction = h_T W + b on the last layer's final output, loss = mean((prediction - target)^2).
Bidirectional configurations (`model.rnn.bidirectional=true`, `model.rnn.merge=concat`, as
frontends/yaml/Importer.cpp's rnn()/direction()/merge() build them): every layer also runs a
second set of weights, rnn.layer{l}.reverse.*, over the steps T-1, ..., 0 from zero states; the
layer hands on concat(forward output at t, reverse output at t) at every step (so layer l > 0
reads 2W features), and its final output is concat(forward state after t = T-1, reverse state
after t = 0), which the head reads ([2W, 1]).
The cells, as in dialect/ops/Recurrent.td (row-major `x W`, so attnc's w_ih [I, kH] is
PyTorch's weight_ih_l{k} transposed):

  lstm (gates i, f, g, o; z = x w_ih + h w_hh + b; peephole rows i, f, o; projection P):
    i = sigmoid(z_i + p_i * c), f = sigmoid(z_f + p_f * c), g = tanh(z_g),
    c' = f * c + i * g, o = sigmoid(z_o + p_o * c'), m = o * tanh(c'),
    h' = m w_proj + b_proj (with a projection) else m
  lstm with full peepholes (the seed's (3-3); w_peephole [H, 4H], column blocks i, f, g, o):
    z_k += c w_peephole[:, k] for k = i, f, g (the old cell), z_o += c' w_peephole[:, o]
  gru, a = x w_ih + b_ih, b = h w_hh + b_hh (blocks of width H):
    pytorch (r, z, n): r = sigmoid(a_r + b_r), z = sigmoid(a_z + b_z), n = tanh(a_n + r * b_n),
                       h' = (1 - z) * n + z * h
    seed (u, r, c):    u = sigmoid(a_u + b_u), r = sigmoid(a_r + b_r),
                       c~ = tanh(a_c + (r * h) w_hh[:, c] + b_hh[c]), h' = u * c~ + (1 - u) * h
    minimal (u, c):    u = sigmoid(a_u + b_u), c~ = tanh(a_c + b_c), h' = u * c~ + (1 - u) * h

How the reference is computed, per configuration ("method" in the metadata):
  - "torch.nn.LSTM" / "torch.nn.GRU": the stock modules (batch_first) on attnc's weights:
    weight_ih_l{k} = w_ih^T, weight_hh_l{k} = w_hh^T; LSTM bias_ih_l{k} = b, bias_hh_l{k} = 0
    (attnc has a single LSTM bias, so d/db = d/dbias_ih); GRU bias_ih_l{k} = b_ih,
    bias_hh_l{k} = b_hh. With a projection (nn.LSTM(proj_size=P)) weight_hr_l{k} = w_proj^T;
    PyTorch's projection has NO bias, so these configurations set attnc's b_proj = 0, and the
    gradient of b_proj (which nn.LSTM cannot give) is taken from the unrolled implementation
    below with b_proj as an explicit leaf. Bidirectional configurations use
    nn.LSTM/nn.GRU(bidirectional=True): the reverse direction's weights (weight_ih_l{k}_reverse,
    ...) are attnc's rnn.layer{k}.reverse.*, mapped the same way; the head reads
    concat(output[:, T-1, :W], output[:, 0, W:]), checked to equal PyTorch's h_n.
  - "unrolled": PyTorch has no peephole LSTM and no seed/minimal GRU, so these cells are written
    out above as explicit float64 torch ops, unrolled over time (the reverse direction over
    t = T-1, ..., 0), and differentiated by autograd (torch.autograd.grad); this is how
    bilstm_peephole_proj (2-layer bidirectional peephole LSTM with projection) is computed. The same unrolled code is also run on every nn.LSTM/nn.GRU
    configuration and must agree with the stock module to 1e-10 (checked here, recorded as
    "CFG.unrolled_vs_module_max_rel_err"), which validates it; bilstm2, bigru2 and bilstm_proj
    (the same as bilstm_peephole_proj without peepholes and with b_proj = 0, against
    nn.LSTM(bidirectional=True, proj_size=4)) validate its bidirectional wiring.

Parameters are U(-1/sqrt(H), 1/sqrt(H)) (output head: U(+-1/sqrt(width))), inputs windows of
sin(phi + 0.1 t) plus a little noise, targets the next sample, all from
numpy.random.default_rng(SEED + index) and rounded to float32. The loss and gradients are
computed in float64 from those float32 values (the reference), and again in float32 to record
how far a float32 evaluation is from it (metadata only).

File contents (safetensors, all tensors F32), for each configuration CFG in CONFIGS:
    CFG/<param>        the parameters, named like attnc's (rnn.layer0.w_ih, ..., output.bias)
    CFG/x, CFG/target  the inputs of @loss: [B, T, 1] and [B, 1]
    CFG/loss           the float64 loss, rank 0
    CFG/grad:<param>   the float64 gradients, shaped like the parameters
and __metadata__ with "configs", "CFG.batch", "CFG.window", "CFG.hidden", "CFG.layers",
"CFG.cell", "CFG.gru_form", "CFG.peephole", "CFG.projection", "CFG.bidirectional", "CFG.merge"
(every key for every configuration, the test passes them all as --set style overrides), "CFG.method",
"CFG.float32_max_rel_err", "CFG.unrolled_vs_module_max_rel_err" (module configurations) and
"generator".
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_io import rel_err, write_safetensors  # noqa: E402

SEED = 20240611
B, T, H = 3, 5, 6
# name -> (cell, gru_form, peephole, projection, layers, bidirectional); peephole is False,
# True (diagonal) or "full". New configurations go at the end: configuration i draws from
# default_rng(SEED + i).
CONFIGS = {
    "lstm1": ("lstm", "pytorch", False, 0, 1, False),
    "lstm2": ("lstm", "pytorch", False, 0, 2, False),
    "gru1": ("gru", "pytorch", False, 0, 1, False),
    "gru2": ("gru", "pytorch", False, 0, 2, False),
    "lstm_proj": ("lstm", "pytorch", False, 4, 2, False),
    "lstm_peephole": ("lstm", "pytorch", True, 0, 1, False),
    "lstm_peephole_proj": ("lstm", "pytorch", True, 4, 2, False),
    "gru_seed": ("gru", "seed", False, 0, 2, False),
    "gru_minimal": ("gru", "minimal", False, 0, 2, False),
    "bilstm2": ("lstm", "pytorch", False, 0, 2, True),
    "bilstm_proj": ("lstm", "pytorch", False, 4, 2, True),
    "bilstm_peephole_proj": ("lstm", "pytorch", True, 4, 2, True),
    "bigru2": ("gru", "pytorch", False, 0, 2, True),
    "lstm_peephole_full": ("lstm", "pytorch", "full", 0, 1, False),
    "lstm_peephole_full_proj": ("lstm", "pytorch", "full", 4, 2, False),
    "bilstm_peephole_full_proj": ("lstm", "pytorch", "full", 4, 2, True),
}
MERGE = "concat"  # model.rnn.merge of the bidirectional configurations (the only one written)


def out_width(cfg):
    """What one direction of a layer hands on: H, or P for an lstm with a projection."""
    cell, _, _, proj, _, _ = cfg
    return proj if cell == "lstm" and proj > 0 else H


def directions(cfg):
    """The parameter-name infixes of a layer's directions, in the importer's order."""
    return ["", "reverse."] if cfg[5] else [""]


def layer_width(cfg):
    """What a layer hands on (and the head reads): both directions concatenated."""
    return out_width(cfg) * len(directions(cfg))


def param_shapes(cfg):
    """attnc's parameters in the importer's order (frontends/yaml/Importer.cpp, rnn() and
    layerParams: per layer the forward direction's, then the reverse direction's)."""
    cell, form, peephole, proj, layers, _ = cfg
    out = out_width(cfg)
    shapes = []
    inp = 1
    for layer in range(layers):
        for d in directions(cfg):
            p = f"rnn.layer{layer}.{d}"
            if cell == "gru":
                k = 2 if form == "minimal" else 3
                shapes += [(p + "w_ih", (inp, k * H)), (p + "w_hh", (H, k * H)),
                           (p + "b_ih", (k * H,)), (p + "b_hh", (k * H,))]
            else:
                shapes += [(p + "w_ih", (inp, 4 * H)), (p + "w_hh", (out, 4 * H)),
                           (p + "b", (4 * H,))]
                if peephole == "full":
                    shapes.append((p + "w_peephole", (H, 4 * H)))
                elif peephole:
                    shapes.append((p + "w_peephole", (3, H)))
                if proj > 0:
                    shapes += [(p + "w_proj", (H, out)), (p + "b_proj", (out,))]
        inp = layer_width(cfg)
    shapes += [("output.weight", (layer_width(cfg), 1)), ("output.bias", (1,))]
    return shapes


def uses_module(cfg):
    cell, form, peephole, _, _, _ = cfg
    return not peephole and (cell == "lstm" or form == "pytorch")


def make_inputs(rng, cfg):
    params = {}
    for n, s in param_shapes(cfg):
        scale = 1.0 / np.sqrt(layer_width(cfg) if n.startswith("output.") else H)
        params[n] = rng.uniform(-scale, scale, size=s).astype(np.float32)
    if uses_module(cfg):  # nn.LSTM's projection has no bias
        for n in params:
            if n.endswith(".b_proj"):
                params[n][...] = 0.0
    phi = rng.uniform(0.0, 2 * np.pi, size=(B, 1))
    t = np.arange(T + 1)[None, :]
    wave = np.sin(phi + 0.1 * t) + 0.05 * rng.standard_normal((B, T + 1))
    x = wave[:, :T, None].astype(np.float32)
    target = wave[:, T:].astype(np.float32)
    return params, x, target


def unrolled(params, x, target, cfg, dtype):
    """The cells written out as torch ops, unrolled over time; autograd for the gradients."""
    cell, form, peephole, proj, layers, bidir = cfg
    leaves = {n: torch.tensor(v, dtype=dtype, requires_grad=True) for n, v in params.items()}
    seq = [torch.from_numpy(x[:, t, :]).to(dtype) for t in range(T)]
    blk = lambda v, k: v[..., k * H:(k + 1) * H]

    def step(w, xt, h, c):
        """One step of one direction's cell: the new (h, c) (c is None for a gru)."""
        if cell == "lstm":
            z = xt @ w("w_ih") + h @ w("w_hh") + w("b")
            zi, zf, zg, zo = (blk(z, k) for k in range(4))
            if peephole == "full":
                zi = zi + c @ blk(w("w_peephole"), 0)
                zf = zf + c @ blk(w("w_peephole"), 1)
                zg = zg + c @ blk(w("w_peephole"), 2)
            elif peephole:
                zi = zi + w("w_peephole")[0] * c
                zf = zf + w("w_peephole")[1] * c
            i, f, g = torch.sigmoid(zi), torch.sigmoid(zf), torch.tanh(zg)
            c = f * c + i * g
            if peephole == "full":
                zo = zo + c @ blk(w("w_peephole"), 3)
            elif peephole:
                zo = zo + w("w_peephole")[2] * c
            m = torch.sigmoid(zo) * torch.tanh(c)
            return (m @ w("w_proj") + w("b_proj") if proj > 0 else m), c
        a = xt @ w("w_ih") + w("b_ih")
        hp = lambda lhs, k: lhs @ blk(w("w_hh"), k) + blk(w("b_hh"), k)
        if form == "pytorch":
            r = torch.sigmoid(blk(a, 0) + hp(h, 0))
            zg = torch.sigmoid(blk(a, 1) + hp(h, 1))
            n = torch.tanh(blk(a, 2) + r * hp(h, 2))
            return (1 - zg) * n + zg * h, None
        if form == "seed":
            u = torch.sigmoid(blk(a, 0) + hp(h, 0))
            r = torch.sigmoid(blk(a, 1) + hp(h, 1))
            cand = torch.tanh(blk(a, 2) + hp(r * h, 2))
            return u * cand + (1 - u) * h, None
        u = torch.sigmoid(blk(a, 0) + hp(h, 0))
        cand = torch.tanh(blk(a, 1) + hp(h, 1))
        return u * cand + (1 - u) * h, None

    final = None
    for layer in range(layers):
        steps, finals = [], []  # per direction: outputs in time order, final output
        for d in directions(cfg):
            w = lambda s, p=f"rnn.layer{layer}.{d}": leaves[p + s]
            h = torch.zeros(B, out_width(cfg), dtype=dtype)
            c = torch.zeros(B, H, dtype=dtype)
            outs = [None] * T
            for t in (reversed(range(T)) if d else range(T)):  # reverse: T-1 down to 0
                h, c = step(w, seq[t], h, c)
                outs[t] = h
            steps.append(outs)
            finals.append(h)  # forward: after t = T-1; reverse: after t = 0
        if bidir:  # merge: concat, features side by side (forward first)
            seq = [torch.cat([o[t] for o in steps], dim=1) for t in range(T)]
            final = torch.cat(finals, dim=1)
        else:
            seq, final = steps[0], finals[0]
    prediction = final @ leaves["output.weight"] + leaves["output.bias"]
    loss = torch.mean((prediction - torch.from_numpy(target).to(dtype)) ** 2)
    names = list(leaves)
    grads = torch.autograd.grad(loss, [leaves[n] for n in names])
    return float(loss.detach()), {n: g.detach().to(torch.float64).numpy().copy()
                                  for n, g in zip(names, grads)}


def module(params, x, target, cfg, dtype):
    """The same model through torch.nn.LSTM / torch.nn.GRU (batch_first, bidirectional for the
    bidirectional configurations) + torch.nn.Linear."""
    cell, _, _, proj, layers, bidir = cfg
    if cell == "lstm":
        rnn = torch.nn.LSTM(1, H, num_layers=layers, batch_first=True, proj_size=proj,
                            bidirectional=bidir).to(dtype)
    else:
        rnn = torch.nn.GRU(1, H, num_layers=layers, batch_first=True,
                           bidirectional=bidir).to(dtype)
    out = out_width(cfg)
    head = torch.nn.Linear(layer_width(cfg), 1).to(dtype)
    T_ = lambda a: torch.from_numpy(np.ascontiguousarray(a.T))
    # attnc's direction infix -> torch's parameter suffix
    suffix = {"": "", "reverse.": "_reverse"}
    with torch.no_grad():
        for layer in range(layers):
            for d in directions(cfg):
                p = f"rnn.layer{layer}.{d}"
                tp = lambda s: getattr(rnn, f"{s}_l{layer}{suffix[d]}")
                tp("weight_ih").copy_(T_(params[p + "w_ih"]))
                tp("weight_hh").copy_(T_(params[p + "w_hh"]))
                if cell == "lstm":
                    tp("bias_ih").copy_(torch.from_numpy(params[p + "b"]))
                    tp("bias_hh").zero_()
                    if proj > 0:
                        assert not params[p + "b_proj"].any()
                        tp("weight_hr").copy_(T_(params[p + "w_proj"]))
                else:
                    tp("bias_ih").copy_(torch.from_numpy(params[p + "b_ih"]))
                    tp("bias_hh").copy_(torch.from_numpy(params[p + "b_hh"]))
        head.weight.copy_(T_(params["output.weight"]))
        head.bias.copy_(torch.from_numpy(params["output.bias"]))
    xs = torch.from_numpy(x).to(dtype)
    states, finals = rnn(xs)  # zero initial states; [B, T, dirs * out]
    if bidir:
        # forward's output at t = T-1 and reverse's at t = 0 (its last step): PyTorch's h_n
        final = torch.cat([states[:, -1, :out], states[:, 0, out:]], dim=1)
        h_n = finals[0] if cell == "lstm" else finals
        assert torch.equal(final, torch.cat([h_n[-2], h_n[-1]], dim=1))
    else:
        final = states[:, -1, :]
    prediction = head(final)
    loss = torch.mean((prediction - torch.from_numpy(target).to(dtype)) ** 2)
    loss.backward()
    grads = {}
    for layer in range(layers):
        for d in directions(cfg):
            p = f"rnn.layer{layer}.{d}"
            tp = lambda s: getattr(rnn, f"{s}_l{layer}{suffix[d]}").grad
            grads[p + "w_ih"] = tp("weight_ih").T
            grads[p + "w_hh"] = tp("weight_hh").T
            if cell == "lstm":
                grads[p + "b"] = tp("bias_ih")
                if proj > 0:
                    grads[p + "w_proj"] = tp("weight_hr").T
            else:
                grads[p + "b_ih"] = tp("bias_ih")
                grads[p + "b_hh"] = tp("bias_hh")
    grads["output.weight"] = head.weight.grad.T
    grads["output.bias"] = head.bias.grad
    return float(loss.detach()), {n: v.detach().to(torch.float64).numpy().copy()
                                  for n, v in grads.items()}


def reference(params, x, target, cfg, dtype):
    """(loss, grads, unrolled-vs-module error or None) in `dtype`."""
    loss_u, grads_u = unrolled(params, x, target, cfg, dtype)
    if not uses_module(cfg):
        return loss_u, grads_u, None
    loss_m, grads_m = module(params, x, target, cfg, dtype)
    grads = dict(grads_u)
    grads.update(grads_m)  # the module's wherever it has one; b_proj's from the unrolled code
    assert set(grads) == set(grads_u)
    err = max([abs(loss_u - loss_m) / max(abs(loss_m), 1e-6)] +
              [rel_err(grads_u[n], grads_m[n]) for n in grads_m])
    return loss_m, grads, err


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", default=os.path.join(here, "gated-reference.safetensors"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-gated-reference.py: torch {torch.__version__}, "
                      f"numpy {np.__version__}, seed {SEED}; torch.nn.LSTM/GRU(batch_first, "
                      "bidirectional for bi*) or "
                      "explicit unrolled float64 torch ops (peephole LSTM, seed/minimal GRU) + "
                      "linear head, loss = mean((pred - target)^2); loss and grad:* in float64, "
                      "stored as float32"),
    }
    for index, (name, cfg) in enumerate(CONFIGS.items()):
        cell, form, peephole, proj, layers, bidir = cfg
        rng = np.random.default_rng(SEED + index)
        params, x, target = make_inputs(rng, cfg)
        loss64, grads64, check = reference(params, x, target, cfg, torch.float64)
        loss32, grads32, _ = reference(params, x, target, cfg, torch.float32)
        worst = max([abs(loss32 - loss64) / max(abs(loss64), 1e-6)] +
                    [rel_err(grads32[n], grads64[n]) for n in grads64])
        if check is not None and check > 1e-10:
            sys.exit(f"{name}: the unrolled cell disagrees with the torch module: {check:.3g}")
        shapes = param_shapes(cfg)
        assert set(grads64) == {n for n, _ in shapes}
        for n, _ in shapes:
            tensors.append((f"{name}/{n}", params[n]))
        tensors.append((f"{name}/x", x))
        tensors.append((f"{name}/target", target))
        tensors.append((f"{name}/loss", np.array(loss64, dtype=np.float32)))
        for n, _ in shapes:
            tensors.append((f"{name}/grad:{n}", grads64[n].astype(np.float32)))
        method = ("unrolled" if check is None else
                  ("torch.nn.LSTM" if cell == "lstm" else "torch.nn.GRU") +
                  ("(bidirectional=True)" if bidir else "") +
                  (" (b_proj = 0; grad:b_proj unrolled)" if proj else ""))
        metadata.update({f"{name}.batch": str(B), f"{name}.window": str(T),
                         f"{name}.hidden": str(H), f"{name}.layers": str(layers),
                         f"{name}.cell": cell, f"{name}.gru_form": form,
                         f"{name}.peephole": ("full" if peephole == "full" else
                                              "true" if peephole else "false"),
                         f"{name}.projection": str(proj),
                         f"{name}.bidirectional": "true" if bidir else "false",
                         f"{name}.merge": MERGE, f"{name}.method": method,
                         f"{name}.float32_max_rel_err": f"{worst:.3g}"})
        if check is not None:
            metadata[f"{name}.unrolled_vs_module_max_rel_err"] = f"{check:.3g}"
        print(f"{name}: {cell} form={form} peephole={peephole} projection={proj} "
              f"layers={layers} bidirectional={bidir} [{method}]: loss {loss64:.9g}, torch float32 vs float64 "
              f"{worst:.3g}" + ("" if check is None else f", unrolled vs module {check:.3g}"))
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
