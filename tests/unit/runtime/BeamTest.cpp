// Greedy decoding and beam search (runtime/decode/Beam) against toy step models whose
// distributions are known, so results can be checked against brute force.
#include "attn/decode/Beam.h"

#include "attn/Random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>

namespace {

using attn::decode::BeamOptions;
using attn::decode::Hypothesis;
using Ids = std::vector<int32_t>;

constexpr int32_t kBos = 1, kEos = 2;

// Log-probabilities of the next token for row `row` given everything fed to it (bos first).
using Dist = std::function<std::vector<float>(int64_t row, const Ids &history)>;

// K rows, each remembering its whole history, so a wrong reorder changes the results.
class ToyModel : public attn::decode::StepModel {
public:
  ToyModel(int64_t rows, int64_t vocab, Dist dist)
      : vocab_(vocab), dist_(std::move(dist)), histories_(rows) {}
  int64_t rows() const override { return (int64_t)histories_.size(); }
  int64_t vocab() const override { return vocab_; }
  void step(const Ids &tokens, std::vector<float> &logProbs) override {
    EXPECT_EQ(tokens.size(), histories_.size());
    ++steps;
    logProbs.assign(rows() * vocab_, 0.0f);
    for (int64_t k = 0; k < rows(); ++k) {
      histories_[k].push_back(tokens[k]);
      std::vector<float> lp = dist_(k, histories_[k]);
      std::copy(lp.begin(), lp.end(), logProbs.begin() + k * vocab_);
    }
  }
  void reorder(const Ids &parents) override {
    std::vector<Ids> next;
    for (int32_t p : parents)
      next.push_back(histories_.at(p));
    histories_ = next;
  }
  int64_t steps = 0;

private:
  int64_t vocab_;
  Dist dist_;
  std::vector<Ids> histories_;
};

// log(p / sum(p)) as floats.
std::vector<float> logNormalize(std::vector<double> p) {
  double total = 0;
  for (double x : p)
    total += x;
  std::vector<float> lp;
  for (double x : p)
    lp.push_back((float)std::log(x / total));
  return lp;
}

// A history-dependent random distribution over `vocab` tokens (same for every row).
Dist randomDist(int64_t vocab, uint64_t seed) {
  return [vocab, seed](int64_t, const Ids &history) {
    std::string bytes(reinterpret_cast<const char *>(history.data()), history.size() * 4);
    attn::Rng rng(attn::fnv1a64(bytes) ^ seed);
    std::vector<double> p;
    for (int64_t v = 0; v < vocab; ++v)
      p.push_back(std::exp(4 * rng.nextDouble()));
    return logNormalize(p);
  };
}

// Every hypothesis beam search may return (sequences ending in eos within maxLength tokens,
// and sequences of maxLength tokens without eos), best score first.
std::vector<Hypothesis> bruteForce(const Dist &dist, int64_t vocab, int64_t maxLength,
                                   double alpha) {
  std::vector<Hypothesis> all;
  std::function<void(const Ids &, double)> visit = [&](const Ids &prefix, double logProb) {
    Ids history{kBos};
    history.insert(history.end(), prefix.begin(), prefix.end());
    std::vector<float> lp = dist(0, history);
    int64_t length = (int64_t)prefix.size() + 1;
    double eosLogProb = logProb + lp[kEos];
    all.push_back({prefix, eosLogProb, eosLogProb / attn::decode::lengthPenalty(length, alpha)});
    for (int32_t v = 0; v < vocab; ++v) {
      if (v == kEos)
        continue;
      Ids next = prefix;
      next.push_back(v);
      if (length == maxLength) {
        double l = logProb + lp[v];
        all.push_back({next, l, l / attn::decode::lengthPenalty(length, alpha)});
      } else {
        visit(next, logProb + lp[v]);
      }
    }
  };
  visit({}, 0.0);
  std::stable_sort(all.begin(), all.end(),
                   [](const Hypothesis &a, const Hypothesis &b) { return a.score > b.score; });
  return all;
}

// The log-probability the model gives `h` (eos included unless it ran to maxLength).
double trueLogProb(const Dist &dist, const Hypothesis &h, int64_t maxLength) {
  Ids history{kBos};
  double total = 0;
  for (int32_t t : h.tokens) {
    total += dist(0, history)[t];
    history.push_back(t);
  }
  if ((int64_t)h.tokens.size() < maxLength)
    total += dist(0, history)[kEos];
  return total;
}

TEST(Beam, LengthPenaltyFormula) {
  EXPECT_DOUBLE_EQ(attn::decode::lengthPenalty(7, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(attn::decode::lengthPenalty(1, 0.6), 1.0);
  EXPECT_DOUBLE_EQ(attn::decode::lengthPenalty(7, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(attn::decode::lengthPenalty(13, 0.5), std::sqrt(3.0));
}

// (a) A Markov chain where the locally best first token leads to a worse sentence.
//   after bos: A 0.6, B 0.4;  after A: eos 0.4, A 0.3, B 0.3;  after B: eos 0.9, A/B 0.05.
// Greedy: A eos = 0.24. Best: B eos = 0.36.
// A model that chooses greedy tokens itself (as a --device cuda program does on the GPU,
// attn/decode/Seq2Seq.h), here from the same toy distributions: greedy() takes its choices and
// never asks for the log-probabilities, and the hypotheses are the host's.
class ChoosingModel : public ToyModel {
public:
  using ToyModel::ToyModel;
  bool stepGreedy(const Ids &tokens, Ids &best, std::vector<float> &bestLogProbs) override {
    std::vector<float> lp;
    ToyModel::step(tokens, lp);
    ++choices;
    best.resize(rows());
    bestLogProbs.resize(rows());
    for (int64_t k = 0; k < rows(); ++k) {
      const float *row = lp.data() + k * vocab();
      best[k] = int32_t(std::max_element(row, row + vocab()) - row);
      bestLogProbs[k] = row[best[k]];
    }
    return true;
  }
  void step(const Ids &, std::vector<float> &) override {
    ADD_FAILURE() << "greedy() asked for the log-probabilities of a model that chooses";
  }
  int64_t choices = 0;
};

TEST(Greedy, TakesTheChoicesOfAModelThatChoosesItself) {
  Dist dist = [](int64_t row, const Ids &history) {
    std::vector<double> p(6, 0.01);
    const int32_t cycle[] = {0, 3, 4, 5}; // neither bos nor eos
    p[cycle[(row + history.size()) % 4]] = 1;
    if (history.size() > 3 + size_t(row))
      p[kEos] = 2;
    p[kBos] = 1e-9;
    return logNormalize(p);
  };
  ToyModel host(3, 6, dist);
  ChoosingModel device(3, 6, dist);
  std::vector<Hypothesis> a = attn::decode::greedy(host, 10, kBos, kEos);
  std::vector<Hypothesis> b = attn::decode::greedy(device, 10, kBos, kEos);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].tokens, b[k].tokens) << k;
    EXPECT_EQ(a[k].logProb, b[k].logProb) << k;
    EXPECT_FALSE(a[k].tokens.empty()) << k;
  }
  EXPECT_EQ(device.choices, host.steps);
}

// A model that ranks its rows' tokens itself (as a --device cuda program does on the GPU,
// attn/decode/Seq2Seq.h), here from the same toy distributions: beam search takes each row's
// beam + 1 likeliest tokens, and asks for the log-probabilities only when a hypothesis has
// log-probability -inf.
class RankingModel : public ToyModel {
public:
  using ToyModel::ToyModel;
  bool stepTopK(const Ids &tokens, int64_t k, Ids &ids, std::vector<float> &idLogProbs) override {
    std::vector<float> lp;
    ToyModel::step(tokens, lp);
    ++rankings;
    widths.insert(k);
    ids.clear();
    idLogProbs.clear();
    for (int64_t row = 0; row < rows(); ++row) {
      auto value = [&](int32_t v) {
        float x = lp[row * vocab() + v];
        return std::isnan(x) ? -INFINITY : x;
      };
      Ids order(vocab());
      for (int32_t v = 0; v < vocab(); ++v)
        order[v] = v;
      std::stable_sort(order.begin(), order.end(),
                       [&](int32_t a, int32_t b) { return value(a) > value(b); });
      for (int64_t r = 0; r < k; ++r) {
        ids.push_back(order[r]);
        idLogProbs.push_back(value(order[r]));
      }
    }
    return true;
  }
  // Asked where ranking by a token's log-probability would not be the search's order (a
  // hypothesis of log-probability -inf, which a NaN makes).
  void step(const Ids &tokens, std::vector<float> &logProbs) override {
    ToyModel::step(tokens, logProbs);
    ++fullSteps;
  }
  int64_t rankings = 0, fullSteps = 0;
  std::set<int64_t> widths;
};

// The same hypotheses, scores and steps from the ranked tokens as from the whole
// distributions: random ones, ones with ties (few distinct probabilities) and NaNs, every beam
// up to the rows, vocabularies narrower and wider than beam + 1, with and without a length
// penalty.
TEST(Beam, TheLikeliestTokensOfEachRowGiveTheSameSearch) {
  for (uint64_t seed = 0; seed < 40; ++seed)
    for (int64_t vocab : {4, 9})
      for (int64_t beam = 1; beam <= 5; ++beam) {
        Dist random = randomDist(vocab, seed);
        Dist dist = random;
        if (seed % 2) // ties: three distinct probabilities; and a NaN now and then
          dist = [random, vocab, seed](int64_t row, const Ids &history) {
            std::vector<float> lp = random(row, history);
            std::vector<double> p;
            for (float x : lp)
              p.push_back(1.0 + std::floor(3 * std::exp(x) * vocab / 2));
            std::vector<float> tied = logNormalize(p);
            if ((history.size() + seed) % 5 == 0)
              tied[(history.size() * 7) % vocab] = NAN;
            return tied;
          };
        BeamOptions o;
        o.beam = beam;
        o.nbest = 1 + seed % beam;
        o.maxLength = 6;
        o.lengthPenalty = seed % 3 == 0 ? 0.6 : 0.0;
        o.bos = kBos;
        o.eos = kEos;
        ToyModel host(5, vocab, dist);
        RankingModel device(5, vocab, dist);
        std::vector<Hypothesis> a = attn::decode::beamSearch(host, o);
        std::vector<Hypothesis> b = attn::decode::beamSearch(device, o);
        std::string where = "seed " + std::to_string(seed) + ", vocab " + std::to_string(vocab) +
                            ", beam " + std::to_string(beam);
        ASSERT_EQ(a.size(), b.size()) << where;
        for (size_t i = 0; i < a.size(); ++i) {
          EXPECT_EQ(a[i].tokens, b[i].tokens) << where << ", hypothesis " << i;
          EXPECT_EQ(a[i].logProb, b[i].logProb) << where << ", hypothesis " << i;
          EXPECT_EQ(a[i].score, b[i].score) << where << ", hypothesis " << i;
        }
        EXPECT_EQ(device.rankings + device.fullSteps, host.steps) << where;
        EXPECT_GE(device.rankings, 1) << where;
        if (seed % 2 == 0) // no NaN: every step ranked
          EXPECT_EQ(device.fullSteps, 0) << where;
        EXPECT_EQ(device.widths, std::set<int64_t>{std::min(beam + 1, vocab)}) << where;
      }
}

// A top-k draw from the ranked tokens is the draw from the whole distributions: the same
// tokens and log-probabilities, with and without ties, at a temperature and at 0 (greedy).
TEST(Sampling, TheLikeliestTokensOfEachRowGiveTheSameDraws) {
  for (uint64_t seed = 0; seed < 20; ++seed)
    for (double temperature : {0.0, 0.7, 1.5}) {
      Dist random = randomDist(9, seed);
      Dist dist = seed % 2 ? random : [random](int64_t row, const Ids &history) {
        std::vector<double> p;
        for (float x : random(row, history))
          p.push_back(1.0 + std::floor(4 * std::exp(x)));
        return logNormalize(p);
      };
      attn::decode::SamplingOptions o;
      o.temperature = temperature;
      o.topK = 1 + seed % 4;
      o.seed = seed;
      o.maxLength = 8;
      o.bos = kBos;
      o.eos = kEos;
      ToyModel host(4, 9, dist);
      RankingModel device(4, 9, dist);
      std::vector<Hypothesis> a = attn::decode::sampled(host, o);
      std::vector<Hypothesis> b = attn::decode::sampled(device, o);
      std::string where =
          "seed " + std::to_string(seed) + ", temperature " + std::to_string(temperature);
      ASSERT_EQ(a.size(), b.size()) << where;
      for (size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(a[k].tokens, b[k].tokens) << where << ", row " << k;
        EXPECT_EQ(a[k].logProb, b[k].logProb) << where << ", row " << k;
      }
      EXPECT_EQ(device.rankings, host.steps) << where;
      EXPECT_EQ(device.fullSteps, 0) << where;
      EXPECT_EQ(device.widths, std::set<int64_t>{o.topK}) << where;
    }
}

TEST(Beam, BeatsGreedyOnMarkovChain) {
  const int32_t A = 3, B = 0; // id 1 is bos, never emitted (tiny probability)
  Dist markov = [&](int64_t, const Ids &history) {
    std::vector<double> p(4, 1e-9);
    switch (history.back()) {
    case kBos:
      p[A] = 0.6, p[B] = 0.4;
      break;
    case A:
      p[kEos] = 0.4, p[A] = 0.3, p[B] = 0.3;
      break;
    case B:
      p[kEos] = 0.9, p[A] = 0.05, p[B] = 0.05;
      break;
    default:
      p[kEos] = 1;
    }
    return logNormalize(p);
  };
  ToyModel g(1, 4, markov);
  std::vector<Hypothesis> gr = attn::decode::greedy(g, 10, kBos, kEos);
  ASSERT_EQ(gr.size(), 1u);
  EXPECT_EQ(gr[0].tokens, (Ids{A}));
  EXPECT_NEAR(gr[0].logProb, std::log(0.24), 1e-6);

  BeamOptions o;
  o.beam = 2;
  o.maxLength = 6;
  ToyModel m(2, 4, markov);
  std::vector<Hypothesis> best = attn::decode::beamSearch(m, o);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].tokens, (Ids{B}));
  EXPECT_NEAR(best[0].logProb, std::log(0.36), 1e-6);
  EXPECT_GT(best[0].logProb, gr[0].logProb + 0.3);
  std::vector<Hypothesis> optimum = bruteForce(markov, 4, o.maxLength, 0.0);
  EXPECT_EQ(best[0].tokens, optimum[0].tokens);
  EXPECT_NEAR(best[0].logProb, optimum[0].logProb, 1e-9);
  EXPECT_LT(m.steps, o.maxLength); // stopped early: nothing alive could beat B eos
}

