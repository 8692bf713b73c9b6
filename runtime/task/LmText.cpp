// A language model's own text (task: lm with data.path; attn/task/Data.h: buildText).
//
// The text is a token stream: each line's tokens (data.tokens) and then kEndOfLine. It is read
// in passes and never held: one counts the tokens, one the training part's (the vocabulary),
// one gathers the windows of both splits at positions drawn beforehand. So memory holds data.train +
// data.valid windows and the vocabulary, whatever the file's size; data.stream only lifts the
// in-memory size limit, as for pairs.
#include "attn/task/Data.h"

#include "attn/File.h"
#include "attn/Random.h"
#include "attn/Utf8.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <functional>
#include <stdexcept>

namespace attn::task {

namespace {

// Calls `sink(token)` for every token of `path`, line by line; the tokenizer sees each line
// without its newline. Lines that are not UTF-8 are located errors.
void forEachToken(const std::string &path, const data::Tokenizer &tokenizer, bool stream,
                  const std::function<void(const std::string &)> &sink) {
  checkRegularFile(path, stream ? UINT64_MAX : kMaxDataFileBytes, "text file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw FileError(path, "cannot open file");
  std::string line;
  int64_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (size_t bad = invalidUtf8(line); bad != std::string::npos)
      throw std::runtime_error(path + ":" + std::to_string(lineNo) +
                               ": error: the line is not UTF-8 text (byte " +
                               std::to_string(bad + 1) + " of the line)");
    for (const std::string &t : textTokens(line, tokenizer))
      sink(t);
  }
  if (in.bad())
    throw FileError(path, "read error");
}

// The first `count` lines of `path` (a subword model's training text).
std::vector<std::string> firstLines(const std::string &path, int64_t count) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; (int64_t)lines.size() < count && std::getline(in, line);)
    if (!line.empty())
      lines.push_back(line);
  return lines;
}

// Windows of window + 1 ids to draw from the token positions [first, last) of a text: `count`
// starts, uniform in [first, last - window - 1], from Rng(seed); row i of `out` is the i-th.
struct Draw {
  int64_t first, last, count;
  uint64_t seed;
  const char *split; // for messages: "training", ...
  std::vector<int32_t> *out;
};

// Every draw's windows, gathered in one pass over `path`.
void gatherWindows(const std::string &path, const PairData &data, bool stream, int64_t window,
                   const std::vector<Draw> &draws) {
  int64_t span = window + 1;
  struct Start {
    int64_t position, row;
    std::vector<int32_t> *out;
  };
  std::vector<Start> starts;
  for (const Draw &d : draws) {
    int64_t choices = d.last - d.first - window;
    if (choices < 1)
      throw std::runtime_error(path + ": error: the " + d.split + " text holds " +
                               std::to_string(std::max<int64_t>(d.last - d.first, 0)) +
                               " tokens: fewer than data.window + 1 = " + std::to_string(span) +
                               " (one window and its next token)");
    d.out->assign((size_t)(d.count * span), 0);
    Rng rng(d.seed);
    for (int64_t row = 0; row < d.count; ++row)
      starts.push_back({d.first + (int64_t)(rng.next() % (uint64_t)choices), row, d.out});
  }
  std::stable_sort(starts.begin(), starts.end(),
                   [](const Start &a, const Start &b) { return a.position < b.position; });
  std::deque<int32_t> recent; // the last `span` ids
  int64_t position = 0;
  size_t next = 0;
  forEachToken(path, data.sourceTokens, stream, [&](const std::string &token) {
    recent.push_back(data.source.id(token));
    if ((int64_t)recent.size() > span)
      recent.pop_front();
    ++position;
    // A window starting at s is complete once the token at s + window is in.
    for (; next < starts.size() && starts[next].position + span == position; ++next)
      std::copy(recent.begin(), recent.end(), starts[next].out->begin() + starts[next].row * span);
  });
}

} // namespace

