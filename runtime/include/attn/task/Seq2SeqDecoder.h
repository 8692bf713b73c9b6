// Decoding with a compiled seq2seq model (its @encode and @decode_step entries): greedily or
// by sampling, K sentences at once, or by beam search, one sentence at a time (see
// attn/decode/Beam.h). A program that also has @decode_full (a Transformer compiled without
// its cache), or has only it (the graph form's encoder-decoders), decodes through it instead,
// recomputing the prefix at every step. Shared by
// `attnc translate`, `run`, `train` / `eval` (accuracy) and ahead-of-time programs.
#ifndef ATTN_TASK_SEQ2SEQDECODER_H
#define ATTN_TASK_SEQ2SEQDECODER_H

#include "attn/Program.h"
#include "attn/Names.h"
#include "attn/decode/Beam.h"
#include "attn/decode/Seq2Seq.h"
#include "attn/task/Bleu.h"
#include "attn/task/Data.h"

#include <functional>
#include <memory>

namespace attn::task {

/// How to decode: a spec's `decode:` section.
struct DecodeConfig {
  int64_t beam = 1;           // 1: greedy (or sampled)
  double lengthPenalty = 0.0;
  int64_t maxLength = 0;      // 0: the target length the model was compiled for
  int64_t nbest = 1;
  bool sample = false;
  double temperature = 1.0;
  int64_t topK = 0;
  uint64_t seed = 1;
};

/// The name of decode_step's attention weights [K, S], when it returns them.
inline constexpr const char *kAttentionResult = names::kAttention;

/// A source line as the encoder reads it: ids [S] (reversed if the model reads so) and mask.
struct Encoded {
  std::vector<int32_t> ids;
  std::vector<float> mask;
  std::vector<std::string> unknown; // tokens the vocabulary lacks (read as <unk>), once each
};
/// The tokens of `line` that `vocab` lacks, in order of appearance, each once.
std::vector<std::string> unknownTokens(const std::string &line, const data::Vocab &vocab,
                                       const data::Tokenizer &tokenize);

struct Accuracy {
  int64_t count = 0;          // pairs decoded
  double exactMatch = 0;      // fraction of outputs equal to the reference
  // Tokens equal at their position over the longer of output and reference, summed over the
  // pairs: an extra or a missing token counts as a miss ("nine -> 9 9" against "9": 1 of 2).
  double tokenAccuracy = 0;
  double lengthMismatch = 0;  // fraction of outputs longer or shorter than their reference
  // The detokenised outputs against the references as written (attn/task/Bleu.h); set by
  // Seq2SeqDecoder::accuracy, not by scoreOutputs.
  Bleu bleu;
  double chrf = 0;
};
/// The accuracy of `outputs` against `references` (pair i: outputs[i], references[i]).
Accuracy scoreOutputs(const std::vector<std::vector<int32_t>> &outputs,
                      const std::vector<std::vector<int32_t>> &references);

class Seq2SeqDecoder {
public:
  /// `program`, `params` and `data` are referenced: they must outlive the decoder.
  Seq2SeqDecoder(const Program &program, const std::vector<Tensor> &params,
                 const PairData &data, const DecodeConfig &config);

  /// Throws when the line has more tokens than the model reads.
  Encoded encode(const std::string &line) const;
  /// Per source: nbest hypotheses (beam search), or the greedy (or sampled) one, best first.
  /// With buckets, each source is decoded by the shortest program that holds it.
  std::vector<std::vector<decode::Hypothesis>> decode(const std::vector<Encoded> &sources) const;
  /// A bucket (decode.buckets, decode.batch_buckets): `program` is this model compiled for a
  /// shorter source length, or fewer decoder rows, or both; its parameters are this
  /// program's of the same names (copied once: the full program may hold optimizer state the
  /// bucket has not). Sources that fit a shorter length are decoded by it (they are padded at
  /// their end, so one encoded for the full length is cut to its); a last batch of greedy
  /// rows by the program of that length with the fewest rows that hold it.
  void addBucket(const Program &program);
  size_t bucketCount() const { return buckets.size(); }
  /// The shorter source lengths among them (decode.buckets), each counted once.
  size_t lengthBucketCount() const;
  /// A hypothesis as text.
  std::string text(const decode::Hypothesis &h) const;
  /// Exact match, token accuracy, BLEU and chrF of the best hypotheses on `pairs` (those
  /// that fit).
  Accuracy accuracy(const std::vector<data::Pair> &pairs) const;

  /// Sentences decoded at once (the compiled batch).
  int64_t batchRows() const { return rows; }
  const DecodeConfig &config() const { return config_; }
  /// Whether decode_step returns the attention weights (kAttentionResult, [K, S]).
  bool hasAttention() const;
  /// Per source, the attention weights the model gives while producing `outputs[i]`: the
  /// hypothesis is fed back through decode_step (teacher-forced, so any search's result can
  /// be shown), and row t holds the weights over the source tokens (in reading order) when
  /// the model emits token t; the last row is for the final eos.
  std::vector<std::vector<std::vector<float>>>
  alignments(const std::vector<Encoded> &sources,
             const std::vector<decode::Hypothesis> &outputs) const;
  /// The vocabularies and lengths it decodes with.
  const PairData &pairData() const { return data; }

private:
  /// decode() with this program alone; `firstRow` numbers the first source (sampling draws
  /// source i from stream i).
  std::vector<std::vector<decode::Hypothesis>> decodeHere(const std::vector<Encoded> &sources,
                                                          size_t firstRow = 0) const;
  /// Calls `body(first, count, src, mask)` for the sources in batches of the compiled rows.
  using BatchBody = std::function<void(size_t first, size_t count, const Tensor &src,
                                       const Tensor &mask)>;
  void forEachBatch(const std::vector<Encoded> &sources, const BatchBody &body) const;
  /// The model that decodes src / mask: the cached decode_step, or decode_full (no cache).
  std::unique_ptr<decode::StepModel> stepModel(const Tensor &src, const Tensor &mask) const;
  /// The encoder's inputs for sources [first, first + count), one per row; the rows past
  /// `count` repeat the first source (their outputs are ignored).
  void batchOf(const std::vector<Encoded> &sources, size_t first, size_t count, Tensor &src,
               Tensor &mask) const;
  size_t maxLength() const;

  const Program &program;
  const std::vector<Tensor> &params;
  const PairData &data;
  DecodeConfig config_;
  int64_t rows = 0, sourceLength = 0;
  struct Bucket {
    std::vector<Tensor> params; // in the bucket program's order
    std::unique_ptr<Seq2SeqDecoder> decoder;
  };
  std::vector<std::unique_ptr<Bucket>> buckets; // shortest first, then fewest rows
};

} // namespace attn::task

#endif
