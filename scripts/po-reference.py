#!/usr/bin/python3
"""PyTorch reference for models/po-en-de-transformer.yaml: the same model, data and steps.

attnc's figure on the real task (docs/data.md) means something only next to what another
framework reaches with the same model on the same data. This script trains that model with
PyTorch and writes its translations of the test split, which `attnc eval --hyp` scores with
the same BLEU and chrF2 as attnc's own translations:

    apt-get install -y python3-torch python3-sentencepiece   # Debian, not pip
    scripts/po-corpus.sh
    attnc train models/po-en-de-transformer.yaml          # writes runs/po-en-de-transformer/spm.model
    /usr/bin/python3 scripts/po-reference.py               # writes runs/po-reference/test.hyp
    attnc eval --hyp runs/po-reference/test.hyp --pairs corpora/po-en-de/test.tsv
    cut -f1 corpora/po-en-de/test.tsv | attnc translate --ckpt runs/po-en-de-transformer > attnc.hyp
    attnc eval --hyp attnc.hyp --pairs corpora/po-en-de/test.tsv

What is the same as attnc's run:
  data      attnc's SentencePiece model of the run (runs/po-en-de-transformer/spm.model), one
            vocabulary for both sides: <pad> <bos> <eos> <unk>, then the pieces of the training
            pairs; pairs with an empty source or more than data.max_len = 40 pieces on a side
            are left out of training and validation.
  model     what frontends/yaml/Transformer.cpp builds for the spec (tests/reference/
            make-transformer-reference.py checks its loss and gradients against this same
            torch.nn.Transformer): pre-norm, 2 + 2 layers, d_model 256, 4 heads, ffn 1024,
            ReLU, no dropout, sinusoidal positions, one embedding table for source, target and
            (transposed) the output layer, embeddings scaled by sqrt(d_model); attnc's
            initialisation (embedding N(0, 1/d), each attention projection Xavier-uniform on
            its own d x d matrix, zero attention biases, feed-forward U(+-1/sqrt(fan_in)),
            zero output bias).
  training  batches of at most 512 tokens (rows x the longer of source and target length, with
            the target's bos/eos), cross-entropy with label smoothing 0.1 over non-pad targets,
            Adam (lr 1e-3, betas 0.9/0.98, eps 1e-9), inverse-sqrt schedule with 600 warm-up
            steps, gradients clipped to global norm 1, 4500 steps; the validation loss every 500
            steps picks the step kept (attnc's best.safetensors).
  decoding  beam search of 4, hypotheses ranked by log p (decode.length_penalty 0), at most 41
            tokens, as runtime/decode/Beam.cpp does; a source longer than 40 pieces gets an empty
            line, as attnc's compiled encoder cannot read it either.
What differs: how token batches are cut (here fairseq's: pairs sorted by length, filled up to 512
tokens; attnc compiles 20 fixed shapes), the random draws, and float summation order.
"""

import argparse
import copy
import math
import os
import random
import time

import sentencepiece as spm
import torch
import torch.nn.functional as F

PAD, BOS, EOS, UNK = 0, 1, 2, 3


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line:
                continue
            src, _, tgt = line.partition("\t")
            pairs.append((src, tgt))
    return pairs


class Vocab:
    def __init__(self, pieces):
        self.itos = ["<pad>", "<bos>", "<eos>", "<unk>"]
        self.stoi = {}
        for p in pieces:
            if p not in self.stoi:
                self.stoi[p] = len(self.itos)
                self.itos.append(p)

    def ids(self, pieces):
        return [self.stoi.get(p, UNK) for p in pieces]


def sinusoids(n, d):
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    rate = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d)
    pe[:, 0::2] = torch.sin(pos * rate)
    pe[:, 1::2] = torch.cos(pos * rate)
    return pe


