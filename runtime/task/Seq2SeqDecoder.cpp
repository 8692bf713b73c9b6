#include "attn/task/Seq2SeqDecoder.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace attn::task {

using decode::Hypothesis;

Seq2SeqDecoder::Seq2SeqDecoder(const Program &program, const std::vector<Tensor> &params,
                               const PairData &data, const DecodeConfig &config)
    : program(program), params(params), data(data), config_(config) {
  // (A graph's encoder-decoder has only decode_full, which reads the same sources.)
  const attn_entry_info *encode = program.findEntry("encode");
  const attn_entry_info &reads = encode ? *encode : program.entry("decode_full");
  rows = reads.inputs[0].shape[0];
  sourceLength = reads.inputs[0].shape[1];
}

std::vector<std::string> unknownTokens(const std::string &line, const data::Vocab &vocab,
                                       const data::Tokenizer &tokenize) {
  std::vector<std::string> out;
  for (const std::string &t : data::tokenize(line, tokenize))
    if (vocab.id(t) == data::Vocab::kUnk && t != "<unk>" &&
        std::find(out.begin(), out.end(), t) == out.end())
      out.push_back(t);
  return out;
}

Encoded Seq2SeqDecoder::encode(const std::string &line) const {
  Encoded e;
  e.ids = data::encodeSource(line, data.source, data.sourceTokens, sourceLength,
                             data.reverseSource, e.mask);
  if (std::count(e.ids.begin(), e.ids.end(), data::Vocab::kUnk))
    e.unknown = unknownTokens(line, data.source, data.sourceTokens);
  return e;
}

void Seq2SeqDecoder::addBucket(const Program &program) {
  auto bucket = std::make_unique<Bucket>();
  bucket->params = paramsFor(program, this->program, params);
  bucket->decoder = std::make_unique<Seq2SeqDecoder>(program, bucket->params, data, config_);
  const Seq2SeqDecoder &d = *bucket->decoder;
  if (d.sourceLength > sourceLength || d.rows > rows ||
      (d.sourceLength == sourceLength && d.rows == rows))
    throw std::runtime_error("attn: a bucket must read fewer than " + std::to_string(sourceLength) +
                             " tokens or decode fewer than " + std::to_string(rows) +
                             " rows, and no more of either; this one reads " +
                             std::to_string(d.sourceLength) + " in " + std::to_string(d.rows));
  auto key = [](const Seq2SeqDecoder &x) { return std::pair{x.sourceLength, x.rows}; };
  auto at = std::find_if(buckets.begin(), buckets.end(),
                         [&](const auto &b) { return key(*b->decoder) > key(d); });
  buckets.insert(at, std::move(bucket));
}

size_t Seq2SeqDecoder::lengthBucketCount() const {
  return std::count_if(buckets.begin(), buckets.end(),
                       [&](const auto &b) { return b->decoder->rows == rows; });
}

std::vector<std::vector<Hypothesis>>
Seq2SeqDecoder::decode(const std::vector<Encoded> &sources) const {
  if (buckets.empty())
    return decodeHere(sources);
  // The programs of every length with the full rows, shortest first, this one last: each
  // source to the shortest that holds its tokens.
  std::vector<const Seq2SeqDecoder *> byLength;
  for (const auto &b : buckets)
    if (b->decoder->rows == rows)
      byLength.push_back(b->decoder.get());
  byLength.push_back(this);
  std::vector<std::vector<size_t>> members(byLength.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    int64_t n = std::count(sources[i].mask.begin(), sources[i].mask.end(), 1.0f);
    size_t b = 0;
    while (b + 1 < byLength.size() && byLength[b]->sourceLength < n)
      ++b;
    members[b].push_back(i);
  }
  std::vector<std::vector<Hypothesis>> out(sources.size());
  for (size_t b = 0; b < members.size(); ++b) {
    if (members[b].empty())
      continue;
    const Seq2SeqDecoder &d = *byLength[b];
    std::vector<Encoded> group;
    for (size_t i : members[b]) {
      const Encoded &e = sources[i];
      group.push_back({std::vector<int32_t>(e.ids.begin(), e.ids.begin() + d.sourceLength),
                       std::vector<float>(e.mask.begin(), e.mask.begin() + d.sourceLength),
                       e.unknown});
    }
    // Full batches in `d`; the rest (greedy rows) in the program of that length with the
    // fewest rows that hold it (decode.batch_buckets), when there is one.
    size_t head = config_.beam > 1 ? group.size() : group.size() / d.rows * d.rows;
    const Seq2SeqDecoder *tail = &d;
    for (const auto &x : buckets) {
      const Seq2SeqDecoder &c = *x->decoder;
      if (c.sourceLength == d.sourceLength && c.rows < tail->rows &&
          c.rows >= (int64_t)(group.size() - head))
        tail = &c;
    }
    std::vector<std::vector<Hypothesis>> decoded =
        d.decodeHere(std::vector<Encoded>(group.begin(), group.begin() + head));
    std::vector<std::vector<Hypothesis>> rest =
        tail->decodeHere(std::vector<Encoded>(group.begin() + head, group.end()), head);
    decoded.insert(decoded.end(), std::make_move_iterator(rest.begin()),
                   std::make_move_iterator(rest.end()));
    for (size_t k = 0; k < members[b].size(); ++k)
      out[members[b][k]] = std::move(decoded[k]);
  }
  return out;
}

