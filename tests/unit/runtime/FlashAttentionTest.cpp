// The flash attention kernels (runtime/cpu/flash_attention.cpp: attn.fused_attention with a
// dot-product score) against float64 loops that materialise the whole [T, S] score matrix:
// forward (output and log-sum-exp) and every gradient, over query counts T in {1, 7, 33, 129}
// and key counts S in {1, 5, 127, 513} (tile edges on both sides), an odd head width, with and
// without causal masking (T > S leaves early rows without keys), with padded keys and a batch
// row whose keys are all padding (zero rows, as the fused op defines them), the scaled dot and
// the plain dot, and a single (batch, head) pair. The _regions kernels with score and mask
// regions (ALiBi with a learned slope, softcapping, a sliding window, a mask that leaves rows
// without keys) as hand-written tile functions, the capture's gradient included.
#include "attn/Random.h"
#include "attn/kernels.h"
#include "tests/support/KernelArgs.h"
#include "tests/support/CpuFeatures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

using attn::testing::memref;
using attn::testing::randomFloats;

struct Case {
  int64_t B, H, T, S, D, Dv;
  bool causal;
  bool scaled; // 1/sqrt(D) (the Transformer's), else the plain dot (Luong's)
  float scale() const { return scaled ? 1.0f / std::sqrt((float)D) : 1.0f; }
};

// A score region f(dot, i, j, slope) with its derivatives, and a mask region, as the float64
// reference computes them (the _regions kernels' tile functions compute the same in f32).
struct Mod {
  const char *name;
  double (*score)(double dot, double i, double j, double slope, int64_t D);
  double (*dScoreDDot)(double dot, double i, double j, double slope, int64_t D);
  double (*dScoreDSlope)(double dot, double i, double j, double slope, int64_t D);
  bool (*allowed)(double i, double j, double slope); // null: no mask region
};

struct Problem {
  Case c;
  std::vector<float> q, k, v, mask, dOut, dLse;
  const Mod *mod = nullptr;
  std::vector<float> slopes{0.3f}; // the capture: every head's, or one per head
  float slope(int64_t h) const { return slopes[slopes.size() == 1 ? 0 : h]; }
};

Problem problem(const Case &c, uint64_t seed) {
  attn::Rng rng(seed);
  Problem p{c,
            randomFloats(c.B * c.H * c.T * c.D, rng, 2.0),
            randomFloats(c.B * c.H * c.S * c.D, rng, 2.0),
            randomFloats(c.B * c.H * c.S * c.Dv, rng),
            std::vector<float>(c.B * c.S, 1.0f),
            randomFloats(c.B * c.H * c.T * c.Dv, rng),
            randomFloats(c.B * c.H * c.T, rng)};
  // Batch row 1 is padded after 60% of its keys (at least one); row 2 is all padding.
  if (c.B > 1)
    for (int64_t j = std::max<int64_t>(1, c.S * 6 / 10); j < c.S; ++j)
      p.mask[c.S + j] = 0;
  if (c.B > 2)
    std::fill(p.mask.begin() + 2 * c.S, p.mask.begin() + 3 * c.S, 0.0f);
  return p;
}

// Float64 results: out, lse, and the gradients of sum(out * dOut) + sum(lse * dLse).
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
  std::vector<double> dSlope; // per row of slopes
};

