// The fused additive attention kernels (runtime/cpu/attention.cpp) against float64 loops with
// std::tanh: forward and backward, a padded row, a row with nothing to attend to, and a
// strided key view (which the kernel packs).
#include "attn/Random.h"
#include "attn/kernels.h"
#include "tests/support/KernelArgs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

using attn::testing::memref;
using attn::testing::randomFloats;

constexpr int64_t B = 3, S = 5, A = 37, D = 6; // A not a multiple of any vector width
constexpr double kTol = 2e-6;

double maxDiff(const std::vector<float> &a, const std::vector<double> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

struct Inputs {
  std::vector<float> q, k, v, mask, h;
};

Inputs inputs() {
  attn::Rng rng(7);
  Inputs in{randomFloats(B * A, rng),
            randomFloats(B * S * A, rng, 2.0),
            randomFloats(A, rng),
            {},
            randomFloats(B * S * D, rng)};
  // Row 0 complete, row 1 padded after 3 tokens, row 2 with nothing to attend to.
  in.mask = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0};
  return in;
}

// Float64 forward: weights [B, S] and context [B, D].
void reference(const Inputs &in, std::vector<double> &w, std::vector<double> &c) {
  w.assign(B * S, 0);
  c.assign(B * D, 0);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> e(S, -INFINITY);
    double max = -INFINITY, total = 0;
    for (int64_t j = 0; j < S; ++j) {
      if (!in.mask[b * S + j])
        continue;
      e[j] = 0;
      for (int64_t a = 0; a < A; ++a)
        e[j] += in.v[a] * std::tanh((double)in.q[b * A + a] + in.k[(b * S + j) * A + a]);
      max = std::max(max, e[j]);
    }
    for (int64_t j = 0; j < S; ++j)
      if (in.mask[b * S + j])
        total += std::exp(e[j] - max);
    for (int64_t j = 0; j < S; ++j) {
      w[b * S + j] = in.mask[b * S + j] ? std::exp(e[j] - max) / total : 0;
      for (int64_t x = 0; x < D; ++x)
        c[b * D + x] += w[b * S + j] * in.h[(b * S + j) * D + x];
    }
  }
}

TEST(AdditiveAttention, ForwardMatchesFloat64) {
  Inputs in = inputs();
  std::vector<float> c(B * D), w(B * S), kStrided(B * S * (A + 3), NAN);
  auto q = memref<attn_memref2>(in.q, {B, A});
  auto v = memref<attn_memref1>(in.v, {A});
  auto mask = memref<attn_memref2>(in.mask, {B, S});
  auto h = memref<attn_memref3>(in.h, {B, S, D});
  auto cm = memref<attn_memref2>(c, {B, D});
  auto wm = memref<attn_memref2>(w, {B, S});
  std::vector<double> wRef, cRef;
  reference(in, wRef, cRef);

  auto k = memref<attn_memref3>(in.k, {B, S, A});
  _mlir_ciface_attn_rt_additive_attention(&q, &k, &v, &mask, &h, &cm, &wm);
  EXPECT_LT(maxDiff(w, wRef), kTol);
  EXPECT_LT(maxDiff(c, cRef), kTol);
  for (int64_t j = 0; j < S; ++j)
    EXPECT_EQ(w[2 * S + j], 0.0f) << "a row without tokens attends to nothing";

  // The same keys in a padded buffer (row stride A + 3): the kernel must honour strides.
  for (int64_t r = 0; r < B * S; ++r)
    std::copy(in.k.begin() + r * A, in.k.begin() + (r + 1) * A, kStrided.begin() + r * (A + 3));
  int64_t strides[3] = {S * (A + 3), A + 3, 1};
  auto ks = memref<attn_memref3>(kStrided, {B, S, A}, strides);
  std::fill(c.begin(), c.end(), 0.0f);
  _mlir_ciface_attn_rt_additive_attention(&q, &ks, &v, &mask, &h, &cm, &wm);
  EXPECT_LT(maxDiff(c, cRef), kTol);
}

// The backward against central differences of the float64 forward, for the loss
// L = sum(c * gc) + sum(w * gw).
TEST(AdditiveAttention, BackwardMatchesFiniteDifferences) {
  Inputs in = inputs();
  attn::Rng rng(11);
  std::vector<float> gc = randomFloats(B * D, rng), gw = randomFloats(B * S, rng);
  std::vector<double> wRef, cRef;
  reference(in, wRef, cRef);
  std::vector<float> w(wRef.begin(), wRef.end());
  std::vector<float> dq(B * A), dk(B * S * A), dv(A), dh(B * S * D);
  auto q = memref<attn_memref2>(in.q, {B, A});
  auto k = memref<attn_memref3>(in.k, {B, S, A});
  auto v = memref<attn_memref1>(in.v, {A});
  auto mask = memref<attn_memref2>(in.mask, {B, S});
  auto h = memref<attn_memref3>(in.h, {B, S, D});
  auto wm = memref<attn_memref2>(w, {B, S});
  auto gcm = memref<attn_memref2>(gc, {B, D});
  auto gwm = memref<attn_memref2>(gw, {B, S});
  auto dqm = memref<attn_memref2>(dq, {B, A});
  auto dkm = memref<attn_memref3>(dk, {B, S, A});
  auto dvm = memref<attn_memref1>(dv, {A});
  auto dhm = memref<attn_memref3>(dh, {B, S, D});
  _mlir_ciface_attn_rt_additive_attention_backward(&q, &k, &v, &mask, &h, &wm, &gcm, &gwm, &dqm,
                                                   &dkm, &dvm, &dhm);

  auto loss = [&](const Inputs &x) {
    std::vector<double> ww, cc;
    reference(x, ww, cc);
    double l = 0;
    for (int64_t i = 0; i < B * D; ++i)
      l += cc[i] * gc[i];
    for (int64_t i = 0; i < B * S; ++i)
      l += ww[i] * gw[i];
    return l;
  };
  auto check = [&](std::vector<float> Inputs::*field, const std::vector<float> &grad,
                   const char *name) {
    double worst = 0;
    for (size_t i = 0; i < grad.size(); ++i) {
      Inputs plus = in, minus = in;
      const double eps = 1e-3;
      (plus.*field)[i] += (float)eps;
      (minus.*field)[i] -= (float)eps;
      double numeric = (loss(plus) - loss(minus)) / (((plus.*field)[i] - (minus.*field)[i]));
      worst = std::max(worst, std::fabs(numeric - grad[i]));
    }
    EXPECT_LT(worst, 1e-3) << name;
  };
  check(&Inputs::q, dq, "dq");
  check(&Inputs::k, dk, "dk");
  check(&Inputs::v, dv, "dv");
  check(&Inputs::h, dh, "dh");
  for (int64_t x = 0; x < S * A; ++x)
    EXPECT_EQ(dk[2 * S * A + x], 0.0f) << "no gradient reaches keys nothing attends to";
}

} // namespace