std::vector<std::vector<Hypothesis>> Seq2SeqDecoder::decodeHere(const std::vector<Encoded> &sources,
                                                                size_t firstRow) const {
  decode::BeamOptions beam;
  beam.beam = config_.beam;
  beam.lengthPenalty = config_.lengthPenalty;
  beam.maxLength = maxLength();
  beam.nbest = config_.nbest;
  beam.bos = data::Vocab::kBos;
  beam.eos = data::Vocab::kEos;

  std::vector<std::vector<Hypothesis>> out;
  if (config_.beam > 1) {
    for (size_t i = 0; i < sources.size(); ++i) {
      Tensor src, mask;
      batchOf(sources, i, 1, src, mask);
      out.push_back(decode::beamSearch(*stepModel(src, mask), beam));
    }
    return out;
  }
  decode::SamplingOptions sampling;
  sampling.temperature = config_.temperature;
  sampling.topK = config_.topK;
  sampling.seed = config_.seed;
  sampling.maxLength = beam.maxLength;
  sampling.bos = beam.bos;
  sampling.eos = beam.eos;
  forEachBatch(sources, [&](size_t first, size_t count, const Tensor &src,
                            const Tensor &mask) {
    std::unique_ptr<decode::StepModel> model = stepModel(src, mask);
    // Source i draws from stream i, whatever the batch it falls in.
    sampling.firstRow = firstRow + first;
    std::vector<Hypothesis> best =
        config_.sample ? decode::sampled(*model, sampling)
                           : decode::greedy(*model, beam.maxLength, beam.bos, beam.eos);
    for (size_t r = 0; r < count; ++r)
      out.push_back({best[r]});
  });
  return out;
}

std::unique_ptr<decode::StepModel>
Seq2SeqDecoder::stepModel(const Tensor &src, const Tensor &mask) const {
  if (program.findEntry("decode_full"))
    return std::make_unique<decode::ProgramPrefixModel>(program, params, src, mask);
  return std::make_unique<decode::ProgramStepModel>(program, params, src, mask);
}

void Seq2SeqDecoder::forEachBatch(const std::vector<Encoded> &sources,
                                  const BatchBody &body) const {
  for (size_t first = 0; first < sources.size(); first += rows) {
    size_t count = std::min(sources.size() - first, (size_t)rows);
    Tensor src, mask;
    batchOf(sources, first, count, src, mask);
    body(first, count, src, mask);
  }
}

void Seq2SeqDecoder::batchOf(const std::vector<Encoded> &sources, size_t first, size_t count,
                             Tensor &src, Tensor &mask) const {
  src = Tensor(ATTN_I32, {rows, sourceLength});
  mask = Tensor(ATTN_F32, {rows, sourceLength});
  for (int64_t r = 0; r < rows; ++r) {
    const Encoded &e = sources[first + ((size_t)r < count ? (size_t)r : 0)];
    std::copy(e.ids.begin(), e.ids.end(), src.data<int32_t>() + r * sourceLength);
    std::copy(e.mask.begin(), e.mask.end(), mask.data<float>() + r * sourceLength);
  }
}

bool Seq2SeqDecoder::hasAttention() const {
  const attn_entry_info *step = program.findEntry("decode_step");
  for (int32_t i = 0; step && i < step->num_outputs; ++i)
    if (step->outputs[i].name && std::string(step->outputs[i].name) == kAttentionResult)
      return true;
  return false;
}