Reference reference(const Problem &p) {
  const Case &c = p.c;
  Reference r;
  r.out.assign(c.B * c.H * c.T * c.Dv, 0);
  r.lse.assign(c.B * c.H * c.T, 0);
  r.dq.assign(p.q.size(), 0);
  r.dk.assign(p.k.size(), 0);
  r.dv.assign(p.v.size(), 0);
  r.dSlope.assign(p.slopes.size(), 0);
  double scale = c.scale();
  std::vector<double> s(c.S), w(c.S), dw(c.S), dots(c.S);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h) {
      int64_t bh = b * c.H + h;
      const float *q = &p.q[bh * c.T * c.D], *k = &p.k[bh * c.S * c.D], *v = &p.v[bh * c.S * c.Dv],
                  *dOut = &p.dOut[bh * c.T * c.Dv];
      double slope = p.slope(h);
      double &dSlope = r.dSlope[p.slopes.size() == 1 ? 0 : h];
      for (int64_t i = 0; i < c.T; ++i) {
        double mx = -INFINITY;
        std::vector<bool> allowed(c.S);
        for (int64_t j = 0; j < c.S; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < c.D; ++d)
            dot += (double)q[i * c.D + d] * k[j * c.D + d];
          allowed[j] = p.mask[b * c.S + j] != 0 && (!c.causal || j <= i + c.S - c.T);
          dots[j] = dot;
          s[j] = dot * scale;
          if (p.mod) {
            s[j] = p.mod->score(dot, i, j, slope, c.D);
            allowed[j] = allowed[j] && (!p.mod->allowed || p.mod->allowed(i, j, slope));
          }
          if (allowed[j])
            mx = std::max(mx, s[j]);
        }
        if (mx == -INFINITY) // no allowed key: a zero row, without gradients
          continue;
        double total = 0;
        for (int64_t j = 0; j < c.S; ++j)
          total += w[j] = allowed[j] ? std::exp(s[j] - mx) : 0.0;
        for (int64_t j = 0; j < c.S; ++j)
          w[j] /= total;
        r.lse[bh * c.T + i] = mx + std::log(total);
        double *out = &r.out[(bh * c.T + i) * c.Dv];
        for (int64_t j = 0; j < c.S; ++j)
          for (int64_t e = 0; e < c.Dv; ++e)
            out[e] += w[j] * v[j * c.Dv + e];
        // d lse / d s = w; d out / d w_j = v_j; softmax backward.
        double dot = 0;
        for (int64_t j = 0; j < c.S; ++j) {
          dw[j] = 0;
          for (int64_t e = 0; e < c.Dv; ++e) {
            dw[j] += (double)dOut[i * c.Dv + e] * v[j * c.Dv + e];
            r.dv[(bh * c.S + j) * c.Dv + e] += w[j] * dOut[i * c.Dv + e];
          }
          dot += w[j] * dw[j];
        }
        for (int64_t j = 0; j < c.S; ++j) {
          double ds = w[j] * (dw[j] - dot) + w[j] * p.dLse[bh * c.T + i];
          double dDot = ds * scale;
          if (p.mod && allowed[j]) {
            dDot = ds * p.mod->dScoreDDot(dots[j], i, j, slope, c.D);
            dSlope += ds * p.mod->dScoreDSlope(dots[j], i, j, slope, c.D);
          }
          for (int64_t d = 0; d < c.D; ++d) {
            r.dq[(bh * c.T + i) * c.D + d] += dDot * k[j * c.D + d];
            r.dk[(bh * c.S + j) * c.D + d] += dDot * q[i * c.D + d];
          }
        }
      }
    }
  return r;
}

// max |a - b| / max(1, max |b|): relative to the tensor's scale.
double relativeError(const std::vector<float> &a, const std::vector<double> &b) {
  double diff = 0, size = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    size = std::max(size, std::fabs(b[i]));
  }
  return diff / size;
}

class FlashAttention : public ::testing::TestWithParam<Case> {};

// The kernels' results on a problem: out, lse (the forward) and dq, dk, dv (the backward).
struct Results {
  std::vector<float> out, lse, dq, dk, dv;
};

template <class Forward, class Backward>
Results run(const Problem &p, Forward forward, Backward backward) {
  const Case &c = p.c;
  Problem in = p; // the kernels take non-const memrefs
  Results r{std::vector<float>(c.B * c.H * c.T * c.Dv), std::vector<float>(c.B * c.H * c.T),
            std::vector<float>(in.q.size()), std::vector<float>(in.k.size()),
            std::vector<float>(in.v.size())};
  auto q = memref<attn_memref4>(in.q, {c.B, c.H, c.T, c.D});
  auto k = memref<attn_memref4>(in.k, {c.B, c.H, c.S, c.D});
  auto v = memref<attn_memref4>(in.v, {c.B, c.H, c.S, c.Dv});
  auto mask = memref<attn_memref2>(in.mask, {c.B, c.S});
  auto o = memref<attn_memref4>(r.out, {c.B, c.H, c.T, c.Dv});
  auto l = memref<attn_memref3>(r.lse, {c.B, c.H, c.T});
  forward(&q, &k, &v, &mask, &o, &l, c.causal, c.scale());
  auto dOut = memref<attn_memref4>(in.dOut, {c.B, c.H, c.T, c.Dv});
  auto dLse = memref<attn_memref3>(in.dLse, {c.B, c.H, c.T});
  auto gq = memref<attn_memref4>(r.dq, {c.B, c.H, c.T, c.D});
  auto gk = memref<attn_memref4>(r.dk, {c.B, c.H, c.S, c.D});
  auto gv = memref<attn_memref4>(r.dv, {c.B, c.H, c.S, c.Dv});
  backward(&q, &k, &v, &mask, &o, &l, &dOut, &dLse, &gq, &gk, &gv, c.causal, c.scale());
  return r;
}

