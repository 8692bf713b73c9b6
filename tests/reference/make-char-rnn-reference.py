#!/usr/bin/python3
"""PyTorch reference for the loss and gradients of models/char-rnn.yaml.

Writes tests/reference/char-rnn-reference.safetensors, which
tests/reference/pytorch-reference-test.cpp (ctest: attn-pytorch-reference-tests, suite
CharRnn) compares attnc's @loss_grad against. The test reads only that file; Python and
PyTorch are needed only to regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-char-rnn-reference.py          # from the repo root
    # (or: ... make-char-rnn-reference.py -o OTHER.safetensors)

The model, as attnc's importer (frontends/yaml/Importer.cpp, languageModel) builds it, for
tokens x [B, T] and targets next [B, T] (int32 ids in [0, V)):

    e = embedding[x]                                            [B, T, E]
    h_0 = 0,  h_t = tanh(e_t W_ax + h_{t-1} W_aa + b_a)         (row-major; per layer)
    layer l > 0 reads layer l-1's per-step states instead of e
    logits_t = h_t W + b  for every t (the last layer's states) [B, T, V]
    loss = mean over all B*T positions of -log softmax(logits_t)[next_t]

and here as torch.nn.Embedding + torch.nn.RNN(nonlinearity='tanh', batch_first=True) +
torch.nn.Linear + F.cross_entropy (mean reduction, no ignored positions, no label
smoothing) with the same weights: Embedding.weight = embedding [V, E] (no transpose),
weight_ih_l{k} = W_ax^T [H, I], weight_hh_l{k} = W_aa^T [H, H], bias_ih_l{k} = b_a,
bias_hh_l{k} = 0 (torch adds both biases, so d loss / d b_a = d loss / d bias_ih),
Linear.weight = W^T [V, H], Linear.bias = b.

The vocabulary size V is chosen here, per configuration, and stored in the metadata; the test
passes it to the importer as ImportOptions::vocabSize, so the reference does not depend on
the builtin corpus. Every configuration draws its parameters (embedding N(0, 1), the rest
U(-1/sqrt(fan), 1/sqrt(fan)) like attnc's initialiser) and its token ids (uniform in [0, V))
from numpy.random.default_rng(SEED + index); parameters are rounded to float32. The loss and
gradients are computed in float64 from those float32 values (the reference), and again in
float32 to record how far a float32 evaluation is from it (metadata only).

File contents (safetensors; F32 unless noted), for each configuration CFG in CONFIGS:
    CFG/<param>        the parameters, named like attnc's (embedding, rnn.layer0.w_ax, ...,
                       output.weight, output.bias)
    CFG/tokens         the input ids of @loss, I32 [B, T]
    CFG/next           the target ids of @loss, I32 [B, T]
    CFG/loss           the float64 loss, rank 0
    CFG/grad:<param>   the float64 gradients, shaped like the parameters
and __metadata__ with "configs" (comma-separated CFG names), "CFG.batch", "CFG.window",
"CFG.embedding", "CFG.hidden", "CFG.layers", "CFG.vocab", "CFG.float32_max_rel_err" and
"generator" (how it was made).
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_io import rel_err, write_safetensors  # noqa: E402

SEED = 20240615
# name -> (batch, window, embedding dim, hidden, layers, vocab). All sizes differ within a
# configuration so that a swapped dimension cannot go unnoticed.
CONFIGS = {
    "layers1": (2, 5, 3, 6, 1, 7),
    "layers2": (3, 4, 4, 5, 2, 11),
}


def param_shapes(embed, hidden, layers, vocab):
    """attnc's parameters in the importer's order, with their row-major shapes and the
    initialiser's scale (None: N(0, 1))."""
    shapes = [("embedding", (vocab, embed), None)]
    inp = embed
    scale = 1.0 / np.sqrt(hidden)
    for layer in range(layers):
        p = f"rnn.layer{layer}"
        shapes += [(p + ".w_ax", (inp, hidden), scale), (p + ".w_aa", (hidden, hidden), scale),
                   (p + ".b_a", (hidden,), scale)]
        inp = hidden
    shapes += [("output.weight", (hidden, vocab), scale), ("output.bias", (vocab,), scale)]
    return shapes


