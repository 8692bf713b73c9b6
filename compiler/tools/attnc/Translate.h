// Decoding with a compiled seq2seq model (its @encode and @decode_step entries): greedily or
// by sampling, K sentences at once, or by beam search, one sentence at a time (see
// attn/decode/Beam.h). A program that also has @decode_full (a Transformer compiled with
// --no-cache) decodes through it instead, recomputing the prefix at every step.
#pragma once

#include "Data.h"

#include "attn/Program.h"
#include "attn/decode/Beam.h"
#include "attn/decode/Seq2Seq.h"

#include <functional>
#include <memory>

namespace attnc {

/// A source line as the encoder reads it: ids [S] (reversed if the model reads so) and mask.
struct Encoded {
  std::vector<int32_t> ids;
  std::vector<float> mask;
};

struct Accuracy {
  int64_t count = 0;          // pairs decoded
  double exactMatch = 0;      // fraction of outputs equal to the reference
  double tokenAccuracy = 0;   // fraction of reference tokens matched at their position
};

class Seq2SeqDecoder {
public:
  Seq2SeqDecoder(const attn::Program &program, const std::vector<attn::Tensor> &params,
                 const attn::yaml::Spec &spec, const PairData &data);

  /// Throws when the line has more tokens than the model reads.
  Encoded encode(const std::string &line) const;
  /// Per source: decode.nbest hypotheses (beam search), or the greedy (or sampled,
  /// decode.sample) one, best first.
  std::vector<std::vector<attn::decode::Hypothesis>>
  decode(const std::vector<Encoded> &sources) const;
  /// A hypothesis as text.
  std::string text(const attn::decode::Hypothesis &h) const;
  /// Exact match and token accuracy of the best hypotheses on `pairs` (those that fit).
  Accuracy accuracy(const std::vector<attn::data::Pair> &pairs) const;

  /// Sentences decoded at once (the compiled batch).
  int64_t batchRows() const { return rows; }
  /// Whether decode_step returns the attention weights ("attention", [K, S]).
  bool hasAttention() const;
  /// Per source, the attention weights the model gives while producing `outputs[i]`: the
  /// hypothesis is fed back through decode_step (teacher-forced, so any search's result can
  /// be shown), and row t holds the weights over the source tokens (in reading order) when
  /// the model emits token t; the last row is for the final eos.
  std::vector<std::vector<std::vector<float>>>
  alignments(const std::vector<Encoded> &sources,
             const std::vector<attn::decode::Hypothesis> &outputs) const;
  /// Writes one heatmap PNG per source to DIR/attention-<i>.png (DIR is created) and
  /// prints each path; `lines` are the sources as text.
  void writeAlignmentPlots(const std::string &dir, const std::vector<std::string> &lines,
                           const std::vector<Encoded> &sources,
                           const std::vector<attn::decode::Hypothesis> &outputs) const;

private:
  /// Calls `body(first, count, src, mask)` for the sources in batches of the compiled rows:
  /// the encoder's inputs for sources [first, first + count) (see batchOf).
  using BatchBody = std::function<void(size_t first, size_t count, const attn::Tensor &src,
                                       const attn::Tensor &mask)>;
  void forEachBatch(const std::vector<Encoded> &sources, const BatchBody &body) const;
  /// The model that decodes src / mask: the cached decode_step, or decode_full (no cache).
  std::unique_ptr<attn::decode::StepModel> stepModel(const attn::Tensor &src,
                                                     const attn::Tensor &mask) const;
  /// The encoder's inputs for sources [first, first + count), one per row; the rows past
  /// `count` repeat the first source (their outputs are ignored).
  void batchOf(const std::vector<Encoded> &sources, size_t first, size_t count,
               attn::Tensor &src, attn::Tensor &mask) const;

  const attn::Program &program;
  const std::vector<attn::Tensor> &params;
  const attn::yaml::Spec &spec;
  const PairData &data;
  int64_t rows = 0, sourceLength = 0;
};

} // namespace attnc