TEST_P(FlashAttention, MatchesTheMaterialisedReference) {
  const Case &c = GetParam();
  Problem p = problem(c, 11 + c.T * 1000 + c.S);
  Reference ref = reference(p);
  Results r = run(p, _mlir_ciface_attn_rt_flash_attention,
                  _mlir_ciface_attn_rt_flash_attention_backward);
  EXPECT_LT(relativeError(r.out, ref.out), 1e-5);
  EXPECT_LT(relativeError(r.lse, ref.lse), 1e-5);
  EXPECT_LT(relativeError(r.dq, ref.dq), 1e-5);
  EXPECT_LT(relativeError(r.dk, ref.dk), 1e-5);
  EXPECT_LT(relativeError(r.dv, ref.dv), 1e-5);
}

// The bf16 kernels (every tile product in bf16, f32 sums and softmax) against the same float64
// reference, within bfloat16's error (8 significant bits: the tolerances of the CUDA kernels'
// bf16 tests, 1e-2 for the outputs and 2e-2 for the gradients), and not at f32's: the
// products did round. The plain dot's scores are sqrt(D) = 5.7 times the scaled dot's, and so
// are the absolute errors rounding puts into them: its outputs get 2e-2 (measured: 1.3e-2).
TEST_P(FlashAttention, Bf16StaysWithinBf16sErrorOfTheReference) {
  ATTN_SKIP_WITHOUT_BF16();
  const Case &c = GetParam();
  Problem p = problem(c, 11 + c.T * 1000 + c.S);
  Reference ref = reference(p);
  Results r = run(p, _mlir_ciface_attn_rt_flash_attention_bf16,
                  _mlir_ciface_attn_rt_flash_attention_backward_bf16);
  double outError = relativeError(r.out, ref.out), outTolerance = c.scaled ? 1e-2 : 2e-2;
  EXPECT_LT(outError, outTolerance);
  EXPECT_LT(relativeError(r.lse, ref.lse), outTolerance);
  double dqError = relativeError(r.dq, ref.dq), dkError = relativeError(r.dk, ref.dk),
         dvError = relativeError(r.dv, ref.dv);
  EXPECT_LT(dqError, 2e-2);
  EXPECT_LT(dkError, 2e-2);
  EXPECT_LT(dvError, 2e-2);
  // Where there is anything to round (a key for some query), bf16 shows.
  if (c.S > 1 && c.T > 1)
    EXPECT_GT(std::max({outError, dqError, dkError, dvError}), 1e-4);
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int64_t t : {1, 7, 33, 129})
    for (int64_t s : {1, 5, 127, 513})
      for (bool causal : {false, true})
        all.push_back({3, 2, t, s, 33, 17, causal, /*scaled=*/true});
  // One (batch, head) pair: the backward then splits the key tiles over the threads, each
  // summing its own copy of dq. The plain dot.
  for (bool causal : {false, true})
    all.push_back({1, 1, 129, 513, 33, 17, causal, /*scaled=*/false});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FlashAttention, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           const Case &c = info.param;
                           return "B" + std::to_string(c.B) + "H" + std::to_string(c.H) + "_T" +
                                  std::to_string(c.T) + "_S" + std::to_string(c.S) +
                                  (c.causal ? "_causal" : "");
                         });

//===- score and mask regions ------------------------------------------------------------===//

// The mods, each as the reference's formulas and as the tile functions attn-to-onednn would
// generate for its regions (MLIR's calling convention, attn/kernels.h), the capture a slope.
double inverseRootD(int64_t D) { return 1.0 / std::sqrt((double)D); }

double alibi(double dot, double i, double j, double slope, int64_t D) {
  return dot * inverseRootD(D) - slope * std::fabs(i - j);
}
double alibiDDot(double, double, double, double, int64_t D) { return inverseRootD(D); }
double alibiDSlope(double, double i, double j, double, int64_t) { return -std::fabs(i - j); }

constexpr double kCap = 2.0; // small, so that most scores are bent by it
double softcap(double dot, double, double, double, int64_t D) {
  return kCap * std::tanh(dot * inverseRootD(D) / kCap);
}
double softcapDDot(double dot, double, double, double, int64_t D) {
  double t = std::tanh(dot * inverseRootD(D) / kCap);
  return (1 - t * t) * inverseRootD(D);
}
double noSlope(double, double, double, double, int64_t) { return 0; }
// The plain score under a mask: the kernels get it as has_score 0 and the scale.
double scaledDot(double dot, double, double, double, int64_t D) { return dot * inverseRootD(D); }