// A beam wide enough to keep everything is exhaustive search: the n best equal brute force,
// with and without length penalty, despite the early stop.
TEST(Beam, FullWidthEqualsBruteForce) {
  const int64_t vocab = 4, maxLength = 4, width = 27 * 3; // 3 non-eos tokens, 4 steps
  for (uint64_t seed : {1u, 2u, 3u})
    for (double alpha : {0.0, 0.6, 2.0}) {
      Dist dist = randomDist(vocab, seed);
      ToyModel m(width, vocab, dist);
      BeamOptions o;
      o.beam = width;
      o.maxLength = maxLength;
      o.nbest = 10;
      o.lengthPenalty = alpha;
      std::vector<Hypothesis> got = attn::decode::beamSearch(m, o);
      std::vector<Hypothesis> want = bruteForce(dist, vocab, maxLength, alpha);
      ASSERT_EQ(got.size(), 10u);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].tokens, want[i].tokens)
            << "seed " << seed << " alpha " << alpha << " rank " << i;
        EXPECT_NEAR(got[i].logProb, want[i].logProb, 1e-9);
        EXPECT_NEAR(got[i].score, want[i].score, 1e-9);
      }
    }
}

// (b) n-best lists: best first, distinct, and each log-probability is the model's own for
// that sequence (which also checks that reorder keeps rows and hypotheses together).
TEST(Beam, NBestOrdering) {
  const int64_t vocab = 7, maxLength = 8;
  for (uint64_t seed : {4u, 5u, 6u}) {
    Dist dist = randomDist(vocab, seed);
    ToyModel m(6, vocab, dist); // rows beyond the beam are unused
    BeamOptions o;
    o.beam = 4;
    o.nbest = 4;
    o.maxLength = maxLength;
    o.lengthPenalty = 0.6;
    std::vector<Hypothesis> got = attn::decode::beamSearch(m, o);
    ASSERT_EQ(got.size(), 4u);
    std::set<Ids> distinct;
    for (size_t i = 0; i < got.size(); ++i) {
      if (i > 0)
        EXPECT_GE(got[i - 1].score, got[i].score);
      distinct.insert(got[i].tokens);
      EXPECT_EQ(std::count(got[i].tokens.begin(), got[i].tokens.end(), kEos), 0);
      EXPECT_NEAR(got[i].logProb, trueLogProb(dist, got[i], maxLength), 1e-5);
      int64_t length = std::min<int64_t>(got[i].tokens.size() + 1, maxLength);
      EXPECT_NEAR(got[i].score, got[i].logProb / attn::decode::lengthPenalty(length, 0.6), 1e-12);
    }
    EXPECT_EQ(distinct.size(), 4u);
  }
}

