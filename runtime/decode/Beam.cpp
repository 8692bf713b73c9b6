#include "attn/decode/Beam.h"
#include "attn/decode/Sample.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace attn::decode {

namespace {

struct Alive {
  std::vector<int32_t> tokens;
  double logProb = 0;
};

// One extension of an alive hypothesis: its row (= index in the alive list) and token.
struct Candidate {
  double logProb;
  int32_t parent;
  int32_t token;
};

// Higher log-probability first; ties by parent, then token, so the search is deterministic.
bool better(const Candidate &a, const Candidate &b) {
  if (a.logProb != b.logProb)
    return a.logProb > b.logProb;
  if (a.parent != b.parent)
    return a.parent < b.parent;
  return a.token < b.token;
}

void step(StepModel &model, const std::vector<int32_t> &tokens, std::vector<float> &logProbs) {
  model.step(tokens, logProbs);
  if ((int64_t)logProbs.size() != model.rows() * model.vocab())
    throw std::runtime_error("attn: decoding: the model returned " +
                             std::to_string(logProbs.size()) + " log-probabilities, expected " +
                             std::to_string(model.rows()) + " x " + std::to_string(model.vocab()));
}

Hypothesis finish(std::vector<int32_t> tokens, double logProb, int64_t length, double alpha) {
  Hypothesis h;
  h.tokens = std::move(tokens);
  h.logProb = logProb;
  h.score = logProb / lengthPenalty(length, alpha);
  return h;
}

} // namespace

double lengthPenalty(int64_t length, double alpha) {
  return std::pow((5.0 + (double)length) / 6.0, alpha);
}

namespace {
// Greedy and sampled decoding: every row goes its own way, `choose(tokens, next, nextLogProbs)`
// feeding the rows' tokens and picking each row's next token and its log-probability, until
// eos or maxLength tokens.
using Choose =
    std::function<void(const std::vector<int32_t> &, std::vector<int32_t> &, std::vector<float> &)>;
std::vector<Hypothesis> rowByRow(StepModel &model, int64_t maxLength, int32_t bos, int32_t eos,
                                 const Choose &choose) {
  if (maxLength < 0)
    throw std::runtime_error("attn: decoding: maxLength must be >= 0, got " +
                             std::to_string(maxLength));
  const int64_t rows = model.rows();
  std::vector<Hypothesis> hyps(rows);
  std::vector<bool> done(rows, false);
  std::vector<int32_t> tokens(rows, bos), next(rows);
  std::vector<float> nextLogProbs(rows);
  int64_t open = rows;
  for (int64_t t = 0; t < maxLength && open > 0; ++t) {
    choose(tokens, next, nextLogProbs);
    for (int64_t k = 0; k < rows; ++k) {
      if (done[k])
        continue; // keeps being fed eos
      hyps[k].logProb += nextLogProbs[k];
      tokens[k] = next[k];
      if (next[k] == eos) {
        done[k] = true;
        --open;
      } else {
        hyps[k].tokens.push_back(next[k]);
      }
    }
  }
  for (Hypothesis &h : hyps)
    h.score = h.logProb;
  return hyps;
}

// A step whose log-probabilities come back whole, and `pick(row, k)` choosing from row k's.
Choose fromLogProbs(StepModel &model, const std::function<int32_t(const float *, int64_t)> &pick) {
  return [&model, pick, logProbs = std::vector<float>()](const std::vector<int32_t> &tokens,
                                                         std::vector<int32_t> &next,
                                                         std::vector<float> &nextLogProbs) mutable {
    step(model, tokens, logProbs);
    for (int64_t k = 0; k < model.rows(); ++k) {
      const float *row = logProbs.data() + k * model.vocab();
      next[k] = pick(row, k);
      nextLogProbs[k] = row[next[k]];
    }
  };
}
} // namespace

