// Paired text: (source, target) for sequence-to-sequence models, (tokens, tags) for sequence
// labelling and (text, label) for classification. TSV files, builtin generated tasks (copy,
// reverse, date formats, part-of-speech tags, majority symbol), and their encoding into padded
// id tensors.
#ifndef ATTN_DATA_PARALLEL_H
#define ATTN_DATA_PARALLEL_H

#include "attn/Tensor.h"
#include "attn/data/Tokenizer.h"
#include "attn/data/Vocab.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

struct Pair {
  std::string source, target;
  int64_t line = 0; // 1-based, in the file it was read from; 0 for generated pairs
};

// One pair per line, "source<TAB>target"; a trailing "\r" (CRLF files) is removed and lines
// that are empty or all whitespace are skipped. The fields are kept as they are (tokenize()
// decides what their whitespace means). Errors (std::runtime_error), 1-based lines:
//   "pairs.tsv:3: error: expected one tab between source and target, found 2"
//   "pairs.tsv:4: error: the line is not UTF-8 text (byte 2 of the line)"
//   "pairs.tsv: error: cannot open file: No such file or directory"
// Every bad line is found: one is reported as above, several as one error listing the first
// BadLines::kShown and counting the rest. With `skipBadLines` (data.skip_bad_lines) they are
// left out instead, and counted in a warning on stderr. Files over 1 GiB are refused: they are
// streamed (data.stream, attn/data/PairIndex.h).
std::vector<Pair> readTsv(const std::string &path, bool skipBadLines = false);
// One line of such a file (its "\n" removed) as `pair`, with readTsv's errors naming
// path:lineNo; false for an empty or all-whitespace line.
bool parseTsvLine(std::string &line, int64_t lineNo, const std::string &path, Pair &pair);

// The lines of a file that cannot be read, gathered while it is read to the end: a corpus
// with many bad lines takes one run to see them, not one run per line.
class BadLines {
public:
  static constexpr size_t kShown = 20;
  BadLines(std::string path, bool skip) : path_(std::move(path)), skip_(skip) {}
  /// One line's located error ("pairs.tsv:3: error: ...").
  void add(const std::string &error);
  /// At the end of the file: throws (std::runtime_error) when there were bad lines and they
  /// are not skipped; else says on stderr how many were left out.
  void finish() const;
  int64_t count() const { return count_; }

private:
  std::string path_;
  bool skip_;
  std::vector<std::string> shown_;
  int64_t count_ = 0;
};

// Builtin tasks. Symbols are the words "0".."9", "a".."z", "A".."Z" (the first `symbols` of
// them; 2 <= symbols <= 62). The source is a uniformly drawn length in [minLen, maxLen]
// (1 <= minLen <= maxLen) of uniformly drawn symbols joined by single spaces; the target is
// the same sequence (copy) or reversed (reverse). Rng(seed) draws, per pair, the length and
// then the symbols. Throws std::runtime_error on invalid arguments.
std::vector<Pair> makeCopy(int64_t count, int64_t minLen, int64_t maxLen, int64_t symbols,
                           uint64_t seed);
std::vector<Pair> makeReverse(int64_t count, int64_t minLen, int64_t maxLen, int64_t symbols,
                              uint64_t seed);

// Date-format translation: the source is a day drawn uniformly from 1950-01-01 .. 2049-12-31
// written in one of 11 human formats (drawn uniformly), the target its ISO form:
//   "5 March 2019", "March 5, 2019", "05/03/2019" (day first), "Tue 5 Mar 2019",
//   "2019 Mar 5", "5.3.19", "Tuesday, March 5, 2019", "5th of March 2019", "5 Mar 2019",
//   "03/05/19" (month first), "Tuesday, March 5th 2019"
//   -> "2019-03-05".
// Two-digit years are unambiguous because the range spans exactly one century (50..99 are
// 19xx, 00..49 are 20xx). Weekdays are computed from the proleptic Gregorian calendar.
std::vector<Pair> makeDates(int64_t count, uint64_t seed);

// Padded id tensors for N pairs (after dropping those too long):
//   src     i32 [N, srcLen]  source ids (reversed when reverseSource, as in Sutskever et al.
//                            2014), then kPad
//   srcMask f32 [N, srcLen]  1 for a source token, 0 for padding
//   tgtIn   i32 [N, tgtLen]  kBos y1 .. yn, then kPad      (the decoder's inputs)
//   tgtOut  i32 [N, tgtLen]  y1 .. yn kEos, then kPad      (what it must predict)
struct Seq2SeqTensors {
  Tensor src, srcMask, tgtIn, tgtOut;
  // Pairs left out: a source of more than srcLen tokens or none at all (nothing to attend
  // to), or a target of more than tgtLen - 1 tokens (eos needs a slot).
  int64_t dropped = 0;
};

// Unknown tokens become Vocab::kUnk. Throws std::runtime_error if srcLen < 1 or tgtLen < 2.
Seq2SeqTensors encodePairs(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                           const Vocab &tgtVocab, const Tokenizer &srcTok, const Tokenizer &tgtTok, int64_t srcLen,
                           int64_t tgtLen, bool reverseSource);

// One source line as encodePairs() encodes it, for translation: srcLen ids (padded with kPad)
// and, in `mask`, srcLen floats (1 token, 0 padding). Throws std::runtime_error if the line
// has no tokens or more than srcLen ("... has 12 tokens; the model reads at most 10").
std::vector<int32_t> encodeSource(const std::string &line, const Vocab &vocab, const Tokenizer &tok,
                                  int64_t srcLen, bool reverseSource, std::vector<float> &mask);

//===------------------------------------------------------------------------------------===//
// Sequence labelling (one tag per token) and classification (one label per sequence)
//===------------------------------------------------------------------------------------===//

// Part-of-speech tagging of a tiny generated English: sentences
//   DET [ADJ] NOUN VERB DET [ADJ] NOUN [ADV]
// (e.g. "the old dog sees a fly") with source = the words and target = their tags, one per
// word ("DET ADJ NOUN VERB DET NOUN"). The words "fly", "watch" and "run" are nouns after a
// determiner or an adjective and verbs after a noun, so a tagger must read the context.
std::vector<Pair> makePosTags(int64_t count, uint64_t seed);

// Classification: minLen..maxLen symbols (as for makeCopy) of which exactly one is the most
// frequent; the target is that symbol. Throws std::runtime_error on invalid arguments
// (symbols in [2, 62]; maxLen >= 2).
std::vector<Pair> makeMajority(int64_t count, int64_t minLen, int64_t maxLen, int64_t symbols,
                               uint64_t seed);

// N kept pairs as
//   src    i32 [N, srcLen]  token ids, then kPad;  srcMask f32 [N, srcLen] 1 / 0
//   labels i32 [N, srcLen]  (tagged) the tag of each token, then kPad (ignored by the loss)
//          i32 [N]          (classified) the label of each source
// Tags are the target's whitespace-separated words; a pair whose tag count differs from its
// token count is an error naming the pair's 1-based index. Sources of no tokens or more
// than srcLen are dropped.
struct LabelledTensors {
  Tensor src, srcMask, labels;
  int64_t dropped = 0;
};
LabelledTensors encodeTagged(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                             const Vocab &tagVocab, const Tokenizer &srcTok, int64_t srcLen);
LabelledTensors encodeClassified(const std::vector<Pair> &pairs, const Vocab &srcVocab,
                                 const Vocab &labelVocab, const Tokenizer &srcTok, int64_t srcLen);

} // namespace attn::data

#endif // ATTN_DATA_PARALLEL_H