// Beam width 1 without length penalty is greedy decoding.
TEST(Beam, WidthOneIsGreedy) {
  for (uint64_t seed : {7u, 8u, 9u, 10u}) {
    Dist dist = randomDist(5, seed);
    ToyModel g(1, 5, dist), b(1, 5, dist);
    BeamOptions o;
    o.beam = 1;
    o.maxLength = 6;
    std::vector<Hypothesis> gr = attn::decode::greedy(g, 6, kBos, kEos);
    std::vector<Hypothesis> bs = attn::decode::beamSearch(b, o);
    ASSERT_EQ(bs.size(), 1u);
    EXPECT_EQ(bs[0].tokens, gr[0].tokens);
    EXPECT_NEAR(bs[0].logProb, gr[0].logProb, 1e-9);
  }
}

// (c) Stopping at once ("", p = 0.5) beats "A A A" (p = 0.45 * 0.95^3 = 0.386) on
// log-probability, but the length penalty prefers the longer sentence:
// -0.953 / lp(4) = -0.953 / 1.5 = -0.635 > -0.693 = log(0.5) / lp(1) for alpha = 1.
TEST(Beam, LengthPenaltyChangesTheWinner) {
  const int32_t A = 3;
  Dist dist = [&](int64_t, const Ids &history) {
    std::vector<double> p(4, 0.01);
    switch (history.size()) {
    case 1:
      p[kEos] = 0.5, p[A] = 0.45, p[0] = 0.04;
      break; // after bos
    case 2:
    case 3:
      p[A] = 0.95, p[kEos] = 0.03;
      break; // after A, A A
    default:
      p[kEos] = 0.95, p[A] = 0.03; // after A A A
    }
    p[kBos] = 0.01;
    return logNormalize(p);
  };
  for (double alpha : {0.0, 1.0}) {
    ToyModel m(3, 4, dist);
    BeamOptions o;
    o.beam = 3;
    o.maxLength = 10;
    o.lengthPenalty = alpha;
    std::vector<Hypothesis> got = attn::decode::beamSearch(m, o);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].tokens, alpha == 0 ? Ids{} : (Ids{A, A, A})) << "alpha " << alpha;
    std::vector<Hypothesis> optimum = bruteForce(dist, 4, o.maxLength, alpha);
    EXPECT_EQ(got[0].tokens, optimum[0].tokens);
    EXPECT_NEAR(got[0].score, optimum[0].score, 1e-9);
  }
}

