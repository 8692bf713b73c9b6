#include "attn/task/Data.h"

#include "attn/File.h"
#include "attn/data/Sine.h"
#include "attn/data/TextFile.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace attn::task {

Task parseTask(const std::string &name) {
  for (Task t : {Task::Regress, Task::Lm, Task::Seq2Seq, Task::Tag, Task::Classify})
    if (name == taskName(t))
      return t;
  throw std::runtime_error("attn: unknown task '" + name + "'");
}

const char *taskName(Task task) {
  switch (task) {
  case Task::Regress: return "regress";
  case Task::Lm: return "lm";
  case Task::Seq2Seq: return "seq2seq";
  case Task::Tag: return "tag";
  case Task::Classify: return "classify";
  }
  return "?";
}

bool usesPairs(Task task) {
  return task == Task::Seq2Seq || task == Task::Tag || task == Task::Classify;
}

bool usesText(const DataConfig &c) { return c.task == Task::Lm && !c.path.empty(); }

bool hasVocabularies(const DataConfig &c) { return usesPairs(c.task) || usesText(c); }

namespace {

std::vector<std::vector<std::string>> tokenized(const std::vector<data::Pair> &pairs, bool source,
                                                const data::Tokenizer &how) {
  std::vector<std::vector<std::string>> out;
  for (const data::Pair &p : pairs)
    out.push_back(data::tokenize(source ? p.source : p.target, how));
  return out;
}

// A tagger's file gives one tag per source token, a classifier's one label per line: checked
// as the file is read, so that an error names its line (encodeTagged and encodeClassified,
// which see only pairs, check again).
// The located error of a pair whose labels do not fit its source; "" when they do.
std::string labelError(const DataConfig &d, const data::Pair &p, const std::string &file) {
  size_t labels = data::tokenize(p.target, data::Tokenize::Word).size();
  std::string where = file + ":" + std::to_string(p.line) + ": error: ";
  if (d.task == Task::Tag) {
    size_t tokens = data::tokenize(p.source, d.tokens).size();
    if (labels != tokens)
      return where + "the source has " + std::to_string(tokens) + " tokens but the line gives " +
             std::to_string(labels) + " tags (one per token)";
  } else if (d.task == Task::Classify && labels != 1) {
    return where + "a classifier's line must give one label, got '" + p.target + "'";
  }
  return "";
}

// Every pair of `file` whose labels do not fit, reported together, or left out with
// data.skip_bad_lines (data::BadLines).
void checkLabels(const DataConfig &d, std::vector<data::Pair> &pairs, const std::string &file) {
  if (d.task != Task::Tag && d.task != Task::Classify)
    return;
  data::BadLines bad(file, d.skipBadLines);
  std::vector<data::Pair> kept;
  for (data::Pair &p : pairs)
    if (std::string error = labelError(d, p, file); error.empty())
      kept.push_back(std::move(p));
    else
      bad.add(error);
  bad.finish();
  pairs = std::move(kept);
}

// The pairs of the builtin generators, or of the TSV files. The validation pairs are drawn
// with the next seed.
void readPairs(const DataConfig &d, PairData &data) {
  if (d.builtin == "copy" || d.builtin == "reverse") {
    auto make = d.builtin == "copy" ? data::makeCopy : data::makeReverse;
    data.train = make(d.train, d.minLen, d.maxLen, d.symbols, d.seed);
    data.valid = make(d.valid, d.minLen, d.maxLen, d.symbols, d.seed + 1);
  } else if (d.builtin == "dates") {
    data.train = data::makeDates(d.train, d.seed);
    data.valid = data::makeDates(d.valid, d.seed + 1);
  } else if (d.builtin == "pos") {
    data.train = data::makePosTags(d.train, d.seed);
    data.valid = data::makePosTags(d.valid, d.seed + 1);
  } else if (d.builtin == "majority") {
    data.train = data::makeMajority(d.train, d.minLen, d.maxLen, d.symbols, d.seed);
    data.valid = data::makeMajority(d.valid, d.minLen, d.maxLen, d.symbols, d.seed + 1);
  } else if (!d.builtin.empty()) {
    throw std::runtime_error("attn: the builtin data '" + d.builtin + "' holds no text pairs");
  } else {
    try {
      data.train = data::readTsv(d.path, d.skipBadLines);
    } catch (const FileError &e) {
      if (checkRegularFile(d.path, UINT64_MAX, "data file") > kMaxDataFileBytes)
        throw FileError(e.path, e.why + "; data.stream: true trains on it without reading it "
                                        "into memory");
      throw;
    }
    checkLabels(d, data.train, d.path);
    if (!d.validPath.empty()) {
      data.valid = data::readTsv(d.validPath, d.skipBadLines);
      checkLabels(d, data.valid, d.validPath);
    } else {
      if ((int64_t)data.train.size() <= d.valid)
        throw std::runtime_error(d.path + ": " + std::to_string(data.train.size()) +
                                 " pairs leave none for training after holding out data.valid = " +
                                 std::to_string(d.valid));
      data.valid.assign(data.train.end() - d.valid, data.train.end());
      data.train.resize(data.train.size() - d.valid);
    }
  }
}

// The side's lines of `pairs`, for training a subword model on them.
std::vector<std::string> lines(const std::vector<data::Pair> &pairs, bool source) {
  std::vector<std::string> out;
  for (const data::Pair &p : pairs)
    out.push_back(source ? p.source : p.target);
  return out;
}

// The tokenizers of data.tokens: characters or words as they are; a unigram or BPE model
// trained on the training pairs, one per side or one for both (data.shared_vocab); the user's
// SentencePiece model (data.spm_model) for both.
void makeTokenizers(const DataConfig &d, PairData &data) {
  bool labels = d.task != Task::Seq2Seq; // tags and labels are words
  if (!data::isSubwords(d.tokens)) {
    data.sourceTokens = d.tokens;
    data.targetTokens = labels ? data::Tokenize::Word : d.tokens;
    return;
  }
  if (d.tokens == data::Tokenize::SentencePiece) {
    std::string model = readRegularFile(d.spmModel, kMaxDataFileBytes, "SentencePiece model");
    data.sourceTokens = data::Tokenizer::load(d.tokens, model, d.spmModel);
  } else if (d.sharedVocab && !labels) {
    std::vector<std::string> both = lines(data.train, true), targets = lines(data.train, false);
    both.insert(both.end(), targets.begin(), targets.end());
    data.sourceTokens = data::Tokenizer::train(d.tokens, both, d.vocabSize, "the training pairs");
  } else {
    data.sourceTokens = data::Tokenizer::train(d.tokens, lines(data.train, true), d.vocabSize,
                                               "the training sources");
    if (!labels)
      data.targetTokens = data::Tokenizer::train(d.tokens, lines(data.train, false),
                                                 d.vocabSize, "the training targets");
  }
  if (labels)
    data.targetTokens = data::Tokenize::Word;
  else if (d.tokens == data::Tokenize::SentencePiece || d.sharedVocab)
    data.targetTokens = data.sourceTokens;
}

} // namespace

