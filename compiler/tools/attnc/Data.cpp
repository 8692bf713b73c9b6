#include "Data.h"

#include "attn/Numbers.h"

#include "attn/Random.h"
#include "attn/data/Sine.h"
#include "attn/train/Schedule.h"

#include <algorithm>
#include <stdexcept>

namespace attnc {
namespace {

attn::train::Split split(const attn::yaml::Spec &s, bool train) {
  if (usesPairs(s)) {
    const PairData &d = pairData(s);
    return pairSplit(s, d, train ? d.train : d.valid);
  }
  int64_t count = train ? s.data.train : s.data.valid;
  // The validation split is drawn with the next seed (and, for text, from the held-out end).
  uint64_t seed = train ? s.data.seed : s.data.seed + 1;
  attn::data::Examples ex;
  if (s.data.builtin == "text") {
    const std::string &text = attn::data::builtinText();
    size_t cut = attn::data::validationStart(text);
    ex = train ? attn::data::makeCharWindows(text, textVocab(), 0, cut, s.data.window, count, seed)
               : attn::data::makeCharWindows(text, textVocab(), cut, text.size(), s.data.window,
                                             count, seed);
  } else {
    ex = attn::data::makeSine(s.data.window, count, seed);
  }
  return {std::move(ex.x), std::move(ex.y)};
}

} // namespace

attn::train::Split trainSplit(const attn::yaml::Spec &spec) { return split(spec, true); }
attn::train::Split validSplit(const attn::yaml::Spec &spec) { return split(spec, false); }

bool usesPairs(const attn::yaml::Spec &s) {
  return s.task == "seq2seq" || s.task == "tag" || s.task == "classify";
}

attn::train::BatchHook perStepInputs(const attn::yaml::Spec &s) {
  attn::train::TeacherForcingSpec tf;
  tf.schedule = s.train.teacherForcing.schedule;
  tf.ratio = s.train.teacherForcing.ratio;
  tf.slope = s.train.teacherForcing.slope;
  tf.k = s.train.teacherForcing.k;
  tf.min = s.train.teacherForcing.min;
  attn::train::teacherForcingProbability(tf, 1); // reports a bad k before training starts
  double dropout = s.model.rnn           ? s.model.rnn->dropout
                   : s.model.transformer ? s.model.transformer->dropout
                                         : 0.0;
  uint64_t seed = s.train.seed;
  return [tf, dropout, seed](int64_t step, const std::string &name, attn::Tensor &t) {
    float *v = t.data<float>();
    if (step == 0) {
      std::fill(v, v + t.numel(), 1.0f);
      return;
    }
    attn::Rng rng(attn::fnv1a64(name) ^ (seed * 1000003ull + (uint64_t)step));
    if (name == "teacher") {
      double p = attn::train::teacherForcingProbability(tf, step);
      int64_t steps = t.shape()[1];
      for (int64_t k = 0; k < t.numel(); ++k)
        v[k] = k % steps == 0 || rng.nextDouble() < p ? 1.0f : 0.0f;
      return;
    }
    if (name.rfind("dropout", 0) == 0) {
      float keep = (float)(1.0 / (1.0 - dropout));
      for (int64_t k = 0; k < t.numel(); ++k)
        v[k] = rng.nextDouble() < dropout ? 0.0f : keep;
      return;
    }
    throw std::runtime_error("attn: no per-step rule for the input '" + name + "'");
  };
}

namespace {

std::vector<std::vector<std::string>> tokenized(const std::vector<attn::data::Pair> &pairs,
                                                bool source, attn::data::Tokenize how) {
  std::vector<std::vector<std::string>> out;
  for (const attn::data::Pair &p : pairs)
    out.push_back(attn::data::tokenize(source ? p.source : p.target, how));
  return out;
}

PairData buildSeq2Seq(const attn::yaml::Spec &s) {
  const attn::yaml::DataSpec &d = s.data;
  PairData data;
  data.tokenize = d.tokens == "char" ? attn::data::Tokenize::Char : attn::data::Tokenize::Word;
  data.sourceLength = d.maxLen;
  data.targetLength = s.task == "seq2seq" ? d.maxLen + 1 : 0;
  // The validation pairs are drawn with the next seed.
  if (d.builtin == "copy" || d.builtin == "reverse") {
    auto make = d.builtin == "copy" ? attn::data::makeCopy : attn::data::makeReverse;
    data.train = make(d.train, d.minLen, d.maxLen, d.symbols, d.seed);
    data.valid = make(d.valid, d.minLen, d.maxLen, d.symbols, d.seed + 1);
  } else if (d.builtin == "dates") {
    data.train = attn::data::makeDates(d.train, d.seed);
    data.valid = attn::data::makeDates(d.valid, d.seed + 1);
  } else if (d.builtin == "pos") {
    data.train = attn::data::makePosTags(d.train, d.seed);
    data.valid = attn::data::makePosTags(d.valid, d.seed + 1);
  } else if (d.builtin == "majority") {
    data.train = attn::data::makeMajority(d.train, d.minLen, d.maxLen, d.symbols, d.seed);
    data.valid = attn::data::makeMajority(d.valid, d.minLen, d.maxLen, d.symbols, d.seed + 1);
  } else {
    data.train = attn::data::readTsv(d.path);
    if (!d.validPath.empty()) {
      data.valid = attn::data::readTsv(d.validPath);
    } else {
      if ((int64_t)data.train.size() <= d.valid)
        throw std::runtime_error(d.path + ": " + std::to_string(data.train.size()) +
                                 " pairs leave none for training after holding out data.valid = " +
                                 std::to_string(d.valid));
      data.valid.assign(data.train.end() - d.valid, data.train.end());
      data.train.resize(data.train.size() - d.valid);
    }
  }
  // One vocabulary for both sides, when they share one embedding table.
  if (s.model.transformer && s.model.transformer->shareEmbeddings) {
    auto both = tokenized(data.train, true, data.tokenize);
    auto targets = tokenized(data.train, false, data.tokenize);
    both.insert(both.end(), targets.begin(), targets.end());
    data.source = data.target = attn::data::Vocab::build(both, d.minCount, d.maxVocab);
    return data;
  }
  data.source = attn::data::Vocab::build(tokenized(data.train, true, data.tokenize), d.minCount,
                                         d.maxVocab);
  // Tags and labels are words whatever the source's tokens; all of them are kept.
  if (s.task == "seq2seq")
    data.target = attn::data::Vocab::build(tokenized(data.train, false, data.tokenize),
                                           d.minCount, d.maxVocab);
  else
    data.target = attn::data::Vocab::build(
        tokenized(data.train, false, attn::data::Tokenize::Word), 1, 0);
  return data;
}

} // namespace

const PairData &pairData(const attn::yaml::Spec &spec) {
  static std::map<std::string, PairData> cache; // by the spec's text
  std::string key = attn::yaml::specToYaml(spec);
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, buildSeq2Seq(spec)).first;
  return it->second;
}