std::vector<std::string> textTokens(const std::string &line, const data::Tokenizer &tokenizer) {
  std::vector<std::string> tokens = tokenizer.tokenize(line);
  tokens.push_back(kEndOfLine);
  return tokens;
}

std::string textOf(const std::vector<std::string> &tokens, const data::Tokenizer &tokenizer) {
  std::string text;
  std::vector<std::string> line;
  for (const std::string &t : tokens) {
    if (t != kEndOfLine) {
      line.push_back(t);
      continue;
    }
    text += tokenizer.detokenize(line) + "\n";
    line.clear();
  }
  return text + tokenizer.detokenize(line);
}

void buildText(const DataConfig &d, PairData &data, const PairData *tokenizers) {
  // The tokenizer: the compiled model's, else characters, words, or a subword model trained on
  // the text's first kSubwordSample lines (the user's SentencePiece model for sentencepiece).
  if (tokenizers) {
    data.sourceTokens = tokenizers->sourceTokens;
  } else if (d.tokens == data::Tokenize::SentencePiece) {
    std::string model = readRegularFile(d.spmModel, kMaxDataFileBytes, "SentencePiece model");
    data.sourceTokens = data::Tokenizer::load(d.tokens, model, d.spmModel);
  } else if (data::isSubwords(d.tokens)) {
    data.sourceTokens = data::Tokenizer::train(d.tokens, firstLines(d.path, kSubwordSample),
                                               d.vocabSize, "the training text");
  } else {
    data.sourceTokens = d.tokens;
  }
  // The held-out split: data.valid_path, else the text's last tenth (by tokens).
  int64_t total = 0;
  forEachToken(d.path, data.sourceTokens, d.stream, [&](const std::string &) { ++total; });
  int64_t cut = d.validPath.empty() ? total - total / 10 : total;
  // The vocabulary: the compiled model's, else that of the training part's tokens (the end of
  // line among them).
  if (tokenizers) {
    data.source = tokenizers->source;
  } else {
    data::TokenCounts counts;
    int64_t position = 0;
    forEachToken(d.path, data.sourceTokens, d.stream, [&](const std::string &t) {
      if (position++ < cut)
        ++counts[t];
    });
    data.source = data::Vocab::fromCounts(counts, d.minCount, d.maxVocab);
  }
  data.target = data.source;
  data.targetTokens = data.sourceTokens;
  data.sourceLength = data.targetLength = d.window;
  Draw train{0, cut, d.train, d.seed, "training", &data.textWindows[0]};
  if (d.validPath.empty()) { // both splits in one pass
    gatherWindows(d.path, data, d.stream, d.window,
                  {train, {cut, total, d.valid, d.seed + 1, "held-out (the last tenth)",
                           &data.textWindows[1]}});
  } else {
    gatherWindows(d.path, data, d.stream, d.window, {train});
    int64_t validTotal = 0;
    forEachToken(d.validPath, data.sourceTokens, d.stream,
                 [&](const std::string &) { ++validTotal; });
    gatherWindows(d.validPath, data, d.stream, d.window,
                  {{0, validTotal, d.valid, d.seed + 1, "validation", &data.textWindows[1]}});
  }
  data.textFingerprint = std::to_string(total) + "-" + std::to_string(cut);
}

train::Split textSplit(const PairData &data, bool training) {
  const std::vector<int32_t> &windows = data.textWindows[training ? 0 : 1];
  int64_t window = data.sourceLength, span = window + 1;
  int64_t count = (int64_t)windows.size() / span;
  Tensor x(ATTN_I32, {count, window}), y(ATTN_I32, {count, window});
  for (int64_t i = 0; i < count; ++i) {
    const int32_t *w = windows.data() + i * span;
    std::copy(w, w + window, x.data<int32_t>() + i * window);
    std::copy(w + 1, w + span, y.data<int32_t>() + i * window);
  }
  return {std::move(x), std::move(y)};
}

} // namespace attn::task