class Model(torch.nn.Module):
    def __init__(self, vocab, d, heads, ffn, layers, max_positions=512):
        super().__init__()
        self.d = d
        self.embedding = torch.nn.Parameter(torch.randn(vocab, d) / math.sqrt(d))
        self.output_bias = torch.nn.Parameter(torch.zeros(vocab))
        self.transformer = torch.nn.Transformer(
            d_model=d, nhead=heads, num_encoder_layers=layers, num_decoder_layers=layers,
            dim_feedforward=ffn, dropout=0.0, batch_first=True, norm_first=True)
        self.register_buffer("pe", sinusoids(max_positions, d))
        bound = math.sqrt(6.0 / (2 * d))
        for name, p in self.transformer.named_parameters():
            if name.endswith("in_proj_weight") or name.endswith("out_proj.weight"):
                torch.nn.init.uniform_(p, -bound, bound)
            elif name.endswith("in_proj_bias") or name.endswith("out_proj.bias"):
                torch.nn.init.zeros_(p)

    def embed(self, ids):
        return self.embedding[ids] * math.sqrt(self.d) + self.pe[: ids.shape[1]]

    def encode(self, src):
        pad = src == PAD
        return self.transformer.encoder(self.embed(src), src_key_padding_mask=pad), pad

    def decode(self, memory, src_pad, tgt_in):
        t = tgt_in.shape[1]
        causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        y = self.transformer.decoder(self.embed(tgt_in), memory, tgt_mask=causal,
                                     memory_key_padding_mask=src_pad)
        return y @ self.embedding.t() + self.output_bias

    def forward(self, src, tgt_in):
        memory, pad = self.encode(src)
        return self.decode(memory, pad, tgt_in)


def pad_rows(rows, width=None):
    width = width or max(len(r) for r in rows)
    out = torch.full((len(rows), width), PAD, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out


def tensors(batch):
    src = pad_rows([s for s, _ in batch])
    tgt_in = pad_rows([[BOS] + t for _, t in batch])
    tgt_out = pad_rows([t + [EOS] for _, t in batch])
    return src, tgt_in, tgt_out


def token_batches(pairs, max_tokens, rng):
    """fairseq's batch_by_size: pairs ordered by length, each batch as many as fit max_tokens
    counted as rows x (the longer of source and target + 1)."""
    order = sorted(range(len(pairs)),
                   key=lambda i: (max(len(pairs[i][0]), len(pairs[i][1]) + 1), rng.random()))
    batches, current, longest = [], [], 0
    for i in order:
        n = max(len(pairs[i][0]), len(pairs[i][1]) + 1)
        if current and (len(current) + 1) * max(longest, n) > max_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        batches.append(current)
    return batches


def loss_of(model, batch, smoothing):
    src, tgt_in, tgt_out = tensors(batch)
    logits = model(src, tgt_in)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                           ignore_index=PAD, label_smoothing=smoothing)


@torch.no_grad()
def validation_loss(model, pairs, rows, smoothing):
    total, count = 0.0, 0
    for b in range(0, len(pairs), rows):
        batch = pairs[b: b + rows]
        tokens = sum(len(t) + 1 for _, t in batch)
        total += loss_of(model, batch, smoothing).item() * tokens
        count += tokens
    return total / count


