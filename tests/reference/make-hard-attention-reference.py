#!/usr/bin/python3
"""Exact reference for attnc's hard (stochastic) attention: the expected loss and its gradient.

Writes tests/reference/hard-attention-reference.safetensors, for the C++ test of hard attention
(tests/reference/pytorch-reference-test.cpp, suite HardAttention/HardAttentionEstimator; Xu et
al. 2015, "Show, Attend and Tell": hard attention trained with the score-function / REINFORCE
estimator). That test runs attnc's @loss_grad many times with fresh Gumbel noise,
averages its stochastic loss and gradient estimates, and compares the means with the exact
expected loss and gradient stored here, within a statistical tolerance (a few standard errors
of the mean over the draws). The test reads only that file; Python and PyTorch are needed only
to regenerate it:

    apt-get install -y python3-torch python3-numpy libopenblas0-openmp   # Debian, not pip
    /usr/bin/python3 tests/reference/make-hard-attention-reference.py    # from the repo root
    # (or: ... make-hard-attention-reference.py -o OTHER.safetensors)

The model is attnc's Bahdanau attention decoder (make-attention-reference.py, type
"bahdanau", unidirectional, 1 layer, GRU) with the soft context replaced by a hard one. This
script imports make-attention-reference.py (importlib, the file name has dashes), sets its
size globals (B, S, T, E, H, the vocabularies) to the sizes below, and reuses its
param_shapes (the dot score keeps no attention.* parameters), its Model.cell /
Model.encoder_masked / Model.decoder_step (torch.nn.GRUCell on attnc's weights through
functional_call, attnc's masked encoder scan), and its reference() for a cross-check of the
soft loss. For src [B, S] (ids, right-padded with 0), src_mask [B, S], tgt_in [B, T]
(bos y1 .. yn, then 0) and tgt_out [B, T] (y1 .. yn eos, then 0):

  encoder   h_j = the GRU over encoder.embedding[src] (the row's real tokens; memory width
            M = H); s_{-1} = the encoder's final state of the row.
  step i    q = s_{i-1}; scores over the memory
                concat: e_ij = v^T tanh(q attention.query.weight + h_j attention.key.weight)
                        (keys h_j attention.key.weight projected once)
                dot:    e_ij = q . h_j
            alpha_i = softmax of e_i over the row's real source positions (src_mask 1);
            a position s_i ~ alpha_i, the context c_i = h_{s_i} (hard; soft Bahdanau has
            sum_j alpha_ij h_j); s_i = GRU([x_i; c_i], s_{i-1}), x_i = decoder.embedding[tgt_in
            [:, i]]; logits_i = [s_i; c_i] decoder.output.weight + decoder.output.bias.
  objective for a row b and a sequence of positions s_b = (s_0 .. s_{n_b - 1}) over its n_b
            real target steps (tgt_out != 0):
                p(s_b)         = prod_i alpha_i[b, s_i]      (alpha_i depends on s_0 .. s_{i-1})
                log p(y_b|s_b) = sum_i log softmax(logits_i)[y_{b,i}],   y = tgt_out
            J = sum_b sum_{s_b} p(s_b) log p(y_b | s_b);   loss = -J / N,
            N = the number of real (non-pad) targets in the batch. Steps past a row's last real
            target do not enter J.
  enumeration  per row independently (rows do not interact): every tuple of the row's real
            source positions, one per real target step (S_b^n_b tuples), decoded as one batch
            of tuples; the gradient is autograd through the enumeration (p(s_b) depends on the
            parameters), in float64. Its score-function form,
            sum_s p(s) [grad log p(y|s) + log p(y|s) grad log p(s)], is what attnc estimates
            from one draw of s per row.

Self-checks: sum_s p(s_b) = 1 per row (1e-12); central finite differences of the enumerated
loss against the autograd gradient; a Monte-Carlo estimate of the loss (MC_DRAWS position
sequences per row drawn from alpha with torch.multinomial, a fixed generator) within 4
standard errors of the enumerated loss; the score-function gradient estimate (no baseline)
averaged over the same draws within MC_GRAD_Z standard errors of the exact gradient, entry by
entry; and the soft Bahdanau loss written here against make-attention-reference.py's
reference() (the concat score, which that script's Bahdanau uses; gradients too).

Parameters: make-attention-reference.py's draw (embeddings N(0, 1), the rest
U(+-1/sqrt(fan_in)), in param_shapes order) from numpy.random.default_rng(SEED + index), each
multiplied by INIT_SCALE = 2.5, and attention.* by ATTENTION_SCALE = 4 more (so that the
attention is far from uniform and the drawn positions change the likelihood: at x1.5 the
estimator's per-draw spread was 100 times the gradient it estimates), then rounded to
float32; then the source tokens and targets (real tokens 4 and 5 only).

File contents (safetensors; F32 unless noted), for each configuration CFG in CONFIGS:
    CFG/<param>        the parameters, named like attnc's attn.param ops
    CFG/src, CFG/tgt_in, CFG/tgt_out   I32 [B, S], [B, T], [B, T]
    CFG/src_mask       [B, S]
    CFG/loss           the float64 expected loss -J/N, rank 0
    CFG/grad:<param>   its float64 gradient, shaped like the parameters
    CFG/soft_loss      the soft Bahdanau loss with the same parameters (F.cross_entropy,
                       ignore_index=0), float64, rank 0
and __metadata__ with "configs", per configuration the spec overrides the test applies
("CFG.batch", "CFG.embedding", "CFG.hidden", "CFG.layers", "CFG.cell", "CFG.bidirectional",
"CFG.type" = "hard", "CFG.score", "CFG.dim" (0 for dot)), the importer's sizes
("CFG.source_vocab", "CFG.target_vocab", "CFG.source_length", "CFG.target_length"),
"CFG.real_targets" (N), "CFG.tuples" (per row, comma-separated), "CFG.init_scale",
"CFG.fd_max_rel_err", "CFG.mc_loss" and "CFG.mc_loss_se" (the Monte-Carlo check),
"CFG.mc_grad_max_z", "CFG.mc_grad_draw_sd_rel" (the score-function estimator's standard
deviation per draw, max over entries, relative to its tensor's max|grad|: a guide to how many
draws a tolerance needs) and "generator".
"""

