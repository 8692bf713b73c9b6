// Drawing tokens (runtime/decode/Sample: temperature, top-k) and sampled decoding
// (runtime/decode/Beam: sampled).
#include "attn/decode/Beam.h"
#include "attn/decode/Sample.h"

#include "attn/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

// log-probabilities of 0.5, 0.3, 0.15, 0.05
const std::vector<float> kScores = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                                    std::log(0.05f)};

std::vector<int> counts(double temperature, int64_t topK, int draws) {
  attn::Rng rng(7);
  std::vector<int> n(kScores.size(), 0);
  for (int i = 0; i < draws; ++i)
    ++n.at(attn::decode::drawToken(kScores.data(), 4, temperature, topK, rng));
  return n;
}

TEST(Sample, TemperatureZeroAndTopKOneAreArgmax) {
  EXPECT_EQ(counts(0.0, 0, 100), (std::vector<int>{100, 0, 0, 0}));
  EXPECT_EQ(counts(5.0, 1, 100), (std::vector<int>{100, 0, 0, 0}));
}

// At temperature 1 the draws follow the distribution (20000 draws: within 0.015).
TEST(Sample, FollowsTheDistribution) {
  std::vector<int> n = counts(1.0, 0, 20000);
  const double p[] = {0.5, 0.3, 0.15, 0.05};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(n[i] / 20000.0, p[i], 0.015) << i;
}

// top_k 2 renormalises over the two likeliest: 0.5 / 0.8 and 0.3 / 0.8.
TEST(Sample, TopKRenormalisesOverTheBest) {
  std::vector<int> n = counts(1.0, 2, 20000);
  EXPECT_EQ(n[2] + n[3], 0);
  EXPECT_NEAR(n[0] / 20000.0, 0.625, 0.015);
}

// Low temperature sharpens, high temperature flattens.
TEST(Sample, TemperatureSharpensAndFlattens) {
  EXPECT_GT(counts(0.3, 0, 5000)[0], counts(1.0, 0, 5000)[0]);
  EXPECT_GT(counts(3.0, 0, 5000)[3], counts(1.0, 0, 5000)[3]);
}

// Two rows with the same fixed next-token distribution (eos = 2 has probability 0.15).
class FixedModel : public attn::decode::StepModel {
public:
  int64_t rows() const override { return 2; }
  int64_t vocab() const override { return 4; }
  void step(const std::vector<int32_t> &, std::vector<float> &logProbs) override {
    logProbs.clear();
    for (int k = 0; k < 2; ++k)
      logProbs.insert(logProbs.end(), kScores.begin(), kScores.end());
  }
  void reorder(const std::vector<int32_t> &) override {}
};

TEST(Sample, SampledDecodingStopsAtEosAndIsSeeded) {
  FixedModel model;
  attn::decode::SamplingOptions o;
  o.maxLength = 30;
  o.seed = 3;
  auto a = attn::decode::sampled(model, o), b = attn::decode::sampled(model, o);
  ASSERT_EQ(a.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(a[k].tokens, b[k].tokens); // the same seed, the same draws
    for (int32_t t : a[k].tokens)
      EXPECT_NE(t, o.eos);
    EXPECT_LE(a[k].tokens.size(), 30u);
    EXPECT_LT(a[k].logProb, 0);
  }
  EXPECT_NE(a[0].tokens, a[1].tokens); // rows draw from their own streams
  o.topK = 1;                          // only token 0, never eos: runs to maxLength
  auto greedy = attn::decode::sampled(model, o);
  EXPECT_EQ(greedy[0].tokens, std::vector<int32_t>(30, 0));
}

} // namespace