namespace {

// The validation pairs and the index of a streamed corpus (the training pairs stay in the
// file), with vocabularies from the index's token counts.
void streamPairs(const DataConfig &d, PairData &data, const PairData *tokenizers) {
  if (d.path.empty())
    throw std::runtime_error("attn: data.stream reads data.path; the builtin data '" + d.builtin +
                             "' is generated in memory");
  int64_t holdOut = d.validPath.empty() ? d.valid : 0;
  if (tokenizers) {
    data.sourceTokens = tokenizers->sourceTokens;
    data.targetTokens = tokenizers->targetTokens;
  } else {
    // Subword models learn from a sample of the training pairs (as spm_train's
    // input_sentence_size does); characters and words need none.
    if (data::isSubwords(d.tokens) && d.tokens != data::Tokenize::SentencePiece)
      data.train = data::readTsvSample(d.path, kSubwordSample, holdOut);
    makeTokenizers(d, data);
    data.train.clear();
    data.train.shrink_to_fit();
  }
  data::PairIndex::Options o;
  o.source = data.sourceTokens;
  o.target = data.targetTokens;
  o.holdOut = holdOut;
  o.skipBadLines = d.skipBadLines;
  if (!d.cacheDir.empty())
    o.cachePath = d.cacheDir + "/" + std::filesystem::path(d.path).filename().string();
  if (d.task != Task::Seq2Seq)
    o.check = [&d](const data::Pair &p, const std::string &path) {
      if (std::string error = labelError(d, p, path); !error.empty())
        throw std::runtime_error(error);
    };
  auto index = std::make_shared<data::PairIndex>(data::PairIndex::open(d.path, o));
  if (holdOut > 0) {
    if (index->size() <= holdOut)
      throw std::runtime_error(d.path + ": " + std::to_string(index->size()) +
                               " pairs leave none for training after holding out data.valid = " +
                               std::to_string(holdOut));
    data.valid = index->pairs(index->entries(index->size() - holdOut, holdOut));
  } else {
    data.valid = data::readTsv(d.validPath, d.skipBadLines);
    checkLabels(d, data.valid, d.validPath);
  }
  data.streamTrain = index->size() - holdOut;
  if (d.sharedVocab) {
    data::TokenCounts both = index->sourceCounts();
    for (const auto &[token, n] : index->targetCounts())
      both[token] += n;
    data.source = data.target = data::Vocab::fromCounts(both, d.minCount, d.maxVocab);
  } else {
    data.source = data::Vocab::fromCounts(index->sourceCounts(), d.minCount, d.maxVocab);
    data.target = d.task == Task::Seq2Seq
                      ? data::Vocab::fromCounts(index->targetCounts(), d.minCount, d.maxVocab)
                      : data::Vocab::fromCounts(index->targetCounts(), 1, 0);
  }
  data.stream = std::move(index);
}

} // namespace

