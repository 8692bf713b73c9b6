// Greedy and beam-search decoding for sequence-to-sequence models, written against a small
// step interface so that the search is independent of compiled code (and testable with toy
// models); ProgramStepModel (attn/decode/Seq2Seq.h) drives a compiled program.
#ifndef ATTN_DECODE_BEAM_H
#define ATTN_DECODE_BEAM_H

#include <cstdint>
#include <vector>

namespace attn::decode {

// K rows decoded in lock-step (K is the batch size the model was compiled for).
class StepModel {
public:
  virtual ~StepModel() = default;
  virtual int64_t rows() const = 0;  // K
  virtual int64_t vocab() const = 0; // V
  // Feeds tokens[k] to row k (tokens: K ids); writes log-probabilities of the next token,
  // logProbs: [K, V] row-major (resized by the model).
  virtual void step(const std::vector<int32_t> &tokens, std::vector<float> &logProbs) = 0;
  // Row k's state becomes (a copy of) row parents[k]'s state (parents: K ids in [0, K)).
  virtual void reorder(const std::vector<int32_t> &parents) = 0;
  // Greedy decoding's step, where the model can choose on its own: feeds tokens as step()
  // does, then writes each row's most likely next token (the lowest id on ties) and its
  // log-probability (best, bestLogProbs: K each), so that the log-probabilities need not
  // leave the device that computed them. Returns false, doing nothing, where the model cannot
  // (the default): greedy() then calls step().
  virtual bool stepGreedy(const std::vector<int32_t> &tokens, std::vector<int32_t> &best,
                          std::vector<float> &bestLogProbs) {
    (void)tokens, (void)best, (void)bestLogProbs;
    return false;
  }
  // The most tokens per row a model that ranks on the GPU (ProgramStepModel, attn::decode::
  // sample) ranks there: each is a pass over the row by one block, so a large k (a top-k of
  // thousands) reads the log-probabilities back and ranks them on the host instead.
  static constexpr int64_t kMostRankedOnDevice = 64;
  // Beam search's step, where the model can rank on its own: feeds tokens as step() does,
  // then writes each row's k likeliest next tokens, best first (ties: the lowest id; a NaN
  // ranks as -inf and is written as -inf), and their log-probabilities (ids, idLogProbs:
  // [K, k] row-major, resized by the model), so that K x k values leave the device, not
  // K x V. 1 <= k <= V. Returns false, doing nothing, where the model cannot (the default):
  // beamSearch() then calls step().
  virtual bool stepTopK(const std::vector<int32_t> &tokens, int64_t k, std::vector<int32_t> &ids,
                        std::vector<float> &idLogProbs) {
    (void)tokens, (void)k, (void)ids, (void)idLogProbs;
    return false;
  }
};

struct Hypothesis {
  std::vector<int32_t> tokens; // without bos; a final eos is not included
  double logProb = 0;          // sum of the chosen tokens' log-probabilities, eos included
  double score = 0;            // logProb / lengthPenalty(|Y|)
};

struct BeamOptions {
  int64_t beam = 5;           // hypotheses kept alive per step; needs rows() >= beam
  double lengthPenalty = 0.0; // alpha of the GNMT penalty; 0: plain log-probability
  int64_t maxLength = 50;     // most steps = most tokens of a hypothesis, eos counted
  int64_t nbest = 1;          // hypotheses returned
  int32_t bos = 1, eos = 2;
};

// GNMT length penalty (Wu et al. 2016): ((5 + length) / 6)^alpha, length counting eos.
double lengthPenalty(int64_t length, double alpha);

// Greedy decoding of K independent rows (row k holds the k-th sentence): every row starts
// from bos and takes the most likely token (lowest id on ties) until eos or maxLength tokens.
// Returns K hypotheses, score = logProb. Rows that finished are fed eos.
std::vector<Hypothesis> greedy(StepModel &model, int64_t maxLength, int32_t bos, int32_t eos);

struct SamplingOptions {
  double temperature = 1.0; // the log-probabilities are divided by it; 0 is greedy
  int64_t topK = 0;         // draw among the k likeliest tokens only; 0: among all
  uint64_t seed = 1;        // row k draws from its own stream, seeded from (seed, firstRow + k)
  uint64_t firstRow = 0;    // the rows' offset in a longer list of inputs decoded in batches
  int64_t maxLength = 50;
  int32_t bos = 1, eos = 2;
};

// Like greedy, but each row draws its next token from the model's distribution (see
// drawToken in attn/decode/Sample.h). score = logProb of the drawn tokens. With topK, a model
// that ranks its rows (stepTopK) sends each row's topK likeliest tokens only: the same draws.
std::vector<Hypothesis> sampled(StepModel &model, const SamplingOptions &options);

// Beam search over ONE sentence, held by every row at the start (only row 0's first
// expansions count). Each step extends the alive hypotheses by every token, ranks the
// extensions by log-probability (ties: parent, then token id), and walks that ranking until
// `beam` non-eos extensions are kept alive; eos extensions met on the way are finished.
// Extensions reaching maxLength tokens are finished without eos. The search stops when no
// hypothesis is alive, after maxLength steps, or when nbest hypotheses are finished and no
// alive one can beat the nbest-th score any more (log-probabilities only decrease, so
// logProb / lengthPenalty(maxLength) bounds an alive hypothesis when alpha > 0, and logProb
// itself when alpha <= 0; this assumes the model returns log-probabilities <= 0).
// Returns up to nbest finished hypotheses, best score first (ties: the earlier finished).
// Rows past the alive hypotheses are fed eos and otherwise ignored. A model that ranks its
// own rows (stepTopK) gives each row's beam + 1 likeliest tokens, which hold every extension
// the walk can reach: the same hypotheses.
std::vector<Hypothesis> beamSearch(StepModel &model, const BeamOptions &options);

} // namespace attn::decode

#endif // ATTN_DECODE_BEAM_H
