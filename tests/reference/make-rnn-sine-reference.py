#!/usr/bin/python3
"""PyTorch reference for the loss and gradients of models/rnn-sine.yaml.

Writes tests/reference/rnn-sine-reference.safetensors, which
tests/reference/pytorch-reference-test.cpp (ctest: attn-pytorch-reference-tests) compares
attnc's @loss_grad against. The test reads only that file; Python and PyTorch are needed only
to regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-rnn-sine-reference.py          # from the repo root
    # (or: ... make-rnn-sine-reference.py -o OTHER.safetensors)

The model, as attnc's importer (frontends/yaml/Importer.cpp) builds it, for input x [B, T, 1]:

    h_0 = 0,  h_t = tanh(x_t W_ax + h_{t-1} W_aa + b_a)        (row-major; per layer)
    layer l > 0 reads layer l-1's per-step states instead of x
    prediction = h_T W + b                                     (the last layer's final state)
    loss = mean((prediction - target)^2)

and here as torch.nn.RNN(nonlinearity='tanh', batch_first=True) + torch.nn.Linear with the same
weights: weight_ih_l{k} = W_ax^T [H, I], weight_hh_l{k} = W_aa^T [H, H], bias_ih_l{k} = b_a,
bias_hh_l{k} = 0 (torch adds both biases, so d loss / d b_a = d loss / d bias_ih),
Linear.weight = W^T [1, H], Linear.bias = b.

Every configuration draws its parameters (U(-1/sqrt(H), 1/sqrt(H)), like attnc's initialiser),
its inputs (windows of sin(phi + 0.1 t) plus a little noise, like the builtin sine data) and
its targets from numpy.random.default_rng(SEED + index), rounded to float32. The loss and
gradients are computed in float64 from those float32 values (the reference), and again in
float32 to record how far a float32 evaluation is from it (metadata only).

File contents (safetensors, all tensors F32), for each configuration CFG in CONFIGS:
    CFG/<param>        the parameters, named like attnc's (rnn.layer0.w_ax, ..., output.bias)
    CFG/x, CFG/target  the inputs of @loss: [B, T, 1] and [B, 1]
    CFG/loss           the float64 loss, rank 0
    CFG/grad:<param>   the float64 gradients, shaped like the parameters
and __metadata__ with "configs" (comma-separated CFG names), "CFG.batch", "CFG.window",
"CFG.hidden", "CFG.layers", "CFG.float32_max_rel_err" and "generator" (how it was made).
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_io import rel_err, write_safetensors  # noqa: E402

SEED = 20240601
# name -> (batch, window, hidden, layers)
CONFIGS = {
    "layers1": (4, 6, 8, 1),
    "layers2": (4, 6, 8, 2),
}


def param_shapes(hidden, layers):
    """attnc's parameters in the importer's order, with their row-major shapes."""
    shapes = []
    inp = 1
    for layer in range(layers):
        p = f"rnn.layer{layer}"
        shapes += [(p + ".w_ax", (inp, hidden)), (p + ".w_aa", (hidden, hidden)),
                   (p + ".b_a", (hidden,))]
        inp = hidden
    shapes += [("output.weight", (hidden, 1)), ("output.bias", (1,))]
    return shapes


def make_inputs(rng, batch, window, hidden, layers):
    scale = 1.0 / np.sqrt(hidden)
    params = {n: rng.uniform(-scale, scale, size=s).astype(np.float32)
              for n, s in param_shapes(hidden, layers)}
    phi = rng.uniform(0.0, 2 * np.pi, size=(batch, 1))
    t = np.arange(window + 1)[None, :]
    wave = np.sin(phi + 0.1 * t) + 0.05 * rng.standard_normal((batch, window + 1))
    x = wave[:, :window, None].astype(np.float32)
    target = wave[:, window:].astype(np.float32)
    return params, x, target


def torch_loss_and_grads(params, x, target, hidden, layers, dtype):
    """Loss and d loss / d param (attnc's layout) through nn.RNN + nn.Linear in `dtype`."""
    rnn = torch.nn.RNN(input_size=1, hidden_size=hidden, num_layers=layers,
                       nonlinearity="tanh", bias=True, batch_first=True).to(dtype)
    head = torch.nn.Linear(hidden, 1).to(dtype)
    with torch.no_grad():
        for layer in range(layers):
            p = f"rnn.layer{layer}"
            getattr(rnn, f"weight_ih_l{layer}").copy_(torch.from_numpy(params[p + ".w_ax"].T.copy()))
            getattr(rnn, f"weight_hh_l{layer}").copy_(torch.from_numpy(params[p + ".w_aa"].T.copy()))
            getattr(rnn, f"bias_ih_l{layer}").copy_(torch.from_numpy(params[p + ".b_a"]))
            getattr(rnn, f"bias_hh_l{layer}").zero_()
        head.weight.copy_(torch.from_numpy(params["output.weight"].T.copy()))
        head.bias.copy_(torch.from_numpy(params["output.bias"]))
    xs = torch.from_numpy(x).to(dtype)
    ts = torch.from_numpy(target).to(dtype)
    h0 = torch.zeros(layers, x.shape[0], hidden, dtype=dtype)
    states, _ = rnn(xs, h0)                       # [B, T, H]: the last layer's states
    prediction = head(states[:, -1, :])           # [B, 1]
    loss = torch.mean((prediction - ts) ** 2)
    loss.backward()

    grads = {}
    for layer in range(layers):
        p = f"rnn.layer{layer}"
        grads[p + ".w_ax"] = getattr(rnn, f"weight_ih_l{layer}").grad.T
        grads[p + ".w_aa"] = getattr(rnn, f"weight_hh_l{layer}").grad.T
        grads[p + ".b_a"] = getattr(rnn, f"bias_ih_l{layer}").grad
    grads["output.weight"] = head.weight.grad.T
    grads["output.bias"] = head.bias.grad
    grads = {n: g.detach().to(torch.float64).numpy().copy() for n, g in grads.items()}
    return float(loss.detach()), grads


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", default=os.path.join(here, "rnn-sine-reference.safetensors"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-rnn-sine-reference.py: torch {torch.__version__}, "
                      f"numpy {np.__version__}, seed {SEED}; torch.nn.RNN(tanh, batch_first) + "
                      "nn.Linear, loss = mean((pred - target)^2); loss and grad:* in float64, "
                      "stored as float32"),
    }
    for index, (cfg, (batch, window, hidden, layers)) in enumerate(CONFIGS.items()):
        rng = np.random.default_rng(SEED + index)
        params, x, target = make_inputs(rng, batch, window, hidden, layers)
        loss64, grads64 = torch_loss_and_grads(params, x, target, hidden, layers, torch.float64)
        loss32, grads32 = torch_loss_and_grads(params, x, target, hidden, layers, torch.float32)
        worst = max([abs(loss32 - loss64) / max(abs(loss64), 1e-6)] +
                    [rel_err(grads32[n], grads64[n]) for n in grads64])
        for name, _ in param_shapes(hidden, layers):
            tensors.append((f"{cfg}/{name}", params[name]))
        tensors.append((f"{cfg}/x", x))
        tensors.append((f"{cfg}/target", target))
        tensors.append((f"{cfg}/loss", np.array(loss64, dtype=np.float32)))
        for name, _ in param_shapes(hidden, layers):
            tensors.append((f"{cfg}/grad:{name}", grads64[name].astype(np.float32)))
        metadata.update({f"{cfg}.batch": str(batch), f"{cfg}.window": str(window),
                         f"{cfg}.hidden": str(hidden), f"{cfg}.layers": str(layers),
                         f"{cfg}.float32_max_rel_err": f"{worst:.3g}"})
        print(f"{cfg}: B={batch} T={window} H={hidden} layers={layers}: loss {loss64:.9g}, "
              f"torch float32 vs float64 max rel err {worst:.3g}")
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