PairData buildPairs(const DataConfig &d, const PairData *tokenizers) {
  PairData data;
  if (usesText(d)) {
    buildText(d, data, tokenizers);
    return data;
  }
  data.reverseSource = d.reverseSource;
  data.sourceLength = d.maxLen;
  data.targetLength = d.task == Task::Seq2Seq ? d.maxLen + 1 : 0;
  if (d.stream) {
    streamPairs(d, data, tokenizers);
    return data;
  }
  readPairs(d, data);
  if (tokenizers) {
    data.sourceTokens = tokenizers->sourceTokens;
    data.targetTokens = tokenizers->targetTokens;
  } else {
    makeTokenizers(d, data);
  }
  // One vocabulary for both sides, when they share one embedding table.
  if (d.sharedVocab) {
    auto both = tokenized(data.train, true, data.sourceTokens);
    auto targets = tokenized(data.train, false, data.targetTokens);
    both.insert(both.end(), targets.begin(), targets.end());
    data.source = data.target = data::Vocab::build(both, d.minCount, d.maxVocab);
    return data;
  }
  data.source =
      data::Vocab::build(tokenized(data.train, true, data.sourceTokens), d.minCount, d.maxVocab);
  // Tags and labels are words whatever the source's tokens; all of them are kept.
  if (d.task == Task::Seq2Seq)
    data.target = data::Vocab::build(tokenized(data.train, false, data.targetTokens),
                                     d.minCount, d.maxVocab);
  else
    data.target = data::Vocab::build(tokenized(data.train, false, data.targetTokens), 1, 0);
  return data;
}

train::Split pairSplit(Task task, const PairData &d, const std::vector<data::Pair> &pairs) {
  if (task != Task::Seq2Seq) {
    data::LabelledTensors t =
        task == Task::Tag
            ? data::encodeTagged(pairs, d.source, d.target, d.sourceTokens, d.sourceLength)
            : data::encodeClassified(pairs, d.source, d.target, d.sourceTokens, d.sourceLength);
    return {std::move(t.src), std::move(t.srcMask), std::move(t.labels)};
  }
  data::Seq2SeqTensors t =
      data::encodePairs(pairs, d.source, d.target, d.sourceTokens, d.targetTokens, d.sourceLength,
                        d.targetLength, d.reverseSource);
  return {std::move(t.src), std::move(t.srcMask), std::move(t.tgtIn), std::move(t.tgtOut)};
}

namespace {

// Any task's split: pairs, windows of a series (regress), or windows of the builtin text (lm).
train::Split split(const DataConfig &c, const PairData *pairs, bool training) {
  if (usesText(c)) {
    if (!pairs)
      throw std::logic_error("attn::task: a language model's text split needs its PairData");
    return textSplit(*pairs, training);
  }
  if (usesPairs(c.task)) {
    if (!pairs)
      throw std::logic_error("attn::task: a pair task's split needs its PairData");
    if (training && pairs->stream)
      throw std::logic_error("attn::task: a streamed corpus's training pairs are read by "
                             "StreamedPairs, not held as a split");
    return pairSplit(c.task, *pairs, training ? pairs->train : pairs->valid);
  }
  data::Examples ex;
  if (c.task == Task::Regress) {
    ex = seriesSplit(c, training);
  } else {
    // The validation split is drawn with the next seed, from the held-out end of the text.
    const std::string &text = data::builtinText();
    size_t cut = data::validationStart(text);
    int64_t count = training ? c.train : c.valid;
    uint64_t seed = training ? c.seed : c.seed + 1;
    ex = training
             ? data::makeCharWindows(text, textVocab(), 0, cut, c.window, count, seed)
             : data::makeCharWindows(text, textVocab(), cut, text.size(), c.window, count, seed);
  }
  return {std::move(ex.x), std::move(ex.y)};
}

} // namespace

