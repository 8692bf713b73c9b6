// Decoding with a compiled seq2seq model (its @encode and @decode_step entries): greedily, K
// sentences at once, or by beam search, one sentence at a time (see attn/decode/Beam.h).
#pragma once

#include "Data.h"

#include "attn/Program.h"
#include "attn/decode/Beam.h"

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
  /// Per source: decode.nbest hypotheses (beam search), or the greedy one, best first.
  std::vector<std::vector<attn::decode::Hypothesis>>
  decode(const std::vector<Encoded> &sources) const;
  /// A hypothesis as text.
  std::string text(const attn::decode::Hypothesis &h) const;
  /// Exact match and token accuracy of the best hypotheses on `pairs` (those that fit).
  Accuracy accuracy(const std::vector<attn::data::Pair> &pairs) const;

private:
  const attn::Program &program;
  const std::vector<attn::Tensor> &params;
  const attn::yaml::Spec &spec;
  const PairData &data;
  int64_t rows = 0, sourceLength = 0;
};

} // namespace attnc