import argparse
import importlib.util
import itertools
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_io import rel_err, write_safetensors  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "make_attention_reference", os.path.join(HERE, "make-attention-reference.py"))
att = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(att)

SEED = 20250312
B, S, T, E, H = 2, 3, 3, 3, 4
SOURCE_VOCAB, TARGET_VOCAB = 6, 6       # with the specials pad 0, bos 1, eos 2, unk 3
SRC_LENGTHS = [3, 2]                    # real source tokens per row (the rest is padding)
TGT_LENGTHS = [3, 2]                    # real targets per row in tgt_out (y1 .. yn eos)
PAD, BOS, EOS = 0, 1, 2
FIRST_REAL = 4                          # real tokens: 4 .. vocab - 1
INIT_SCALE = 2.5
# The concat score's weights are scaled again, so that its attention is far from uniform:
# with v ~ U(+-1.5/2) its scores span about 1.5 and the positions' probabilities stay near
# 1/3, which leaves the score-function gradients tiny against their per-draw spread.
ATTENTION_SCALE = 4.0
MC_DRAWS = 20000                        # Monte-Carlo draws per row
MC_CHUNKS = 20                          # for the gradient check's standard errors
MC_GRAD_Z = 5.0
FD_EPS = 1e-6

# make-attention-reference.py's functions read these module globals.
for _k, _v in dict(B=B, S=S, T=T, E=E, H=H, SOURCE_VOCAB=SOURCE_VOCAB,
                   TARGET_VOCAB=TARGET_VOCAB, SRC_LENGTHS=SRC_LENGTHS,
                   TGT_LENGTHS=TGT_LENGTHS).items():
    setattr(att, _k, _v)