std::vector<Hypothesis> greedy(StepModel &model, int64_t maxLength, int32_t bos, int32_t eos) {
  const int64_t vocab = model.vocab();
  Choose onHost = fromLogProbs(model, [vocab](const float *row, int64_t) {
    return (int32_t)(std::max_element(row, row + vocab) - row); // first = lowest id
  });
  return rowByRow(model, maxLength, bos, eos,
                  [&](const std::vector<int32_t> &tokens, std::vector<int32_t> &next,
                      std::vector<float> &nextLogProbs) {
                    if (!model.stepGreedy(tokens, next, nextLogProbs))
                      onHost(tokens, next, nextLogProbs);
                  });
}

std::vector<Hypothesis> sampled(StepModel &model, const SamplingOptions &o) {
  const int64_t vocab = model.vocab(), rows = model.rows();
  std::vector<Rng> rngs;
  for (int64_t k = 0; k < rows; ++k)
    rngs.emplace_back(o.seed * 1000003ull + o.firstRow + (uint64_t)k);
  Choose onHost = fromLogProbs(model, [&](const float *row, int64_t k) {
    return drawToken(row, vocab, o.temperature, o.topK, rngs[k]);
  });
  // A top-k draw reads only the row's k likeliest tokens, in rank order (score, then id), as
  // drawToken takes them: a model that ranks its rows sends those, and the draw from them
  // (the same candidates in the same order, the same uniform) is the same token.
  const bool ranked = o.topK > 0 && o.topK < vocab;
  std::vector<int32_t> ids;
  std::vector<float> scores;
  return rowByRow(
      model, o.maxLength, o.bos, o.eos,
      [&](const std::vector<int32_t> &tokens, std::vector<int32_t> &next,
          std::vector<float> &nextLogProbs) {
        if (!ranked || !model.stepTopK(tokens, o.topK, ids, scores))
          return onHost(tokens, next, nextLogProbs);
        if ((int64_t)ids.size() != rows * o.topK || (int64_t)scores.size() != rows * o.topK)
          throw std::runtime_error("attn: sampling: the model ranked " +
                                   std::to_string(ids.size()) + " tokens, expected " +
                                   std::to_string(rows) + " x " + std::to_string(o.topK));
        for (int64_t k = 0; k < rows; ++k) {
          const float *row = scores.data() + k * o.topK;
          int32_t i = drawToken(row, o.topK, o.temperature, 0, rngs[k]);
          next[k] = ids[k * o.topK + i];
          nextLogProbs[k] = row[i];
        }
      });
}