// Keys at most 40 positions away: at S = 513 and 128-wide tiles, pairs of every verdict.
bool window(double i, double j, double) { return std::fabs(i - j) <= 40; }
// The windows that the kernels take as arguments instead of a mask function (window_left,
// window_right), as the reference's mask: 40 each way (the same keys as `window` above), at most
// 100 back (non-causal: every key ahead too), at most 20 ahead (causal: the diagonal's band).
bool band40(double i, double j, double) { return i - 40 <= j && j <= i + 40; }
bool back100(double i, double j, double) { return i - 100 <= j; }
bool ahead20(double i, double j, double) { return j <= i + 20; }
// Keys at least 3 positions back: queries 0 .. 2 (and, causal with T > S, more) see none.
bool lagged(double i, double j, double) { return j <= i - 3; }
// Keys at most 400 slope positions away: with a slope per head, each head's own window (120
// and 240 wide at 0.3 and 0.6), so that the heads' tile verdicts differ.
bool slopeWindow(double i, double j, double slope) {
  return std::fabs(i - j) <= 400 * (double)(float)slope;
}

#define ATTN_TILE_ARGS                                                                             \
  float *, float *t, int64_t, int64_t, int64_t, float *, float *captures, int64_t, int64_t,        \
      int64_t, int64_t ld, int64_t rows, int64_t cols, int64_t i0, int64_t j0
#define ATTN_TILE_GRAD_ARGS                                                                        \
  float *, float *dots, int64_t, int64_t, int64_t, float *, float *ds, int64_t, int64_t, int64_t,  \
      float *, float *captures, int64_t, int64_t, int64_t, float *, float *dCaptures, int64_t,     \
      int64_t, int64_t, int64_t ld, int64_t rows, int64_t cols, int64_t i0, int64_t j0

// t[r, c] = f(t[r, c], i, j) over a tile, in f32 as generated code computes it.
template <float (*F)(float, float, float, float, int64_t)> void scoreTile(ATTN_TILE_ARGS) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[r * ld + c] = F(t[r * ld + c], (float)(i0 + r), (float)(j0 + c), captures[0], 33);
}
template <float (*F)(float, float, float, float, int64_t),
          float (*DSlope)(float, float, float, float, int64_t)>
void scoreGradTile(ATTN_TILE_GRAD_ARGS) {
  float slope = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float i = (float)(i0 + r), j = (float)(j0 + c), g = ds[r * ld + c];
      slope += g * DSlope(dots[r * ld + c], i, j, captures[0], 33);
      ds[r * ld + c] = g * F(dots[r * ld + c], i, j, captures[0], 33);
    }
  dCaptures[0] += slope;
}
template <bool (*Allowed)(double, double, double)> void maskTile(ATTN_TILE_ARGS) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[r * ld + c] = Allowed((double)(i0 + r), (double)(j0 + c), captures[0]) ? 1.0f : 0.0f;
}

template <double (*F)(double, double, double, double, int64_t)>
float inF32(float dot, float i, float j, float slope, int64_t D) {
  return (float)F(dot, i, j, slope, D);
}

struct RegionMod {
  Mod mod;
  attn_tile_fn score, mask;
  attn_tile_grad_fn grad;
  bool maskReadsSlope = false; // has_mask 2 with a slope per head: verdicts per head
  int64_t windowLeft = -1, windowRight = -1; // the mask as the kernels' window arguments
  bool productScore = false; // has_score 0: the score is the scaled product (scale 1/sqrt(D))
};

