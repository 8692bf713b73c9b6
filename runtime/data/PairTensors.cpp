// Pairs as padded id tensors (attn/data/Parallel.h): encoder-decoder batches, single source
// lines for translation, and labelled sequences for taggers and classifiers.
#include "attn/data/Parallel.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace attn::data {

namespace {

// Appends the ids of `tokens` to `out`; fills the rest of [out, out + len) with kPad.
template <typename It> void writePadded(It first, It last, int32_t *out, int64_t len) {
  int64_t n = 0;
  for (; first != last; ++first)
    out[n++] = *first;
  std::fill(out + n, out + len, Vocab::kPad);
}

} // namespace

Seq2SeqTensors encodePairs(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                           const Vocab &tgtVocab, const Tokenizer &srcTok, const Tokenizer &tgtTok, int64_t srcLen,
                           int64_t tgtLen, bool reverseSource) {
  if (srcLen < 1 || tgtLen < 2)
    throw std::runtime_error("attn: sequence-to-sequence data needs a source length >= 1 and a "
                             "target length >= 2 (bos/eos take a slot), got " +
                             std::to_string(srcLen) + " and " + std::to_string(tgtLen));
  // Encode first, so that N (the kept pairs) is known before the tensors are allocated.
  std::vector<std::vector<int32_t>> sources, targets;
  int64_t dropped = 0;
  for (const Pair &p : pairs) {
    std::vector<int32_t> s = srcVocab.encode(tokenize(p.source, srcTok));
    std::vector<int32_t> t = tgtVocab.encode(tokenize(p.target, tgtTok));
    if (s.empty() || (int64_t)s.size() > srcLen || (int64_t)t.size() > tgtLen - 1) {
      ++dropped;
      continue;
    }
    sources.push_back(std::move(s));
    targets.push_back(std::move(t));
  }
  int64_t n = (int64_t)sources.size();
  Seq2SeqTensors out;
  out.src = Tensor(ATTN_I32, {n, srcLen});
  out.srcMask = Tensor(ATTN_F32, {n, srcLen});
  out.tgtIn = Tensor(ATTN_I32, {n, tgtLen});
  out.tgtOut = Tensor(ATTN_I32, {n, tgtLen});
  out.dropped = dropped;
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int32_t> &s = sources[i], &t = targets[i];
    int32_t *src = out.src.data<int32_t>() + i * srcLen;
    if (reverseSource)
      writePadded(s.rbegin(), s.rend(), src, srcLen);
    else
      writePadded(s.begin(), s.end(), src, srcLen);
    float *mask = out.srcMask.data<float>() + i * srcLen;
    std::fill(mask, mask + s.size(), 1.0f); // the rest stays 0 (tensors start zeroed)

    std::vector<int32_t> in{Vocab::kBos}, target = t;
    in.insert(in.end(), t.begin(), t.end());
    target.push_back(Vocab::kEos);
    writePadded(in.begin(), in.end(), out.tgtIn.data<int32_t>() + i * tgtLen, tgtLen);
    writePadded(target.begin(), target.end(), out.tgtOut.data<int32_t>() + i * tgtLen, tgtLen);
  }
  return out;
}

std::vector<int32_t> encodeSource(const std::string &line, const Vocab &vocab, const Tokenizer &tok,
                                  int64_t srcLen, bool reverseSource, std::vector<float> &mask) {
  std::vector<int32_t> s = vocab.encode(tokenize(line, tok));
  if (s.empty())
    throw std::runtime_error("attn: the source sentence has no tokens");
  if ((int64_t)s.size() > srcLen)
    throw std::runtime_error("attn: the source sentence has " + std::to_string(s.size()) +
                             " tokens; the model reads at most " + std::to_string(srcLen));
  if (reverseSource)
    std::reverse(s.begin(), s.end());
  mask.assign(srcLen, 0.0f);
  std::fill(mask.begin(), mask.begin() + s.size(), 1.0f);
  s.resize(srcLen, Vocab::kPad);
  return s;
}

namespace {

// Token ids of `source` padded to srcLen into src/srcMask row `row`; false if it does not fit.
bool writeSource(const std::string &source, const Vocab &vocab, const Tokenizer &tok, int64_t srcLen,
                 Tensor &src, Tensor &srcMask, int64_t row,
                 std::vector<std::string> &tokens) {
  tokens = tokenize(source, tok);
  if (tokens.empty() || (int64_t)tokens.size() > srcLen)
    return false;
  std::vector<int32_t> ids = vocab.encode(tokens);
  writePadded(ids.begin(), ids.end(), src.data<int32_t>() + row * srcLen, srcLen);
  std::fill_n(srcMask.data<float>() + row * srcLen, ids.size(), 1.0f);
  return true;
}

// Keeps the first `rows` rows of a [N, ...] tensor.
Tensor firstRows(const Tensor &t, int64_t rows) {
  std::vector<int64_t> shape = t.shape();
  shape[0] = rows;
  Tensor out(t.dtype(), shape);
  std::memcpy(out.raw(), t.raw(), out.nbytes());
  return out;
}

LabelledTensors encodeLabelled(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                               const Vocab &labelVocab, const Tokenizer &srcTok, int64_t srcLen,
                               bool tagged) {
  if (srcLen < 1)
    throw std::runtime_error("attn: srcLen must be >= 1, got " + std::to_string(srcLen));
  int64_t n = (int64_t)pairs.size();
  LabelledTensors t;
  t.src = Tensor(ATTN_I32, {n, srcLen});
  t.srcMask = Tensor(ATTN_F32, {n, srcLen});
  t.labels = tagged ? Tensor(ATTN_I32, {n, srcLen}) : Tensor(ATTN_I32, {n});
  int64_t kept = 0;
  std::vector<std::string> tokens;
  for (int64_t i = 0; i < n; ++i) {
    const Pair &p = pairs[(size_t)i];
    std::vector<std::string> labels = tokenize(p.target, Tokenize::Word);
    if (tagged && labels.size() != tokenize(p.source, srcTok).size())
      throw std::runtime_error("attn: pair " + std::to_string(i + 1) + " has " +
                               std::to_string(tokenize(p.source, srcTok).size()) +
                               " tokens but " + std::to_string(labels.size()) + " tags");
    if (!tagged && labels.size() != 1)
      throw std::runtime_error("attn: pair " + std::to_string(i + 1) +
                               " must have one label, got '" + p.target + "'");
    if (!writeSource(p.source, srcVocab, srcTok, srcLen, t.src, t.srcMask, kept, tokens)) {
      ++t.dropped;
      continue;
    }
    std::vector<int32_t> ids = labelVocab.encode(labels);
    if (tagged)
      writePadded(ids.begin(), ids.end(), t.labels.data<int32_t>() + kept * srcLen, srcLen);
    else
      t.labels.data<int32_t>()[kept] = ids[0];
    ++kept;
  }
  if (kept < n) {
    t.src = firstRows(t.src, kept);
    t.srcMask = firstRows(t.srcMask, kept);
    t.labels = firstRows(t.labels, kept);
  }
  return t;
}

} // namespace

LabelledTensors encodeTagged(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                             const Vocab &tagVocab, const Tokenizer &srcTok, int64_t srcLen) {
  return encodeLabelled(pairs, srcVocab, tagVocab, srcTok, srcLen, /*tagged=*/true);
}

LabelledTensors encodeClassified(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                                 const Vocab &labelVocab, const Tokenizer &srcTok, int64_t srcLen) {
  return encodeLabelled(pairs, srcVocab, labelVocab, srcTok, srcLen, /*tagged=*/false);
}

} // namespace attn::data