std::vector<Hypothesis> beamSearch(StepModel &model, const BeamOptions &options) {
  const int64_t rows = model.rows(), vocab = model.vocab(), beam = options.beam;
  const double alpha = options.lengthPenalty;
  if (beam < 1 || beam > rows)
    throw std::runtime_error("attn: beam search: the beam must be in [1, " + std::to_string(rows) +
                             "] (the model's batch size), got " + std::to_string(beam));
  if (options.nbest < 1 || options.maxLength < 1)
    throw std::runtime_error("attn: beam search: nbest and maxLength must be >= 1, got " +
                             std::to_string(options.nbest) + " and " +
                             std::to_string(options.maxLength));
  if (options.eos < 0 || options.eos >= vocab)
    throw std::runtime_error("attn: beam search: eos id " + std::to_string(options.eos) +
                             " is outside the vocabulary of " + std::to_string(vocab));

  std::vector<Alive> alive(1); // the empty hypothesis, in row 0
  std::vector<Hypothesis> finished;
  std::vector<int32_t> tokens(rows);
  std::vector<float> logProbs;
  std::vector<Candidate> candidates;
  // The most tokens of one row the walk below can reach: an extension whose token is its
  // row's r-th likeliest comes after the row's r - 1 likelier ones, of which at most one is
  // eos, so by then r - 2 have been kept; the walk stops at `beam` kept, so r <= beam + 1.
  const int64_t perRow = std::min<int64_t>(beam + 1, vocab);
  std::vector<int32_t> topIds;
  for (int64_t t = 0; t < options.maxLength && !alive.empty(); ++t) {
    for (int64_t k = 0; k < rows; ++k)
      tokens[k] = k >= (int64_t)alive.size() ? options.eos
                  : alive[k].tokens.empty()  ? options.bos
                                             : alive[k].tokens.back();
    candidates.clear();
    auto extend = [&](int32_t k, int32_t v, double lp) {
      if (std::isnan(lp)) // NaN would break the ordering
        lp = -std::numeric_limits<double>::infinity();
      candidates.push_back({alive[k].logProb + lp, k, v});
    };
    // (Ranked within a row by the token's log-probability alone: the same order as the
    // extensions' sums unless a hypothesis's own log-probability is -inf, where every sum
    // ties and the ranking falls to the token ids.)
    bool finite = std::all_of(alive.begin(), alive.end(),
                              [](const Alive &a) { return std::isfinite(a.logProb); });
    if (finite && model.stepTopK(tokens, perRow, topIds, logProbs)) {
      if ((int64_t)topIds.size() != rows * perRow || (int64_t)logProbs.size() != rows * perRow)
        throw std::runtime_error("attn: beam search: the model ranked " +
                                 std::to_string(topIds.size()) + " tokens, expected " +
                                 std::to_string(rows) + " x " + std::to_string(perRow));
      for (int32_t k = 0; k < (int32_t)alive.size(); ++k)
        for (int64_t r = 0; r < perRow; ++r)
          extend(k, topIds[k * perRow + r], logProbs[k * perRow + r]);
    } else {
      step(model, tokens, logProbs);
      for (int32_t k = 0; k < (int32_t)alive.size(); ++k)
        for (int32_t v = 0; v < vocab; ++v)
          extend(k, v, logProbs[k * vocab + v]);
    }
    // At most one eos per alive hypothesis (<= beam), so the best 2 * beam extensions hold
    // `beam` non-eos ones whenever that many exist.
    size_t ranked = std::min(candidates.size(), (size_t)(2 * beam));
    std::partial_sort(candidates.begin(), candidates.begin() + ranked, candidates.end(), better);

    const bool last = t + 1 == options.maxLength;
    std::vector<Alive> next;
    std::vector<int32_t> parents;
    int64_t kept = 0;
    for (size_t i = 0; i < ranked && kept < beam; ++i) {
      const Candidate &c = candidates[i];
      std::vector<int32_t> ys = alive[c.parent].tokens;
      if (c.token == options.eos) {
        int64_t length = (int64_t)ys.size() + 1;
        finished.push_back(finish(std::move(ys), c.logProb, length, alpha));
        continue;
      }
      ys.push_back(c.token);
      ++kept;
      if (last) { // maxLength tokens without eos: finished as it is
        int64_t length = (int64_t)ys.size();
        finished.push_back(finish(std::move(ys), c.logProb, length, alpha));
      } else {
        next.push_back({std::move(ys), c.logProb});
        parents.push_back(c.parent);
      }
    }
    alive = std::move(next);

    // Early stop: nothing alive can still beat the nbest-th finished score.
    if ((int64_t)finished.size() >= options.nbest && !alive.empty()) {
      std::vector<double> scores;
      for (const Hypothesis &h : finished)
        scores.push_back(h.score);
      std::nth_element(scores.begin(), scores.begin() + (options.nbest - 1), scores.end(),
                       std::greater<double>());
      double worst = scores[options.nbest - 1];
      double bestAlive = -std::numeric_limits<double>::infinity();
      for (const Alive &a : alive)
        bestAlive = std::max(
            bestAlive, alpha > 0 ? a.logProb / lengthPenalty(options.maxLength, alpha) : a.logProb);
      if (bestAlive <= worst)
        break;
    }
    if (alive.empty())
      break;

    // Row k continues hypothesis k, whose state is its parent's row; unused rows keep theirs.
    std::vector<int32_t> rowParents(rows);
    bool identity = true;
    for (int64_t k = 0; k < rows; ++k) {
      rowParents[k] = k < (int64_t)parents.size() ? parents[k] : (int32_t)k;
      identity = identity && rowParents[k] == k;
    }
    if (!identity)
      model.reorder(rowParents);
  }

  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis &a, const Hypothesis &b) { return a.score > b.score; });
  if ((int64_t)finished.size() > options.nbest)
    finished.resize(options.nbest);
  return finished;
}

} // namespace attn::decode