// (d) A model that (almost) never ends: both searches stop after maxLength tokens.
TEST(Beam, StopsAtMaxLength) {
  Dist dist = [](int64_t row, const Ids &history) {
    std::vector<double> p = {1, 1e-12, 1e-12, 1, 1};
    p[3 + (history.size() + row) % 2] = 5; // prefers 3 / 4 alternately
    return logNormalize(p);
  };
  ToyModel g(2, 5, dist);
  std::vector<Hypothesis> gr = attn::decode::greedy(g, 5, kBos, kEos);
  ASSERT_EQ(gr.size(), 2u);
  EXPECT_EQ(gr[0].tokens, (Ids{4, 3, 4, 3, 4}));
  EXPECT_EQ(gr[1].tokens, (Ids{3, 4, 3, 4, 3})); // rows are independent
  EXPECT_EQ(g.steps, 5);

  // Beam search moves hypotheses between rows, so its model must not depend on the row.
  ToyModel m(3, 5, [&](int64_t, const Ids &history) { return dist(0, history); });
  BeamOptions o;
  o.beam = 3;
  o.nbest = 3;
  o.maxLength = 5;
  o.lengthPenalty = 0.6;
  std::vector<Hypothesis> got = attn::decode::beamSearch(m, o);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].tokens, (Ids{4, 3, 4, 3, 4}));
  for (const Hypothesis &h : got) {
    EXPECT_EQ(h.tokens.size(), 5u);
    EXPECT_NEAR(h.score, h.logProb / attn::decode::lengthPenalty(5, 0.6), 1e-12);
  }
  EXPECT_EQ(m.steps, 5);
  EXPECT_TRUE(attn::decode::greedy(g, 0, kBos, kEos)[0].tokens.empty());
}

TEST(Beam, RejectsBadOptions) {
  ToyModel m(2, 4, randomDist(4, 1));
  BeamOptions o;
  o.beam = 3; // more than the model's rows
  EXPECT_THROW(attn::decode::beamSearch(m, o), std::runtime_error);
  o.beam = 2;
  o.nbest = 0;
  EXPECT_THROW(attn::decode::beamSearch(m, o), std::runtime_error);
  o.nbest = 1;
  o.eos = 4;
  EXPECT_THROW(attn::decode::beamSearch(m, o), std::runtime_error);
}

} // namespace
