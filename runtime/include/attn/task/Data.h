// What a task reads at run time, without the compiler: its data, as the splits the training
// loop and evaluation read, and the vocabularies a program was compiled for. Described by a
// DataConfig (the driver fills it from a spec's `data:` and `task:`), so an ahead-of-time
// program rebuilds the same data and vocabularies as `attnc train` did.
#ifndef ATTN_TASK_DATA_H
#define ATTN_TASK_DATA_H

#include "attn/data/PairIndex.h"
#include "attn/data/Parallel.h"
#include "attn/data/Text.h"
#include "attn/data/Tokenizer.h"
#include "attn/data/Vocab.h"
#include "attn/train/Trainer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::task {

enum class Task { Regress, Lm, Seq2Seq, Tag, Classify };

/// "regress" | "lm" | "seq2seq" | "tag" | "classify"; throws on anything else.
Task parseTask(const std::string &name);
const char *taskName(Task task);
/// Whether the task learns from text pairs (seq2seq, tag, classify).
bool usesPairs(Task task);


/// The data of one task, as a spec's `data:` section says it (see docs/yaml-reference.md).
struct DataConfig {
  Task task = Task::Regress;
  std::string builtin; // sine | sines | wave | text | copy | reverse | dates | pos | majority; or
  std::string path, validPath; // a TSV file of pairs (and its validation file)
  int64_t window = 16;         // sine, sines, text: the input length
  int64_t horizon = 1;         // sine, sines: the values to predict after the window
  int64_t features = 0;        // regress, path: lines of a vector this wide and its target
                               // (one to many); 0: the file is a series
  int64_t minLen = 3, maxLen = 10, symbols = 10;
  data::Tokenize tokens = data::Tokenize::Word;
  int64_t vocabSize = 8000;    // unigram, bpe: the SentencePiece model's pieces
  std::string spmModel;        // sentencepiece: the model file
  int64_t minCount = 1, maxVocab = 0;
  int64_t train = 2000, valid = 200;
  uint64_t seed = 1;
  bool sharedVocab = false;    // one vocabulary (and subword model) for both sides
  bool reverseSource = false;  // sources are read last token first
  bool skipBadLines = false;   // data.skip_bad_lines: bad lines of the files are left out
  // data.stream: the training file is indexed and read a block at a time (PairData::stream)
  // rather than held; data.stream_buffer pairs make a block, shuffled as one.
  bool stream = false;
  int64_t streamBuffer = 65536;
  // Where a streamed corpus's index is kept (the run directory's data/); empty: a temporary
  // index, built again by every run.
  std::string cacheDir;
};

/// A language model of the user's text (task lm with data.path), not of the builtin one.
bool usesText(const DataConfig &config);
/// Whether the task's data has vocabularies (and tokenizers) that a checkpoint carries: text
/// pairs, or a language model's own text (PairData, with source = target).
bool hasVocabularies(const DataConfig &config);

/// The data of a model that learns from text pairs: the vocabularies of the sources and of
/// the targets (output tokens, tags or labels), the compiled lengths (what a checkpoint must
/// carry to decode), and the pairs (only when built from the data, not from metadata).
struct PairData {
  data::Vocab source, target;
  // How each side's text becomes tokens (a tagger's and a classifier's targets: words).
  data::Tokenizer sourceTokens, targetTokens;
  bool reverseSource = false;
  int64_t sourceLength = 0; // S = data.max_len
  int64_t targetLength = 0; // seq2seq: S + 1 (room for eos); tag / classify: 0
  std::vector<data::Pair> train, valid;
  // A streamed corpus (DataConfig::stream): the training pairs stay in the file, `train` is
  // empty, and training reads them through StreamedPairs (attn/task/StreamedPairs.h).
  std::shared_ptr<const data::PairIndex> stream;
  int64_t streamTrain = 0; // its first streamTrain pairs train (the rest, held out, validate)
  // A language model's own text (usesText): the vocabulary and tokenizer are source's (target
  // is the same), sourceLength is data.window, and the training and validation windows are
  // data.window + 1 token ids each, row after row (buildText). textFingerprint: the text's
  // token count and the training part's.
  std::vector<int32_t> textWindows[2];
  std::string textFingerprint;
};

/// The token a language model's text ends each line with (its own vocabulary entry).
inline constexpr const char *kEndOfLine = "\n";
/// A line of a language model's text as tokens: the tokenizer's, then kEndOfLine.
std::vector<std::string> textTokens(const std::string &line, const data::Tokenizer &tokenizer);
/// Tokens back to text: each line's tokens detokenized, kEndOfLine a newline.
std::string textOf(const std::vector<std::string> &tokens, const data::Tokenizer &tokenizer);
/// A language model's text (usesText): the tokenizer (`tokenizers`' when given, else as for
/// pairs: characters, words, a unigram or bpe model trained on the first kSubwordSample lines,
/// or data.spm_model), the vocabulary (`tokenizers`' when given, else that of the training
/// part: data.min_count, data.max_vocab),
/// and data.train windows of it and data.valid of the held-out part (data.valid_path, else the
/// text's last tenth), drawn from data.seed and data.seed + 1. Reads the file in passes, holding
/// only the windows: a file over 1 GiB needs data.stream. Throws located errors.
void buildText(const DataConfig &config, PairData &data, const PairData *tokenizers = nullptr);
/// The training or validation windows as the @loss inputs: tokens [n, window] and the next
/// tokens [n, window].
train::Split textSplit(const PairData &data, bool training);

/// Generated, or read from TSV, with vocabularies built from the training pairs: their tokens
/// by `tokenizers`' tokenizers when given (a compiled model's: subword models are not trained
/// again), else by the config's (unigram and bpe models trained on the training pairs; of a
/// streamed corpus, on its first kSubwordSample training pairs).
PairData buildPairs(const DataConfig &config, const PairData *tokenizers = nullptr);
inline constexpr int64_t kSubwordSample = 1000000;
/// The pairs as the @loss inputs: src, src_mask, tgt_in, tgt_out (seq2seq), or
/// src, src_mask, tags | label (tag, classify). Pairs longer than the lengths are dropped.
train::Split pairSplit(Task task, const PairData &data, const std::vector<data::Pair> &pairs);

/// The training and validation splits of any task: pairs, (x, target) windows of `sine`,
/// (tokens, next) windows of `text`. Pair tasks take `pairs` (built once by the caller); a
/// streamed corpus has no training split (its batches are StreamedPairs').
train::Split trainSplit(const DataConfig &config, const PairData *pairs = nullptr);
train::Split validSplit(const DataConfig &config, const PairData *pairs = nullptr);

/// `sine` or `sines` (task regress): `count` windows and their next `horizon` values (`wave`:
/// vectors and the `horizon` values generated from each), drawn
/// from `seed` (the training split uses config.seed, the validation split config.seed + 1).
data::Examples seriesExamples(const DataConfig &config, int64_t count, uint64_t seed);
/// Task regress's training or validation examples: builtin (seriesExamples with data.train /
/// data.valid and the seeds above), or the windows of the series in data.path (readSeries):
/// every window of N + M consecutive values; with data.valid_path, that file's windows
/// validate, else the file's last data.valid windows do and training takes the windows that
/// end before them. With data.features, data.path holds one example per line instead
/// (readNumbers: a vector of `features` numbers, then its `horizon` targets), and its last
/// data.valid lines validate unless data.valid_path does. Throws (file:line errors, or a file
/// too short for the splits).
data::Examples seriesSplit(const DataConfig &config, bool training);

/// `text`: the vocabulary of the builtin corpus.
const data::CharVocab &textVocab();

} // namespace attn::task

#endif