const RegionMod kMods[] = {
    {{"alibi", alibi, alibiDDot, alibiDSlope, nullptr},
     scoreTile<inF32<alibi>>,
     nullptr,
     scoreGradTile<inF32<alibiDDot>, inF32<alibiDSlope>>},
    {{"softcap", softcap, softcapDDot, noSlope, nullptr},
     scoreTile<inF32<softcap>>,
     nullptr,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>},
    {{"alibi_window", alibi, alibiDDot, alibiDSlope, window},
     scoreTile<inF32<alibi>>,
     maskTile<window>,
     scoreGradTile<inF32<alibiDDot>, inF32<alibiDSlope>>},
    {{"softcap_lagged", softcap, softcapDDot, noSlope, lagged},
     scoreTile<inF32<softcap>>,
     maskTile<lagged>,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>},
    {{"alibi_slope_window", alibi, alibiDDot, alibiDSlope, slopeWindow},
     scoreTile<inF32<alibi>>,
     maskTile<slopeWindow>,
     scoreGradTile<inF32<alibiDDot>, inF32<alibiDSlope>>,
     /*maskReadsSlope=*/true},
    // The same per-head windows under a score that does not fade far keys: a head given
    // another head's tile verdicts loses keys that weigh.
    {{"softcap_slope_window", softcap, softcapDDot, noSlope, slopeWindow},
     scoreTile<inF32<softcap>>,
     maskTile<slopeWindow>,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>,
     /*maskReadsSlope=*/true},
    {{"alibi_window_arguments", alibi, alibiDDot, alibiDSlope, band40},
     scoreTile<inF32<alibi>>,
     nullptr,
     scoreGradTile<inF32<alibiDDot>, inF32<alibiDSlope>>,
     /*maskReadsSlope=*/false,
     /*windowLeft=*/40,
     /*windowRight=*/40},
    {{"softcap_window_back", softcap, softcapDDot, noSlope, back100},
     scoreTile<inF32<softcap>>,
     nullptr,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>,
     /*maskReadsSlope=*/false,
     /*windowLeft=*/100,
     /*windowRight=*/-1},
    {{"softcap_window_ahead", softcap, softcapDDot, noSlope, ahead20},
     scoreTile<inF32<softcap>>,
     nullptr,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>,
     /*maskReadsSlope=*/false,
     /*windowLeft=*/-1,
     /*windowRight=*/20},
    // The score functions passed are softcap's, which has_score 0 must leave uncalled.
    {{"product_window_arguments", scaledDot, alibiDDot, noSlope, band40},
     scoreTile<inF32<softcap>>,
     nullptr,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>,
     /*maskReadsSlope=*/false,
     /*windowLeft=*/40,
     /*windowRight=*/40,
     /*productScore=*/true},
    {{"product_lagged", scaledDot, alibiDDot, noSlope, lagged},
     scoreTile<inF32<softcap>>,
     maskTile<lagged>,
     scoreGradTile<inF32<softcapDDot>, inF32<noSlope>>,
     /*maskReadsSlope=*/false,
     /*windowLeft=*/-1,
     /*windowRight=*/-1,
     /*productScore=*/true},
};

struct RegionCase {
  Case shape;
  const RegionMod *mod;
  bool perHead = false; // a slope per head (captures [H, 1]), else one for all (captures [1, 1])
};

class FlashAttentionRegions : public ::testing::TestWithParam<RegionCase> {};

// The _regions kernels (f32, or with bf16 tile products) on a case: the results and the
// slopes' gradients.
Results runRegions(const Problem &p, const RegionMod *m, bool bf16, std::vector<float> &dSlope) {
  int64_t rows = (int64_t)p.slopes.size();
  std::vector<float> captures = p.slopes, dCaptures(rows, 0.0f);
  auto cap = memref<attn_memref2>(captures, {rows, 1});
  auto dCap = memref<attn_memref2>(dCaptures, {rows, 1});
  // has_mask as attn-to-onednn passes it: 2 where the mask reads a per-head capture.
  int64_t hasMask = !m->mask ? 0 : m->maskReadsSlope && rows > 1 ? 2 : 1;
  attn_tile_fn mask = m->mask ? m->mask : m->score;
  int64_t hasScore = m->productScore ? 0 : 1;
  float scale = m->productScore ? (float)inverseRootD(p.c.D) : 1.0f;
  auto forward = bf16 ? _mlir_ciface_attn_rt_flash_attention_regions_bf16
                      : _mlir_ciface_attn_rt_flash_attention_regions;
  auto backward = bf16 ? _mlir_ciface_attn_rt_flash_attention_regions_backward_bf16
                       : _mlir_ciface_attn_rt_flash_attention_regions_backward;
  Results r = run(
      p,
      [&](attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *keyMask, attn_memref4 *o,
          attn_memref3 *l, int64_t causal, float) {
        forward(q, k, v, keyMask, &cap, o, l, causal, hasMask, m->windowLeft, m->windowRight,
                hasScore, scale, m->score, mask);
      },
      [&](attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *keyMask, attn_memref4 *o,
          attn_memref3 *l, attn_memref4 *dOut, attn_memref3 *dLse, attn_memref4 *gq,
          attn_memref4 *gk, attn_memref4 *gv, int64_t causal, float) {
        backward(q, k, v, keyMask, &cap, o, l, dOut, dLse, gq, gk, gv, &dCap, causal, hasMask,
                 m->windowLeft, m->windowRight, hasScore, scale, m->score, m->grad, mask);
      });
  dSlope = dCaptures;
  return r;
}