std::vector<std::vector<std::vector<float>>>
Seq2SeqDecoder::alignments(const std::vector<Encoded> &sources,
                           const std::vector<Hypothesis> &outputs) const {
  std::vector<std::vector<std::vector<float>>> out(sources.size());
  if (!hasAttention())
    return out;
  // A Transformer's decode_step holds maxLength positions: no step past them (an output that
  // long ended without eos, and gets no eos row).
  size_t longestOutput = maxLength();
  forEachBatch(sources, [&](size_t first, size_t count, const Tensor &src,
                            const Tensor &mask) {
    decode::ProgramStepModel model(program, params, src, mask);
    size_t longest = 0;
    for (size_t r = 0; r < count; ++r)
      longest = std::max(longest, std::min(outputs[first + r].tokens.size(), longestOutput - 1));
    // Step t feeds the token before output t (bos first) and reads where output t looked.
    std::vector<int32_t> tokens(rows, data::Vocab::kBos);
    std::vector<float> logProbs;
    for (size_t t = 0; t <= longest; ++t) {
      model.step(tokens, logProbs);
      const Tensor *weights = model.result(kAttentionResult);
      for (size_t r = 0; r < count; ++r) {
        const Encoded &e = sources[first + r];
        const std::vector<int32_t> &hyp = outputs[first + r].tokens;
        if (t <= hyp.size()) {
          // Only the real source tokens, in the order they were written.
          const float *row = weights->data<float>() + r * sourceLength;
          int64_t n = (int64_t)std::count(e.mask.begin(), e.mask.end(), 1.0f);
          std::vector<float> w(row, row + n);
          if (data.reverseSource)
            std::reverse(w.begin(), w.end());
          out[first + r].push_back(std::move(w));
        }
        tokens[r] = t < hyp.size() ? hyp[t] : data::Vocab::kEos;
      }
    }
  });
  return out;
}

std::string Seq2SeqDecoder::text(const Hypothesis &h) const {
  return data::detokenize(data.target.decode(h.tokens), data.targetTokens);
}

Accuracy Seq2SeqDecoder::accuracy(const std::vector<data::Pair> &pairs) const {
  std::vector<Encoded> sources;
  std::vector<std::vector<int32_t>> references;
  std::vector<std::string> written; // the references as text
  for (const data::Pair &p : pairs) {
    std::vector<std::string> target = data::tokenize(p.target, data.targetTokens);
    if ((int64_t)target.size() >= data.targetLength)
      continue; // not a pair the model was trained for (dropped from the split too)
    try {
      sources.push_back(encode(p.source));
    } catch (const std::exception &) {
      continue; // too long a source
    }
    references.push_back(data.target.encode(target));
    written.push_back(p.target);
  }
  if (sources.empty())
    return Accuracy();
  std::vector<std::vector<int32_t>> outputs;
  std::vector<std::string> texts;
  for (const std::vector<Hypothesis> &hyps : decode(sources)) {
    outputs.push_back(hyps[0].tokens);
    texts.push_back(text(hyps[0]));
  }
  Accuracy a = scoreOutputs(outputs, references);
  a.bleu = corpusBleu(texts, written);
  a.chrf = corpusChrf(texts, written);
  return a;
}

Accuracy scoreOutputs(const std::vector<std::vector<int32_t>> &outputs,
                      const std::vector<std::vector<int32_t>> &references) {
  Accuracy a;
  a.count = (int64_t)outputs.size();
  if (!a.count)
    return a;
  int64_t exact = 0, mismatched = 0, positions = 0, right = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<int32_t> &got = outputs[i], &want = references.at(i);
    exact += got == want;
    mismatched += got.size() != want.size();
    positions += (int64_t)std::max(got.size(), want.size());
    for (size_t t = 0; t < want.size() && t < got.size(); ++t)
      right += got[t] == want[t];
  }
  a.exactMatch = (double)exact / (double)a.count;
  a.tokenAccuracy = positions ? (double)right / (double)positions : 1.0;
  a.lengthMismatch = (double)mismatched / (double)a.count;
  return a;
}

size_t Seq2SeqDecoder::maxLength() const {
  return config_.maxLength ? (size_t)config_.maxLength : (size_t)data.targetLength;
}

} // namespace attn::task