# New configurations go at the end: configuration i draws from default_rng(SEED + i).
CONFIGS = {
    "hard_concat_gru": dict(score="concat", dim=4),
    "hard_dot_gru": dict(score="dot"),
    # Step 1 of every row reads the expectation (the test sets hard_soft there), and the
    # entropy bonus is on: the stored gradient is then what attnc's estimator has as its mean,
    # d(-J/N) - entropy/N sum_b sum_s p(s_b) d H_b(s_b) (the bonus's own gradient at the drawn
    # positions, not the gradient of its expectation), and the loss -J/N (the bonus has no
    # value in attnc). Entropy 0.5 makes the bonus as large as the rest of the attention
    # weights' gradient, so that the test would see it missing or mis-signed.
    "hard_concat_gru_mixed": dict(score="concat", dim=4, soft_steps=[1], entropy=0.5),
}


def full(cfg):
    """The configuration in make-attention-reference.py's terms (its Bahdanau decoder)."""
    return att.full(dict(type="bahdanau", cell="gru", bidirectional=False, layers=1,
                         score=cfg["score"], dim=cfg.get("dim", 0)))


def concat(c):
    return c["score"] == "concat"


def param_shapes(c):
    """make-attention-reference.py's Bahdanau parameters; the dot score has no attention.*."""
    return [s for s in att.param_shapes(c) if concat(c) or not s[0].startswith("attention.")]


def make_inputs(rng, c):
    params = {}
    for name, shape, fan in param_shapes(c):
        if fan == 0:
            drawn = rng.standard_normal(shape)
        else:
            s = 1.0 / np.sqrt(fan)
            drawn = rng.uniform(-s, s, size=shape)
        scale = INIT_SCALE * (ATTENTION_SCALE if name.startswith("attention.") else 1.0)
        params[name] = (scale * drawn).astype(np.float32)
    src = np.zeros((B, S), np.int32)
    mask = np.zeros((B, S), np.float32)
    tgt_in = np.zeros((B, T), np.int32)
    tgt_out = np.zeros((B, T), np.int32)
    for row in range(B):
        n = SRC_LENGTHS[row]
        src[row, :n] = rng.integers(FIRST_REAL, SOURCE_VOCAB, size=n)
        mask[row, :n] = 1.0
        m = TGT_LENGTHS[row]  # y1 .. y_{m-1} eos
        ys = rng.integers(FIRST_REAL, TARGET_VOCAB, size=m - 1)
        tgt_out[row, :m - 1] = ys
        tgt_out[row, m - 1] = EOS
        tgt_in[row, 0] = BOS
        tgt_in[row, 1:m] = ys
    return params, dict(src=src, src_mask=mask, tgt_in=tgt_in, tgt_out=tgt_out)