double slopeError(const std::vector<float> &dSlope, const Reference &ref) {
  double worst = 0;
  for (size_t n = 0; n < dSlope.size(); ++n)
    worst = std::max(worst, std::fabs(dSlope[n] - ref.dSlope[n]) /
                                std::max(1.0, std::fabs(ref.dSlope[n])));
  return worst;
}
std::string str(const std::vector<float> &x) {
  std::string s;
  for (float v : x)
    s += std::to_string(v) + " ";
  return s;
}
std::string str(const std::vector<double> &x) {
  return str(std::vector<float>(x.begin(), x.end()));
}

// A case's problem with its mod, the float64 reference and the kernels' results.
struct RegionRun {
  Reference ref;
  Results r;
  std::vector<float> dSlope;
};

RegionRun runCase(const RegionCase &rc, bool bf16) {
  const Case &c = rc.shape;
  Problem p = problem(c, 29 + c.T * 1000 + c.S);
  p.mod = &rc.mod->mod;
  if (rc.perHead)
    for (int64_t h = 1; h < c.H; ++h)
      p.slopes.push_back(0.3f * (float)(h + 1));
  RegionRun run{reference(p), {}, {}};
  run.r = runRegions(p, rc.mod, bf16, run.dSlope);
  return run;
}

TEST_P(FlashAttentionRegions, MatchesTheMaterialisedReference) {
  auto [ref, r, dSlope] = runCase(GetParam(), /*bf16=*/false);
  EXPECT_LT(relativeError(r.out, ref.out), 1e-5);
  EXPECT_LT(relativeError(r.lse, ref.lse), 1e-5);
  EXPECT_LT(relativeError(r.dq, ref.dq), 1e-5);
  EXPECT_LT(relativeError(r.dk, ref.dk), 1e-5);
  EXPECT_LT(relativeError(r.dv, ref.dv), 1e-5);
  EXPECT_LT(slopeError(dSlope, ref), 1e-4) << str(dSlope) << " against " << str(ref.dSlope);
}

// With bf16 tile products: within bfloat16's error of the reference, as the plain kernels'
// bf16 test (the regions themselves run in f32 on the f32 products).
TEST_P(FlashAttentionRegions, Bf16StaysWithinBf16sErrorOfTheReference) {
  ATTN_SKIP_WITHOUT_BF16();
  auto [ref, r, dSlope] = runCase(GetParam(), /*bf16=*/true);
  EXPECT_LT(relativeError(r.out, ref.out), 1e-2);
  EXPECT_LT(relativeError(r.lse, ref.lse), 1e-2);
  EXPECT_LT(relativeError(r.dq, ref.dq), 2e-2);
  EXPECT_LT(relativeError(r.dk, ref.dk), 2e-2);
  EXPECT_LT(relativeError(r.dv, ref.dv), 2e-2);
  EXPECT_LT(slopeError(dSlope, ref), 2e-2) << str(dSlope) << " against " << str(ref.dSlope);
}

std::vector<RegionCase> regionCases() {
  std::vector<RegionCase> all;
  for (const RegionMod &m : kMods) {
    for (int64_t t : {7, 129})
      for (int64_t s : {5, 513})
        for (bool causal : {false, true})
          all.push_back({{3, 2, t, s, 33, 17, causal, /*scaled=*/true}, &m});
    all.push_back({{1, 1, 129, 513, 33, 17, /*causal=*/true, /*scaled=*/true}, &m});
    // A slope per head (ALiBi's): each head reads its own row of captures.
    for (bool causal : {false, true})
      all.push_back({{3, 2, 129, 513, 33, 17, causal, /*scaled=*/true}, &m, /*perHead=*/true});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Mods, FlashAttentionRegions, ::testing::ValuesIn(regionCases()),
                         [](const ::testing::TestParamInfo<RegionCase> &info) {
                           const Case &c = info.param.shape;
                           return std::string(info.param.mod->mod.name) + "_B" +
                                  std::to_string(c.B) + "_T" + std::to_string(c.T) + "_S" +
                                  std::to_string(c.S) + (c.causal ? "_causal" : "") +
                                  (info.param.perHead ? "_per_head" : "");
                         });

} // namespace