@torch.no_grad()
def beam_search(model, src, beam, max_length):
    """runtime/decode/Beam.cpp for one sentence: the best 2 * beam extensions of the alive
    hypotheses; one ending in eos is finished, the others (at most beam) stay alive; stop when
    nothing alive can beat the best finished score (log p) or at max_length tokens."""
    memory, pad = model.encode(torch.tensor([src], dtype=torch.long))
    alive = [([], 0.0)]
    finished = []
    for t in range(max_length):
        k = len(alive)
        tgt_in = torch.tensor([[BOS] + ys for ys, _ in alive], dtype=torch.long)
        logits = model.decode(memory.expand(k, -1, -1), pad.expand(k, -1), tgt_in)[:, -1]
        logp = F.log_softmax(logits.double(), dim=-1)
        scores = torch.tensor([lp for _, lp in alive], dtype=torch.float64)[:, None] + logp
        top = torch.topk(scores.reshape(-1), min(2 * beam, scores.numel()))
        vocab = logp.shape[1]
        nxt = []
        for score, flat in zip(top.values.tolist(), top.indices.tolist()):
            if len(nxt) >= beam:
                break
            parent, token = divmod(flat, vocab)
            ys = alive[parent][0]
            if token == EOS:
                finished.append((ys, score))
                continue
            if t + 1 == max_length:
                finished.append((ys + [token], score))
            nxt.append((ys + [token], score))
        alive = nxt if t + 1 < max_length else []
        if finished and alive and max(s for _, s in alive) <= max(s for _, s in finished):
            break
        if not alive:
            break
    return max(finished, key=lambda h: h[1])[0] if finished else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", default="runs/po-en-de-transformer",
                    help="attnc's run directory, for its spm.model")
    ap.add_argument("--corpus", default="corpora/po-en-de")
    ap.add_argument("--out", default="runs/po-reference")
    ap.add_argument("--steps", type=int, default=4500)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    max_len, max_tokens, smoothing, eval_every = 40, 512, 0.1, 500

    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.run, "spm.model"))
    pieces = lambda text: sp.encode(text, out_type=str)
    splits = {s: [(pieces(a), pieces(b)) for a, b in read_pairs(os.path.join(args.corpus, s + ".tsv"))]
              for s in ("train", "valid", "test")}
    keep = lambda p: 0 < len(p[0]) <= max_len and len(p[1]) <= max_len
    vocab = Vocab(x for s, t in splits["train"] if keep((s, t)) for x in s + t)
    as_ids = lambda ps: [(vocab.ids(s), vocab.ids(t)) for s, t in ps if keep((s, t))]
    train, valid = as_ids(splits["train"]), as_ids(splits["valid"])
    print(f"po-reference: {len(train)} training and {len(valid)} validation pairs, "
          f"a vocabulary of {len(vocab.itos)} tokens, {args.threads} threads", flush=True)

    model = Model(len(vocab.itos), d=256, heads=4, ffn=1024, layers=2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    warmup = 600
    rate = lambda step: step / warmup if step <= warmup else math.sqrt(warmup / step)

    batches, epoch = token_batches(train, max_tokens, rng), []
    best, best_loss, best_step = None, float("inf"), 0
    start = time.time()
    for step in range(1, args.steps + 1):
        if not epoch:
            epoch = batches[:]
            rng.shuffle(epoch)
        batch = [train[i] for i in epoch.pop()]
        for g in opt.param_groups:
            g["lr"] = 1e-3 * rate(step)
        model.train()
        loss = loss_of(model, batch, smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % eval_every == 0 or step == args.steps:
            model.eval()
            v = validation_loss(model, valid, 48, smoothing)
            if v < best_loss:
                best, best_loss, best_step = copy.deepcopy(model.state_dict()), v, step
            print(f"step {step}: loss {loss.item():.4f} valid_loss {v:.4f} "
                  f"({step / (time.time() - start):.2f} steps/s)", flush=True)

    model.load_state_dict(best)
    model.eval()
    os.makedirs(args.out, exist_ok=True)
    hyp = os.path.join(args.out, "test.hyp")
    start = time.time()
    with open(hyp, "w", encoding="utf-8") as f:
        for s, _ in splits["test"]:
            if not 0 < len(s) <= max_len:
                f.write("\n")
                continue
            ys = beam_search(model, vocab.ids(s), beam=4, max_length=max_len + 1)
            f.write(sp.decode_pieces([vocab.itos[y] for y in ys]) + "\n")
    print(f"po-reference: best validation loss {best_loss:.4f} at step {best_step}; "
          f"{len(splits['test'])} test translations in {hyp} ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