data::Examples seriesExamples(const DataConfig &c, int64_t count, uint64_t seed) {
  if (!c.path.empty())
    throw std::logic_error("attn::task: seriesExamples draws builtin data; a file has seriesSplit");
  if (c.builtin == "sines")
    return data::makeSines(c.window, c.horizon, count, seed);
  if (c.builtin == "wave")
    return data::makeWave(c.horizon, count, seed);
  return data::makeSine(c.window, count, seed, c.horizon);
}

namespace {
// Every window of N + M consecutive values of `series` starting in [first, end): x [n, N],
// y [n, M].
data::Examples windows(const std::vector<float> &series, int64_t first, int64_t end, int64_t window,
                       int64_t horizon) {
  int64_t n = std::max<int64_t>(0, end - first);
  data::Examples ex{Tensor(ATTN_F32, {n, window}), Tensor(ATTN_F32, {n, horizon})};
  for (int64_t i = 0; i < n; ++i) {
    const float *s = series.data() + first + i;
    std::copy(s, s + window, ex.x.data<float>() + i * window);
    std::copy(s + window, s + window + horizon, ex.y.data<float>() + i * horizon);
  }
  return ex;
}
} // namespace

namespace {
// One to many from a file: every line a vector of c.features numbers and its c.horizon
// targets; the last c.valid lines validate unless there is a validation file.
data::Examples vectorSplit(const DataConfig &c, bool training) {
  int64_t width = c.features + c.horizon;
  const std::string &path = training || c.validPath.empty() ? c.path : c.validPath;
  Tensor rows = data::readNumbers(path, width);
  int64_t n = rows.shape()[0], first = 0, end = n;
  if (c.validPath.empty()) {
    if (n <= c.valid)
      throw std::runtime_error(c.path + ": error: " + std::to_string(n) +
                               " examples, but data.valid = " + std::to_string(c.valid) +
                               " validation examples and at least one training example need " +
                               std::to_string(c.valid + 1));
    first = training ? 0 : n - c.valid;
    end = training ? n - c.valid : n;
  }
  data::Examples ex{Tensor(ATTN_F32, {end - first, c.features}),
                    Tensor(ATTN_F32, {end - first, c.horizon})};
  for (int64_t i = first; i < end; ++i) {
    const float *row = rows.data<float>() + i * width;
    std::copy(row, row + c.features, ex.x.data<float>() + (i - first) * c.features);
    std::copy(row + c.features, row + width, ex.y.data<float>() + (i - first) * c.horizon);
  }
  return ex;
}
} // namespace

data::Examples seriesSplit(const DataConfig &c, bool training) {
  if (c.path.empty())
    return seriesExamples(c, training ? c.train : c.valid, training ? c.seed : c.seed + 1);
  if (c.features > 0)
    return vectorSplit(c, training);
  int64_t span = c.window + c.horizon;
  std::vector<float> series =
      data::readSeries(training || c.validPath.empty() ? c.path : c.validPath);
  int64_t starts = (int64_t)series.size() - span + 1; // windows in the file
  // "series.csv: error: 20 values hold 16 windows of ... 5 values; <need>"
  auto tooShort = [&](const std::string &path, const std::string &need) {
    throw std::runtime_error(path + ": error: " + std::to_string(series.size()) + " values hold " +
                             std::to_string(std::max<int64_t>(starts, 0)) +
                             " windows of data.window + data.horizon = " + std::to_string(span) +
                             " values; " + need);
  };
  if (!c.validPath.empty()) { // a file per split: every window of it
    if (starts < 1)
      tooShort(training ? c.path : c.validPath,
               std::string(training ? "training" : "validation") + " needs at least one");
    return windows(series, 0, starts, c.window, c.horizon);
  }
  // One file: the last data.valid windows validate; training takes the windows that end
  // before the first of them starts, so no value is in both splits.
  int64_t validFirst = starts - c.valid;
  int64_t trainEnd = c.valid > 0 ? validFirst - span + 1 : starts;
  if (trainEnd < 1)
    tooShort(c.path, "data.valid = " + std::to_string(c.valid) +
                         " validation windows and at least one training window need " +
                         std::to_string(c.valid + span));
  return training ? windows(series, 0, trainEnd, c.window, c.horizon)
                  : windows(series, validFirst, starts, c.window, c.horizon);
}

train::Split trainSplit(const DataConfig &config, const PairData *pairs) {
  return split(config, pairs, true);
}
train::Split validSplit(const DataConfig &config, const PairData *pairs) {
  return split(config, pairs, false);
}

const data::CharVocab &textVocab() {
  static const data::CharVocab vocab(data::builtinText());
  return vocab;
}

} // namespace attn::task
