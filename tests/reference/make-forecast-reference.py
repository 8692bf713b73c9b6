#!/usr/bin/python3
"""PyTorch reference for the loss and gradients of a forecaster (task: regress, model.rnn,
data.horizon M > 1; docs/forecasting.md).

Writes tests/reference/forecast-reference.safetensors, which
tests/reference/pytorch-reference-test.cpp (suite Forecast/ForecastPyTorchReference) compares
attnc's @loss_grad against. Python and PyTorch are needed only to regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-forecast-reference.py          # from the repo root

The model, written with PyTorch's modules rather than attnc's equations:
  encoder   torch.nn.LSTM / torch.nn.GRU (batch_first, num_layers L) over x [B, N, 1] from zero
            states; its h_n (and c_n) start the decoder, layer by layer.
  decoder   one torch.nn.LSTMCell / GRUCell per layer; at step k = 0 .. M-1 it reads v_k [B, 1]:
            v_0 = x[:, N-1], v_k = coin[:, k] * target[:, k-1] + (1 - coin[:, k]) * yhat_{k-1},
            layer l > 0 reads layer l-1's new h, and yhat_k = h_top W_out + b_out.
  loss      mean((yhat - target)^2) over [B, M].
attnc's parameters map onto the modules as in make-gated-reference.py: weight_ih = w_ih^T,
weight_hh = w_hh^T; LSTM bias_ih = b, bias_hh = 0 (attnc has one bias); GRU bias_ih = b_ih,
bias_hh = b_hh; encoder.layer<l>.* is the module's layer l, decoder.layer<l>.* the l-th cell,
decoder.output.weight [H, 1] and .bias [1] the head. Gradients are the modules' (transposed
back), computed in float64 from the float32 parameters and inputs.

Inputs per configuration: x [B, N, 1] and target [B, M] from one noisy mixture of sines per row
(as data.builtin: sines), and forecast_teacher [B, M]: the coins (column 0 is 1; the rest 1
with probability 1/2, or all 0 / all 1 as the configuration says).

File contents (safetensors, F32): CFG/<param>, CFG/x, CFG/target, CFG/forecast_teacher,
CFG/loss, CFG/grad:<param>; __metadata__ "configs", and per configuration the override keys
"CFG.batch", "CFG.window", "CFG.horizon", "CFG.hidden", "CFG.layers", "CFG.cell", and
"CFG.coins", "CFG.float32_max_rel_err", "generator".
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_io import rel_err, write_safetensors  # noqa: E402

SEED = 20261201
B, N, M = 3, 6, 4
# name -> (cell, hidden, layers, coins: "random" | "zeros" | "ones"). New configurations go at
# the end: configuration i draws from default_rng(SEED + i).
CONFIGS = {
    "lstm1": ("lstm", 5, 1, "random"),
    "gru2": ("gru", 4, 2, "random"),
    "lstm2_free": ("lstm", 4, 2, "zeros"),
    "lstm2_forced": ("lstm", 4, 2, "ones"),
}


def param_shapes(cfg):
    """attnc's parameters in the importer's order (RegressorFamily.cpp, ForecasterImporter)."""
    cell, hidden, layers, _ = cfg
    gates = 4 if cell == "lstm" else 3
    shapes = []
    for stack in ("encoder", "decoder"):
        inp = 1
        for layer in range(layers):
            p = f"{stack}.layer{layer}."
            shapes += [(p + "w_ih", (inp, gates * hidden)), (p + "w_hh", (hidden, gates * hidden))]
            if cell == "lstm":
                shapes.append((p + "b", (gates * hidden,)))
            else:
                shapes += [(p + "b_ih", (gates * hidden,)), (p + "b_hh", (gates * hidden,))]
            inp = hidden
    shapes += [("decoder.output.weight", (hidden, 1)), ("decoder.output.bias", (1,))]
    return shapes


def make_inputs(rng, cfg):
    cell, hidden, layers, coins = cfg
    params = {}
    for n, s in param_shapes(cfg):
        params[n] = rng.uniform(-1 / np.sqrt(hidden), 1 / np.sqrt(hidden), size=s).astype(np.float32)
    t = np.arange(N + M)[None, :]
    a = rng.uniform(0.2, 0.6, size=(B, 3, 1))
    w = rng.uniform(0.05, 0.35, size=(B, 3, 1))
    phi = rng.uniform(0, 2 * np.pi, size=(B, 3, 1))
    series = (a * np.sin(w * t[:, None, :] + phi)).sum(axis=1) + 0.05 * rng.standard_normal((B, N + M))
    x = series[:, :N, None].astype(np.float32)
    target = series[:, N:].astype(np.float32)
    if coins == "random":
        teacher = (rng.uniform(size=(B, M)) < 0.5).astype(np.float32)
    else:
        teacher = np.full((B, M), 1.0 if coins == "ones" else 0.0, dtype=np.float32)
    teacher[:, 0] = 1.0
    return params, {"x": x, "target": target, "forecast_teacher": teacher}


def reference(params, data, cfg, dtype):
    cell, hidden, layers, _ = cfg
    torch.manual_seed(0)
    T = lambda v: torch.tensor(v, dtype=dtype)
    Rnn = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
    Cell = torch.nn.LSTMCell if cell == "lstm" else torch.nn.GRUCell
    encoder = Rnn(1, hidden, num_layers=layers, batch_first=True).to(dtype)
    cells = [Cell(1 if l == 0 else hidden, hidden).to(dtype) for l in range(layers)]

    def load(module, suffix, prefix):
        with torch.no_grad():
            getattr(module, "weight_ih" + suffix).copy_(T(params[prefix + "w_ih"]).T)
            getattr(module, "weight_hh" + suffix).copy_(T(params[prefix + "w_hh"]).T)
            if cell == "lstm":
                getattr(module, "bias_ih" + suffix).copy_(T(params[prefix + "b"]))
                getattr(module, "bias_hh" + suffix).zero_()
            else:
                getattr(module, "bias_ih" + suffix).copy_(T(params[prefix + "b_ih"]))
                getattr(module, "bias_hh" + suffix).copy_(T(params[prefix + "b_hh"]))

    for l in range(layers):
        load(encoder, f"_l{l}", f"encoder.layer{l}.")
        load(cells[l], "", f"decoder.layer{l}.")
    w_out = T(params["decoder.output.weight"]).requires_grad_()
    b_out = T(params["decoder.output.bias"]).requires_grad_()

    x, target, coin = T(data["x"]), T(data["target"]), T(data["forecast_teacher"])
    _, final = encoder(x)
    h = list(final[0] if cell == "lstm" else final)
    c = list(final[1]) if cell == "lstm" else None
    previous, outputs = x[:, N - 1, :], []
    for k in range(M):
        gold = x[:, N - 1, :] if k == 0 else target[:, k - 1:k]
        v = coin[:, k:k + 1] * gold + (1 - coin[:, k:k + 1]) * previous
        for l in range(layers):
            if cell == "lstm":
                h[l], c[l] = cells[l](v, (h[l], c[l]))
            else:
                h[l] = cells[l](v, h[l])
            v = h[l]
        previous = v @ w_out + b_out
        outputs.append(previous)
    loss = torch.mean((torch.cat(outputs, dim=1) - target) ** 2)
    loss.backward()

    grads = {}
    def store(module, suffix, prefix):
        grads[prefix + "w_ih"] = getattr(module, "weight_ih" + suffix).grad.T
        grads[prefix + "w_hh"] = getattr(module, "weight_hh" + suffix).grad.T
        if cell == "lstm":
            grads[prefix + "b"] = getattr(module, "bias_ih" + suffix).grad
        else:
            grads[prefix + "b_ih"] = getattr(module, "bias_ih" + suffix).grad
            grads[prefix + "b_hh"] = getattr(module, "bias_hh" + suffix).grad
    for l in range(layers):
        store(encoder, f"_l{l}", f"encoder.layer{l}.")
    for l in range(layers):
        store(cells[l], "", f"decoder.layer{l}.")
    grads["decoder.output.weight"] = w_out.grad
    grads["decoder.output.bias"] = b_out.grad
    return float(loss.detach()), {n: g.detach().to(torch.float64).numpy().copy()
                                  for n, g in grads.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "forecast-reference.safetensors"))
    args = parser.parse_args()
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-forecast-reference.py: torch {torch.__version__}, "
                      f"numpy {np.__version__}, seed {SEED}; torch.nn.LSTM/GRU encoder, "
                      "LSTMCell/GRUCell decoder fed the true or predicted previous value by the "
                      "coins, linear head, loss = mean((yhat - target)^2); loss and grad:* in "
                      "float64, stored as float32"),
    }
    for index, (name, cfg) in enumerate(CONFIGS.items()):
        cell, hidden, layers, coins = cfg
        rng = np.random.default_rng(SEED + index)
        params, data = make_inputs(rng, cfg)
        loss64, grads64 = reference(params, data, cfg, torch.float64)
        loss32, grads32 = reference(params, data, cfg, torch.float32)
        worst = max([abs(loss32 - loss64) / max(abs(loss64), 1e-6)] +
                    [rel_err(grads32[n], grads64[n]) for n in grads64])
        shapes = param_shapes(cfg)
        assert set(grads64) == {n for n, _ in shapes}
        for n, shape in shapes:
            assert grads64[n].shape == shape, (n, grads64[n].shape, shape)
            tensors.append((f"{name}/{n}", params[n]))
        for k in ("x", "target", "forecast_teacher"):
            tensors.append((f"{name}/{k}", data[k]))
        tensors.append((f"{name}/loss", np.array(loss64, dtype=np.float32)))
        for n, _ in shapes:
            tensors.append((f"{name}/grad:{n}", grads64[n].astype(np.float32)))
        metadata.update({f"{name}.batch": str(B), f"{name}.window": str(N),
                         f"{name}.horizon": str(M), f"{name}.hidden": str(hidden),
                         f"{name}.layers": str(layers), f"{name}.cell": cell,
                         f"{name}.coins": coins, f"{name}.float32_max_rel_err": f"{worst:.3g}"})
        print(f"{name}: {cell} hidden={hidden} layers={layers} coins={coins}: loss {loss64:.9g}, "
              f"torch float32 vs float64 {worst:.3g}")
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