class HardModel:
    """The hard-attention decoder over float64 leaves named like attnc's parameters."""

    def __init__(self, c, leaves, data, soft_steps=()):
        self.c, self.w = c, leaves
        self.soft_steps = set(soft_steps)  # steps that read the expectation
        self.model = att.Model(c, leaves, torch.float64)
        self.src = torch.from_numpy(data["src"]).to(torch.int64)
        self.mask = torch.from_numpy(data["src_mask"]).to(torch.float64)
        self.tgt_in = torch.from_numpy(data["tgt_in"]).to(torch.int64)
        self.tgt_out = torch.from_numpy(data["tgt_out"]).to(torch.int64)
        emb = F.embedding(self.src, leaves["encoder.embedding"])
        self.memory, finals = self.model.encoder_masked(emb, self.mask)   # [B, S, M]
        self.s0 = finals[(0, "")][0]                                      # [B, H]
        self.keys = self.memory @ leaves["attention.key.weight"] if concat(c) else None
        self.dec = F.embedding(self.tgt_in, leaves["decoder.embedding"])  # [B, T, E]

    def alpha(self, query, memory, keys, mask):
        """query [K, H], memory [K, S, M], keys [K, S, A] or None, mask [K, S] -> [K, S]."""
        w = self.w
        if concat(self.c):
            q = query @ w["attention.query.weight"]
            scores = torch.tanh(q[:, None, :] + keys) @ w["attention.v"]
        else:
            scores = torch.einsum("kh,ksh->ks", query, memory)
        return torch.softmax(scores.masked_fill(mask == 0, float("-inf")), dim=1)

    def step(self, x, context, state):
        state = self.model.decoder_step(torch.cat([x, context], 1), [state])[0]
        logits = F.linear(torch.cat([state[0], context], 1), self.w["decoder.output.weight"].t(),
                          self.w["decoder.output.bias"])
        return state, logits

    def decode_row(self, b, k, choose):
        """Decodes row b's real target steps for k position sequences at once; choose(j, alpha)
        gives the positions [k] at the j-th drawn step (soft steps read the expectation and
        draw nothing). Returns (p(s) [k], log p(y|s) [k], positions, sum_i H(alpha_i) [k])."""
        memory = self.memory[b].expand(k, -1, -1)
        keys = self.keys[b].expand(k, -1, -1) if self.keys is not None else None
        mask = self.mask[b].expand(k, -1)
        state = (self.s0[b].expand(k, -1),)
        rows = torch.arange(k)
        prob = torch.ones(k, dtype=torch.float64)
        logp_y = torch.zeros(k, dtype=torch.float64)
        entropy = torch.zeros(k, dtype=torch.float64)
        chosen = []
        for i in range(TGT_LENGTHS[b]):
            assert int(self.tgt_out[b, i]) != PAD
            a = self.alpha(state[0], memory, keys, mask)
            real = a[:, :SRC_LENGTHS[b]]  # (padding has weight 0 and no entropy)
            entropy = entropy - (real * torch.log(real)).sum(1)
            if i in self.soft_steps:
                context = torch.einsum("ks,ksm->km", a, memory)
            else:
                pos = choose(len(chosen), a)
                chosen.append(pos)
                prob = prob * a[rows, pos]
                context = memory[rows, pos]
            state, logits = self.step(self.dec[b, i].expand(k, -1), context, state)
            logp_y = logp_y + F.log_softmax(logits, dim=1)[:, int(self.tgt_out[b, i])]
        assert all(int(self.tgt_out[b, i]) == PAD for i in range(TGT_LENGTHS[b], T))
        return prob, logp_y, torch.stack(chosen, 1), entropy

    def drawn_steps(self, b):
        return sum(1 for i in range(TGT_LENGTHS[b]) if i not in self.soft_steps)

    def enumerate_row(self, b):
        tuples = torch.tensor(list(itertools.product(range(SRC_LENGTHS[b]),
                                                     repeat=self.drawn_steps(b))),
                              dtype=torch.int64)
        prob, logp_y, _, entropy = self.decode_row(b, len(tuples), lambda j, a: tuples[:, j])
        return prob, logp_y, entropy

    def soft_loss(self):
        """Ordinary (soft) Bahdanau attention with the same parameters."""
        state = (self.s0,)
        logits = []
        for i in range(T):
            a = self.alpha(state[0], self.memory, self.keys, self.mask)
            context = torch.einsum("bs,bsm->bm", a, self.memory)
            state, lg = self.step(self.dec[:, i], context, state)
            logits.append(lg)
        logits = torch.stack(logits, 1)
        return F.cross_entropy(logits.reshape(-1, TARGET_VOCAB), self.tgt_out.reshape(-1),
                               ignore_index=PAD)


def real_targets(data):
    return int((data["tgt_out"] != PAD).sum())