def make_inputs(rng, batch, window, embed, hidden, layers, vocab):
    params = {}
    for name, shape, scale in param_shapes(embed, hidden, layers, vocab):
        values = (rng.standard_normal(size=shape) if scale is None
                  else rng.uniform(-scale, scale, size=shape))
        params[name] = values.astype(np.float32)
    # A sequence of window + 1 ids per row; next is tokens shifted by one, like the text data.
    ids = rng.integers(0, vocab, size=(batch, window + 1)).astype(np.int32)
    return params, ids[:, :window].copy(), ids[:, 1:].copy()


def torch_loss_and_grads(params, tokens, nxt, embed, hidden, layers, vocab, dtype):
    """Loss and d loss / d param (attnc's layout) through the torch model in `dtype`."""
    emb = torch.nn.Embedding(vocab, embed).to(dtype)
    rnn = torch.nn.RNN(input_size=embed, hidden_size=hidden, num_layers=layers,
                       nonlinearity="tanh", bias=True, batch_first=True).to(dtype)
    head = torch.nn.Linear(hidden, vocab).to(dtype)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(params["embedding"]))
        for layer in range(layers):
            p = f"rnn.layer{layer}"
            getattr(rnn, f"weight_ih_l{layer}").copy_(torch.from_numpy(params[p + ".w_ax"].T.copy()))
            getattr(rnn, f"weight_hh_l{layer}").copy_(torch.from_numpy(params[p + ".w_aa"].T.copy()))
            getattr(rnn, f"bias_ih_l{layer}").copy_(torch.from_numpy(params[p + ".b_a"]))
            getattr(rnn, f"bias_hh_l{layer}").zero_()
        head.weight.copy_(torch.from_numpy(params["output.weight"].T.copy()))
        head.bias.copy_(torch.from_numpy(params["output.bias"]))
    xs = torch.from_numpy(tokens).long()
    ys = torch.from_numpy(nxt).long()
    h0 = torch.zeros(layers, tokens.shape[0], hidden, dtype=dtype)
    states, _ = rnn(emb(xs), h0)                  # [B, T, H]: the last layer's states
    logits = head(states)                         # [B, T, V]
    loss = F.cross_entropy(logits.reshape(-1, vocab), ys.reshape(-1), reduction="mean")
    loss.backward()

    grads = {"embedding": emb.weight.grad}
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
    parser.add_argument("-o", "--output", default=os.path.join(here, "char-rnn-reference.safetensors"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-char-rnn-reference.py: torch {torch.__version__}, "
                      f"numpy {np.__version__}, seed {SEED}; nn.Embedding + "
                      "nn.RNN(tanh, batch_first) + nn.Linear, loss = F.cross_entropy(mean); "
                      "loss and grad:* in float64, stored as float32"),
    }
    for index, (cfg, sizes) in enumerate(CONFIGS.items()):
        batch, window, embed, hidden, layers, vocab = sizes
        rng = np.random.default_rng(SEED + index)
        params, tokens, nxt = make_inputs(rng, *sizes)
        loss64, grads64 = torch_loss_and_grads(params, tokens, nxt, embed, hidden, layers, vocab,
                                               torch.float64)
        loss32, grads32 = torch_loss_and_grads(params, tokens, nxt, embed, hidden, layers, vocab,
                                               torch.float32)
        worst = max([abs(loss32 - loss64) / max(abs(loss64), 1e-6)] +
                    [rel_err(grads32[n], grads64[n]) for n in grads64])
        names = [n for n, _, _ in param_shapes(embed, hidden, layers, vocab)]
        for name in names:
            tensors.append((f"{cfg}/{name}", params[name]))
        tensors.append((f"{cfg}/tokens", tokens))
        tensors.append((f"{cfg}/next", nxt))
        tensors.append((f"{cfg}/loss", np.array(loss64, dtype=np.float32)))
        for name in names:
            tensors.append((f"{cfg}/grad:{name}", grads64[name].astype(np.float32)))
        metadata.update({f"{cfg}.batch": str(batch), f"{cfg}.window": str(window),
                         f"{cfg}.embedding": str(embed), f"{cfg}.hidden": str(hidden),
                         f"{cfg}.layers": str(layers), f"{cfg}.vocab": str(vocab),
                         f"{cfg}.float32_max_rel_err": f"{worst:.3g}"})
        print(f"{cfg}: B={batch} T={window} E={embed} H={hidden} layers={layers} V={vocab}: "
              f"loss {loss64:.9g}, torch float32 vs float64 max rel err {worst:.3g}")
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