std::map<std::string, std::string> pairMetadata(const PairData &d) {
  return {{"source_vocab", d.source.serialize()},
          {"target_vocab", d.target.serialize()},
          {"source_length", std::to_string(d.sourceLength)},
          {"target_length", std::to_string(d.targetLength)}};
}

PairData pairDataFromMetadata(const attn::yaml::Spec &spec,
                                const std::map<std::string, std::string> &meta,
                                const std::string &file) {
  for (const char *key : {"source_vocab", "target_vocab", "source_length", "target_length"})
    if (!meta.count(key))
      throw std::runtime_error(file + ": a seq2seq checkpoint needs '" + key +
                               "' in its metadata");
  PairData d;
  d.tokenize = spec.data.tokens == "char" ? attn::data::Tokenize::Char
                                          : attn::data::Tokenize::Word;
  // Every field is checked before it shapes a program: a seq2seq target_length of "0"
  // crashed the lowering. The lengths are those the importer makes of data.max_len (<= 4096):
  // the source's, and a seq2seq target's with its end token (taggers and classifiers have
  // no target sequence: 0).
  try {
    d.source = attn::data::Vocab::deserialize(meta.at("source_vocab"));
    d.target = attn::data::Vocab::deserialize(meta.at("target_vocab"));
    d.sourceLength = attn::parseInt(meta.at("source_length"), 1, 8192, "'source_length'");
    d.targetLength = attn::parseInt(meta.at("target_length"), spec.task == "seq2seq" ? 2 : 0,
                                    8192, "'target_length'");
  } catch (const std::exception &e) {
    throw std::runtime_error(file + ": the checkpoint's metadata is damaged: " + e.what());
  }
  return d;
}

attn::yaml::ImportOptions pairImportOptions(const PairData &d) {
  attn::yaml::ImportOptions o;
  o.sourceVocab = d.source.size();
  o.targetVocab = d.target.size();
  o.sourceLength = d.sourceLength;
  o.targetLength = d.targetLength;
  return o;
}

attn::train::Split pairSplit(const attn::yaml::Spec &spec, const PairData &d,
                             const std::vector<attn::data::Pair> &pairs) {
  if (spec.task != "seq2seq") {
    attn::data::LabelledTensors t =
        spec.task == "tag"
            ? attn::data::encodeTagged(pairs, d.source, d.target, d.tokenize, d.sourceLength)
            : attn::data::encodeClassified(pairs, d.source, d.target, d.tokenize,
                                           d.sourceLength);
    return {std::move(t.src), std::move(t.srcMask), std::move(t.labels)};
  }
  attn::data::Seq2SeqTensors t = attn::data::encodePairs(
      pairs, d.source, d.target, d.tokenize, d.tokenize, d.sourceLength, d.targetLength,
      spec.model.seq2seq.reverseSource);
  return {std::move(t.src), std::move(t.srcMask), std::move(t.tgtIn), std::move(t.tgtOut)};
}

const attn::data::CharVocab &textVocab() {
  static const attn::data::CharVocab vocab(attn::data::builtinText());
  return vocab;
}

} // namespace attnc