def leaves_of(params):
    return {n: torch.tensor(v, dtype=torch.float64, requires_grad=True)
            for n, v in params.items()}


def expected_loss(model, n_real, bonus=None):
    """(-J / N, [sum_s p(s_b) per row]); with `bonus` (a list), appends
    sum_b sum_s p(s_b).detach() H_b(s_b) / N: its gradient is the entropy bonus's mean one."""
    j = 0.0
    totals = []
    for b in range(B):
        prob, logp_y, entropy = model.enumerate_row(b)
        totals.append(prob.sum())
        j = j + (prob * logp_y).sum()
        if bonus is not None:
            bonus.append((prob.detach() * entropy).sum() / n_real)
    return -j / n_real, totals


def finite_differences(params, data, c, n_real, grads, soft_steps):
    """Central differences of the enumerated loss, all entries: max rel_err over tensors."""
    base = {n: v.astype(np.float64) for n, v in params.items()}
    worst = 0.0
    with torch.no_grad():
        for name, value in base.items():
            fd = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                vals = []
                for sign in (1.0, -1.0):
                    moved = dict(base)
                    moved[name] = value.copy()
                    moved[name][idx] += sign * FD_EPS
                    leaves = {n: torch.tensor(v, dtype=torch.float64) for n, v in moved.items()}
                    model = HardModel(c, leaves, data, soft_steps)
                    vals.append(float(expected_loss(model, n_real)[0]))
                fd[idx] = (vals[0] - vals[1]) / (2 * FD_EPS)
            worst = max(worst, rel_err(fd, grads[name]))
    return worst


def monte_carlo(params, data, c, n_real, generator):
    """MC_DRAWS sequences per row drawn from alpha: per-draw losses -sum_b log p(y_b|s_b)/N
    and the score-function gradient estimate averaged over MC_CHUNKS chunks of draws."""
    leaves = leaves_of(params)
    model = HardModel(c, leaves, data)
    draw = lambda i, a: torch.multinomial(a.detach(), 1, generator=generator).squeeze(1)
    per_draw = torch.zeros(MC_DRAWS, dtype=torch.float64)
    surrogate = torch.zeros(MC_DRAWS, dtype=torch.float64)
    for b in range(B):
        prob, logp_y, _, _ = model.decode_row(b, MC_DRAWS, draw)
        per_draw = per_draw - logp_y.detach() / n_real
        # d/dtheta of -(log p(y|s) + log p(y|s).detach() * log p(s)) / N: the REINFORCE estimate
        surrogate = surrogate - (logp_y + logp_y.detach() * torch.log(prob)) / n_real
    names = list(leaves)
    chunk = MC_DRAWS // MC_CHUNKS
    chunk_grads = {n: [] for n in names}
    for k in range(MC_CHUNKS):
        g = torch.autograd.grad(surrogate[k * chunk:(k + 1) * chunk].mean(),
                                [leaves[n] for n in names], retain_graph=True,
                                allow_unused=True)
        for n, gi in zip(names, g):
            chunk_grads[n].append(np.zeros(params[n].shape) if gi is None else gi.numpy().copy())
    grad_mean = {n: np.mean(v, 0) for n, v in chunk_grads.items()}
    grad_se = {n: np.std(v, 0, ddof=1) / np.sqrt(MC_CHUNKS) for n, v in chunk_grads.items()}
    mean = float(per_draw.mean())
    se = float(per_draw.std() / np.sqrt(MC_DRAWS))
    return mean, se, grad_mean, grad_se, chunk


