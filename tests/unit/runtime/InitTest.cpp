// initParams: determinism, per-parameter streams, and the documented algorithm.
#include "attn/Init.h"
#include "attn/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace {

attn_tensor_info param(const char *name, std::vector<int64_t> shape, const char *init,
                       float scale = 0.f) {
  attn_tensor_info p{};
  p.name = name;
  p.dtype = ATTN_F32;
  p.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    p.shape[i] = shape[i];
  p.init = init;
  p.scale = scale;
  return p;
}

attn_program_info program(const std::vector<attn_tensor_info> &params) {
  return attn_program_info{"m", static_cast<int32_t>(params.size()), params.data(), 0, nullptr};
}

bool sameBits(const attn::Tensor &a, const attn::Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

const std::vector<attn_tensor_info> kParams = {
    param("rnn.w_ax", {4, 8}, "uniform", 0.5f),
    param("rnn.b", {8}, "zeros"),
    param("rnn.gain", {3, 2}, "ones"),
    param("head.w", {8, 3}, "normal", 0.1f),
};

TEST(Random, KnownValues) {
  // Reference values of the published algorithms.
  uint64_t s = 0;
  EXPECT_EQ(attn::splitmix64(s), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(attn::fnv1a64(""), 0xCBF29CE484222325ull);
  EXPECT_EQ(attn::fnv1a64("a"), 0xAF63DC4C8601EC8Cull);
  attn::Rng r(1);
  double d = r.nextDouble();
  EXPECT_GE(d, 0.0);
  EXPECT_LT(d, 1.0);
}

TEST(Init, DeterministicForASeed) {
  auto info = program(kParams);
  auto a = attn::initParams(info, 1234);
  auto b = attn::initParams(info, 1234);
  ASSERT_EQ(a.size(), kParams.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(sameBits(a[i], b[i])) << kParams[i].name;
}

TEST(Init, DifferentSeedDifferentValues) {
  auto info = program(kParams);
  auto a = attn::initParams(info, 1);
  auto b = attn::initParams(info, 2);
  EXPECT_FALSE(sameBits(a[0], b[0]));
  EXPECT_FALSE(sameBits(a[3], b[3]));
}

TEST(Init, UniformWithinBoundsAndSpread) {
  auto p = param("w", {64, 64}, "uniform", 0.25f);
  attn::Tensor t = attn::initParam(p, 9);
  const float *x = t.data<float>();
  float lo = 1, hi = -1;
  double mean = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    EXPECT_LE(std::fabs(x[i]), 0.25f);
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    mean += x[i];
  }
  mean /= t.numel();
  EXPECT_LT(lo, -0.24f);
  EXPECT_GT(hi, 0.24f);
  EXPECT_NEAR(mean, 0.0, 0.01);
}

TEST(Init, NormalMoments) {
  auto p = param("w", {100, 101}, "normal", 2.0f); // odd count: last pair half used
  attn::Tensor t = attn::initParam(p, 5);
  const float *x = t.data<float>();
  double mean = 0, var = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    mean += x[i];
  mean /= t.numel();
  for (int64_t i = 0; i < t.numel(); ++i)
    var += (x[i] - mean) * (x[i] - mean);
  var /= t.numel();
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.1);
}

TEST(Init, MatchesDocumentedAlgorithm) {
  const uint64_t seed = 77;
  auto u = param("enc.w", {5}, "uniform", 0.3f);
  attn::Tensor tu = attn::initParam(u, seed);
  attn::Rng ru(seed ^ attn::fnv1a64("enc.w"));
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(tu.data<float>()[i], static_cast<float>((2 * ru.nextDouble() - 1) * 0.3f));

  auto n = param("dec.w", {3}, "normal", 0.5f);
  attn::Tensor tn = attn::initParam(n, seed);
  attn::Rng rn(seed ^ attn::fnv1a64("dec.w"));
  for (int64_t i = 0; i < 3; i += 2) {
    double u1 = rn.nextDouble(), u2 = rn.nextDouble();
    double r = std::sqrt(-2 * std::log(1 - u1));
    EXPECT_EQ(tn.data<float>()[i], static_cast<float>(0.5 * r * std::cos(2 * M_PI * u2)));
    if (i + 1 < 3) {
      EXPECT_EQ(tn.data<float>()[i + 1], static_cast<float>(0.5 * r * std::sin(2 * M_PI * u2)));
    }
  }
}

TEST(Init, StableWhenAParamIsAdded) {
  auto before = attn::initParams(program(kParams), 99);
  std::vector<attn_tensor_info> more = kParams;
  more.insert(more.begin() + 1, param("new.w", {7, 7}, "uniform", 1.0f));
  auto after = attn::initParams(program(more), 99);
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_TRUE(sameBits(before[0], after[0]));
  for (size_t i = 1; i < before.size(); ++i)
    EXPECT_TRUE(sameBits(before[i], after[i + 1])) << kParams[i].name;
}

TEST(Init, ZerosAndOnesExact) {
  auto ps = attn::initParams(program(kParams), 3);
  for (int64_t i = 0; i < ps[1].numel(); ++i)
    EXPECT_EQ(ps[1].data<float>()[i], 0.0f);
  for (int64_t i = 0; i < ps[2].numel(); ++i)
    EXPECT_EQ(ps[2].data<float>()[i], 1.0f);
  EXPECT_EQ(ps[2].shape(), (std::vector<int64_t>{3, 2}));
}

// A learned scalar's starting value (model.transformer.attention.params): every element is
// `scale`, bit for bit.
TEST(Init, ConstantIsItsScale) {
  attn::Tensor t = attn::initParam(param("self_attn.slope", {3}, "constant", -0.375f), 7);
  for (int64_t i = 0; i < t.numel(); ++i)
    EXPECT_EQ(t.data<float>()[i], -0.375f);
}

// ALiBi's slopes for 8 heads: 1/2, 1/4, ..., 1/256.
TEST(Init, AlibiIsTheGeometricSequenceOfSlopes) {
  attn::Tensor t = attn::initParam(param("self_attn.slope", {8}, "alibi", 0.0f), 7);
  for (int64_t k = 0; k < 8; ++k)
    EXPECT_EQ(t.data<float>()[k], std::ldexp(1.0f, -(int)(k + 1))) << k;
}

TEST(Init, UnknownInitThrows) {
  auto p = param("w", {2}, "xavier", 1.0f);
  try {
    attn::initParam(p, 0);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("xavier"), std::string::npos) << e.what();
  }
  auto none = param("v", {2}, nullptr);
  EXPECT_THROW(attn::initParam(none, 0), std::runtime_error);
}

} // namespace