def monte_carlo_check(name, params, data, c, n_real, grads, loss, index):
    """The Monte-Carlo loss within 4 standard errors of the enumerated one, and the
    score-function gradient within MC_GRAD_Z of the exact one: (mc, se, max_z, draw_sd)."""
    gen = torch.Generator().manual_seed(SEED + index)
    mc, se, g_mean, g_se, chunk = monte_carlo(params, data, c, n_real, gen)
    if abs(mc - loss) > 4 * se:
        sys.exit(f"{name}: Monte-Carlo loss {mc:.9g} +- {se:.3g} is more than 4 standard "
                 f"errors from the enumerated loss {loss:.9g}")
    max_z, draw_sd = 0.0, 0.0
    for n in grads:
        diff = np.abs(g_mean[n] - grads[n])
        scale = max(float(np.max(np.abs(grads[n]))), 1e-12)
        z = np.where(g_se[n] > 0, diff / np.maximum(g_se[n], 1e-300),
                     np.where(diff > 1e-12 * scale, np.inf, 0.0))
        max_z = max(max_z, float(np.max(z)))
        draw_sd = max(draw_sd, float(np.max(g_se[n])) * np.sqrt(MC_CHUNKS * chunk) / scale)
    if max_z > MC_GRAD_Z:
        sys.exit(f"{name}: the score-function gradient estimate is {max_z:.3g} standard "
                 "errors from the exact gradient")
    return mc, se, max_z, draw_sd


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output",
                        default=os.path.join(HERE, "hard-attention-reference.safetensors"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    tensors = []
    metadata = {
        "configs": ",".join(CONFIGS),
        "generator": (f"tests/reference/make-hard-attention-reference.py: torch "
                      f"{torch.__version__}, numpy {np.__version__}, seed {SEED}, parameters "
                      f"x{INIT_SCALE}; make-attention-reference.py's Bahdanau GRU decoder with "
                      "a hard context h_{s_i}, s_i ~ alpha_i; loss = -sum_b sum_{s_b} p(s_b) "
                      "log p(y_b|s_b) / N by enumerating every position sequence, grad:* by "
                      "autograd through it, float64, stored as float32"),
    }
    for index, (name, cfg) in enumerate(CONFIGS.items()):
        c = full(cfg)
        rng = np.random.default_rng(SEED + index)
        params, data = make_inputs(rng, c)
        n_real = real_targets(data)
        shapes = param_shapes(c)
        names = [n for n, _, _ in shapes]

        # The exact expected loss and its gradient (and the entropy bonus's mean gradient).
        soft_steps, entropy = cfg.get("soft_steps", []), cfg.get("entropy", 0.0)
        leaves = leaves_of(params)
        model = HardModel(c, leaves, data, soft_steps)
        bonus = []
        loss, totals = expected_loss(model, n_real, bonus)
        for b, t in enumerate(totals):
            if abs(float(t) - 1.0) > 1e-12:
                sys.exit(f"{name}: row {b}: sum_s p(s) = {float(t)!r}, not 1")
        wrt = [leaves[n] for n in names]
        g = torch.autograd.grad(loss, wrt, retain_graph=True, allow_unused=True)
        plain = {n: (np.zeros(params[n].shape) if gi is None else gi.numpy().copy())
                 for n, gi in zip(names, g)}
        grads = dict(plain)
        if entropy > 0:
            g = torch.autograd.grad(-entropy * sum(bonus), wrt, allow_unused=True)
            for n, gi in zip(names, g):
                if gi is not None:
                    grads[n] = grads[n] + gi.numpy()
        loss = float(loss.detach())
        tuples = [SRC_LENGTHS[b] ** model.drawn_steps(b) for b in range(B)]

        # The soft loss, and for the concat score the attention script's own Bahdanau model.
        soft_leaves = leaves_of(params)
        soft = HardModel(c, soft_leaves, data).soft_loss()
        soft_g = torch.autograd.grad(soft, [soft_leaves[n] for n in names])
        soft = float(soft.detach())
        soft_check = "n/a (its Bahdanau always scores additively)"
        if concat(c):
            ref_loss, ref_grads, _ = att.reference(params, data, c, torch.float64)
            err = max([abs(ref_loss - soft) / max(abs(ref_loss), 1e-6)] +
                      [rel_err(gi.numpy(), ref_grads[n]) for n, gi in zip(names, soft_g)])
            if err > 1e-10:
                sys.exit(f"{name}: the soft loss disagrees with make-attention-reference.py's "
                         f"Bahdanau model: {err:.3g}")
            soft_check = f"{err:.3g}"

        fd = finite_differences(params, data, c, n_real, plain, soft_steps)
        if fd > 1e-6:
            sys.exit(f"{name}: finite differences disagree with the gradient: {fd:.3g}")

        mc, se, max_z, draw_sd = float("nan"), float("nan"), float("nan"), float("nan")
        if not soft_steps and entropy == 0:  # (the Monte-Carlo check draws every step)
            mc, se, max_z, draw_sd = monte_carlo_check(name, params, data, c, n_real, grads,
                                                      loss, index)

        for n, shape, _ in shapes:
            assert grads[n].shape == shape
            tensors.append((f"{name}/{n}", params[n]))
        for k in ["src", "src_mask", "tgt_in", "tgt_out"]:
            tensors.append((f"{name}/{k}", data[k]))
        tensors.append((f"{name}/loss", np.array(loss, dtype=np.float32)))
        for n in names:
            tensors.append((f"{name}/grad:{n}", grads[n].astype(np.float32)))
        tensors.append((f"{name}/soft_loss", np.array(soft, dtype=np.float32)))
        meta = {"batch": B, "embedding": E, "hidden": H, "layers": c["layers"],
                "soft_steps": ",".join(map(str, soft_steps)), "entropy": entropy,
                "cell": c["cell"], "bidirectional": "false", "type": "hard",
                "score": c["score"], "dim": c["dim"] if concat(c) else 0,
                "source_vocab": SOURCE_VOCAB, "target_vocab": TARGET_VOCAB,
                "source_length": S, "target_length": T, "real_targets": n_real,
                "tuples": ",".join(map(str, tuples)), "init_scale": INIT_SCALE,
                "attention_scale": ATTENTION_SCALE,
                "fd_max_rel_err": f"{fd:.3g}", "mc_loss": f"{mc:.9g}", "mc_loss_se": f"{se:.3g}",
                "mc_grad_max_z": f"{max_z:.3g}", "mc_grad_draw_sd_rel": f"{draw_sd:.3g}"}
        metadata.update({f"{name}.{k}": str(v) for k, v in meta.items()})

        att_names = [n for n in names if n.startswith("attention.")]
        smallest = min(names, key=lambda n: float(np.max(np.abs(grads[n]))))
        print(f"{name}: hard score={c['score']} dim={meta['dim']} cell={c['cell']} "
              f"tuples {meta['tuples']} N={n_real}: loss {loss:.9g}, soft loss {soft:.9g} "
              f"(vs make-attention-reference.py {soft_check})")
        print(f"  sum_s p(s) per row: " + ", ".join(f"{float(t):.17g}" for t in totals))
        if np.isnan(mc):
            print(f"  Monte-Carlo: not run (soft steps {soft_steps}, entropy {entropy})")
        else:
            print(f"  Monte-Carlo ({MC_DRAWS} draws per row): loss {mc:.9g} +- {se:.3g} "
                  f"({(mc - loss) / se:+.2f} SE); score-function gradient max |z| {max_z:.3g} "
                  f"over {MC_CHUNKS} chunks, per-draw sd / max|grad| up to {draw_sd:.3g}")
        print(f"  finite differences vs autograd: max rel err {fd:.3g}")
        print("  max|grad|: " + (", ".join(f"{n} {np.max(np.abs(grads[n])):.3g}"
                                          for n in att_names) or "no attention parameters") +
              f"; smallest over parameters {np.max(np.abs(grads[smallest])):.3g} ({smallest})")
    write_safetensors(args.output, tensors, metadata)
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
