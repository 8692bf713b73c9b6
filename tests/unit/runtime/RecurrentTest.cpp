// The recurrent kernels (runtime/cpu/recurrent.cpp) on their own: the LSTM forward against
// naive loops over strided views (padded rows, offsets: the copy paths compiled code may hit),
// both directions, also masked (packed rows), also with a projection (oneDNN's LSTMP); and
// the workspace cache: a backward reuses its
// training forward's workspace, recomputes it when the outputs buffer no longer holds that
// forward's result, and gives the same gradients either way.
#include "attn/cpu/Recurrent.h"
#include "attn/Cpu.h"
#include "attn/Random.h"
#include "attn/kernels.h"
#include "tests/support/CpuFeatures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

constexpr int64_t B = 3, T = 5, I = 4, H = 6;

// A strided view of rank N into its own buffer: rows padded by `pad`, starting at `offset`.
// Padding holds NaN so that reading it shows.
template <typename Memref, int N> struct View {
  std::vector<float> buf;
  Memref ref;
  View(std::vector<int64_t> sizes, attn::Rng &rng, int64_t pad = 0, int64_t offset = 0) {
    int64_t ld = sizes.back() + pad, n = ld;
    for (int i = 0; i < N - 1; ++i)
      n *= sizes[i];
    buf.assign(offset + n, NAN);
    ref.allocated = ref.aligned = buf.data();
    ref.offset = offset;
    int64_t stride = 1;
    for (int i = N; i-- > 0;) {
      ref.sizes[i] = sizes[i];
      ref.strides[i] = stride;
      stride *= i == N - 1 ? ld : sizes[i];
    }
    forEach([&](float &v) { v = (float)(rng.nextDouble() - 0.5); });
  }
  template <typename F> void forEach(F f) {
    int64_t s[3] = {1, 1, 1}, t[3] = {0, 0, 0};
    for (int i = 0; i < N; ++i)
      s[3 - N + i] = ref.sizes[i], t[3 - N + i] = ref.strides[i];
    for (int64_t a = 0; a < s[0]; ++a)
      for (int64_t b = 0; b < s[1]; ++b)
        for (int64_t c = 0; c < s[2]; ++c)
          f(ref.aligned[ref.offset + a * t[0] + b * t[1] + c * t[2]]);
  }
  std::vector<float> values() {
    std::vector<float> v;
    forEach([&](float &x) { v.push_back(x); });
    return v;
  }
};
using V1 = View<attn_memref1, 1>;
using V2 = View<attn_memref2, 2>;
using V3 = View<attn_memref3, 3>;

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// x rounded to the nearest bfloat16 (ties to even), as oneDNN's bf16 conversion.
float roundToBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// The LSTM over x (values in [B][T][I] order), PyTorch's gates i, f, g, o.
// With `mask` ([B][T]), each state is blended, s + m (cell - s): a step of mask 0 keeps the
// row's states and repeats its h. With `proj` ([H][P]), h = (o * tanh(c)) proj, P wide.
// With `bf16`, the bf16 layer: every factor of a product (x, h, the weights, o * tanh(c)
// before the projection) rounded to bfloat16, the sums, gates and c in f32, and each step's
// new h rounded (the primitive keeps its hidden states in bf16).
void naiveLstm(const std::vector<float> &x, const std::vector<float> &h0,
               const std::vector<float> &c0, const std::vector<float> &wi,
               const std::vector<float> &wh, const std::vector<float> &b, bool reverse,
               std::vector<float> &hs, std::vector<float> &hn, std::vector<float> &cn,
               const std::vector<float> *mask = nullptr, const std::vector<float> *proj = nullptr,
               bool bf16 = false) {
  const int64_t P = proj ? (int64_t)proj->size() / H : H;
  auto r = [&](float v) { return bf16 ? roundToBf16(v) : v; };
  std::vector<float> h = h0, c = c0;
  hs.assign(B * T * P, 0);
  for (int64_t step = 0; step < T; ++step) {
    int64_t t = reverse ? T - 1 - step : step;
    std::vector<float> cell(B * H), out(B * H), hNew(B * P), cNew(B * H);
    for (int64_t n = 0; n < B; ++n)
      for (int64_t j = 0; j < H; ++j) {
        float z[4];
        for (int g = 0; g < 4; ++g) {
          float acc = b[g * H + j];
          for (int64_t k = 0; k < I; ++k)
            acc += r(x[(n * T + t) * I + k]) * r(wi[k * 4 * H + g * H + j]);
          for (int64_t k = 0; k < P; ++k)
            acc += r(h[n * P + k]) * r(wh[k * 4 * H + g * H + j]);
          z[g] = acc;
        }
        cell[n * H + j] = sigmoid(z[1]) * c[n * H + j] + sigmoid(z[0]) * std::tanh(z[2]);
        out[n * H + j] = sigmoid(z[3]) * std::tanh(cell[n * H + j]);
      }
    for (int64_t n = 0; n < B; ++n) {
      float m = mask ? (*mask)[n * T + t] : 1.0f; // s + m (cell - s)
      for (int64_t j = 0; j < H; ++j)
        cNew[n * H + j] = c[n * H + j] + m * (cell[n * H + j] - c[n * H + j]);
      for (int64_t j = 0; j < P; ++j) {
        float next = out[n * H + j];
        if (proj) {
          next = 0;
          for (int64_t k = 0; k < H; ++k)
            next += r(out[n * H + k]) * r((*proj)[k * P + j]);
        }
        next = r(next);
        hNew[n * P + j] = h[n * P + j] + m * (next - h[n * P + j]);
        hs[(n * T + t) * P + j] = hNew[n * P + j];
      }
    }
    h = hNew, c = cNew;
  }
  hn = h, cn = c;
}

double maxDiff(const std::vector<float> &a, const std::vector<float> &b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d = std::max(d, (double)std::fabs(a[i] - b[i]));
  return a.size() == b.size() ? d : INFINITY;
}

class LstmKernel : public ::testing::TestWithParam<bool> {};

TEST_P(LstmKernel, ForwardMatchesNaiveLoopsOnStridedViews) {
  bool reverse = GetParam();
  attn::Rng rng(3);
  V3 x({B, T, I}, rng, 3, 5), hs({B, T, H}, rng, 2, 1);
  V2 h0({B, H}, rng, 1, 2), c0({B, H}, rng, 2, 0), wi({I, 4 * H}, rng, 3, 1),
      wh({H, 4 * H}, rng, 0, 4), hn({B, H}, rng, 1, 0), cn({B, H}, rng, 0, 3);
  V1 b({4 * H}, rng, 0, 2);
  _mlir_ciface_attn_rt_rnn_forward(&x.ref, &h0.ref, &c0.ref, &wi.ref, &wh.ref, &b.ref, &b.ref,
                                   &wh.ref, &wh.ref, &x.ref, &hs.ref, &hn.ref, &cn.ref,
                                   ATTN_RNN_LSTM, reverse, /*training=*/0, /*peephole=*/0,
                                   /*projection=*/0, /*masked=*/0);
  std::vector<float> eHs, eHn, eCn;
  naiveLstm(x.values(), h0.values(), c0.values(), wi.values(), wh.values(), b.values(), reverse,
            eHs, eHn, eCn);
  EXPECT_LT(maxDiff(hs.values(), eHs), 1e-5);
  EXPECT_LT(maxDiff(hn.values(), eHn), 1e-5);
  EXPECT_LT(maxDiff(cn.values(), eCn), 1e-5);
  // Padding untouched (still NaN).
  EXPECT_TRUE(std::isnan(hs.buf[0]));
}

// The masked LSTM kernel on mask[n][t] = maskAt(n, t), against the naive loop that blends
// its states under the same mask (x on a strided view). With P > 0, a projection [H, P]
// (on a strided view). With `bf16`, the _bf16 kernel against the loop rounding as its
// primitive does: within a few bf16 roundings (a sum that lands on the other side of a
// rounding boundary than the loop's moves an h by 2^-8 relative), and not the f32 layer.
template <typename MaskAt>
void expectMaskedMatchesNaive(bool reverse, uint64_t seed, MaskAt maskAt, int64_t P = 0,
                              bool bf16 = false) {
  attn::Rng rng(seed);
  const int64_t S = P ? P : H; // the hidden state's width
  V3 x({B, T, I}, rng, 1, 2), hs({B, T, S}, rng), m({B, T, 1}, rng);
  V2 h0({B, S}, rng), c0({B, H}, rng), wi({I, 4 * H}, rng), wh({S, 4 * H}, rng), hn({B, S}, rng),
      cn({B, H}, rng), wp({H, S}, rng, 2, 1);
  V1 b({4 * H}, rng);
  std::vector<float> mask;
  for (int64_t n = 0; n < B; ++n)
    for (int64_t t = 0; t < T; ++t)
      mask.push_back(m.buf[n * T + t] = maskAt(n, t));
  (bf16 ? _mlir_ciface_attn_rt_rnn_forward_bf16 : _mlir_ciface_attn_rt_rnn_forward)(
      &x.ref, &h0.ref, &c0.ref, &wi.ref, &wh.ref, &b.ref, &b.ref, &wh.ref, &wp.ref, &m.ref, &hs.ref,
      &hn.ref, &cn.ref, ATTN_RNN_LSTM, reverse, /*training=*/0, /*peephole=*/0,
      /*projection=*/P > 0, /*masked=*/1);
  std::vector<float> eHs, eHn, eCn, proj = wp.values();
  naiveLstm(x.values(), h0.values(), c0.values(), wi.values(), wh.values(), b.values(), reverse,
            eHs, eHn, eCn, &mask, P ? &proj : nullptr, bf16);
  const double tol = bf16 ? 4e-3 : 1e-5;
  EXPECT_LT(maxDiff(hs.values(), eHs), tol);
  EXPECT_LT(maxDiff(hn.values(), eHn), tol);
  EXPECT_LT(maxDiff(cn.values(), eCn), tol);
  if (bf16) { // it did round
    std::vector<float> fHs, fHn, fCn;
    naiveLstm(x.values(), h0.values(), c0.values(), wi.values(), wh.values(), b.values(), reverse,
              fHs, fHn, fCn, &mask, P ? &proj : nullptr);
    EXPECT_GT(maxDiff(hs.values(), fHs), 1e-4);
  }
}

// The masked layer (packed rows, segments that shrink as rows end) against the naive loop
// holding states at mask 0: a full row, a row with gaps, a row with no step.
TEST_P(LstmKernel, MaskedForwardMatchesNaiveLoops) {
  const float rows[B][T] = {{1, 1, 1, 1, 1}, {1, 0, 1, 1, 0}, {0, 0, 0, 0, 0}};
  expectMaskedMatchesNaive(GetParam(), 5, [&](int64_t n, int64_t t) { return rows[n][t]; });
}

// A mask with other values than 0 and 1 has no packed form: the kernel runs step by step and
// blends the states, s + m (cell - s), as the unfused scan does.
TEST_P(LstmKernel, FractionalMaskBlendsLikeTheScan) {
  expectMaskedMatchesNaive(GetParam(), 6, // 0, 0.25, ..., 1
                           [](int64_t n, int64_t t) { return (float)((n * T + t) % 5) / 4; });
}

// oneDNN's LSTMP: the hidden state (h0, h_n, outputs, w_hh's rows) is P wide, the cell state
// H wide. Unmasked (a mask of ones runs one segment), packed, and blended.
TEST_P(LstmKernel, ProjectedLayerMatchesNaiveLoops) {
  const float rows[B][T] = {{1, 1, 1, 1, 1}, {1, 0, 1, 1, 0}, {0, 0, 0, 0, 0}};
  for (int64_t P : {2, 9}) {
    SCOPED_TRACE("P=" + std::to_string(P));
    expectMaskedMatchesNaive(GetParam(), 7, [](int64_t, int64_t) { return 1.0f; }, P);
    expectMaskedMatchesNaive(GetParam(), 8, [&](int64_t n, int64_t t) { return rows[n][t]; }, P);
    expectMaskedMatchesNaive(
        GetParam(), 9, [](int64_t n, int64_t t) { return (float)((n * T + t) % 5) / 4; }, P);
  }
}

// The bf16 layer (attn-precision's bf16 policy): unmasked (a mask of ones), packed and
// blended, against the loop that rounds where oneDNN's bf16 primitive does. (Not projected:
// oneDNN 2.6's bf16 LSTMP is 0.2 away from this loop and from the f32 layer, so attn.lstm
// with a projection has no bf16 form.)
TEST_P(LstmKernel, Bf16LayerMatchesTheBf16RoundingLoops) {
  ATTN_SKIP_WITHOUT_BF16();
  const float rows[B][T] = {{1, 1, 1, 1, 1}, {1, 0, 1, 1, 0}, {0, 0, 0, 0, 0}};
  auto ones = [](int64_t, int64_t) { return 1.0f; };
  auto packed = [&](int64_t n, int64_t t) { return rows[n][t]; };
  auto blended = [](int64_t n, int64_t t) { return (float)((n * T + t) % 5) / 4; };
  expectMaskedMatchesNaive(GetParam(), 11, ones, 0, /*bf16=*/true);
  expectMaskedMatchesNaive(GetParam(), 12, packed, 0, /*bf16=*/true);
  expectMaskedMatchesNaive(GetParam(), 13, blended, 0, /*bf16=*/true);
}

INSTANTIATE_TEST_SUITE_P(Directions, LstmKernel, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "reverse" : "forward"; });

// A training forward, then its backward. With `clobber`, a second training forward (another
// h0) writes the same outputs buffer in between, and the first forward's outputs are copied
// back: the cache's entry for the buffer is now the second forward's, whose hash does not match
// the contents, so the backward must recompute the first forward's workspace.
struct Grads {
  std::vector<float> dx, dh0, dc0, dwi, dwh, db;
};

Grads trainStep(bool clobberWithOtherContents, bool bf16 = false) {
  auto forward = bf16 ? _mlir_ciface_attn_rt_rnn_forward_bf16 : _mlir_ciface_attn_rt_rnn_forward;
  auto backward = bf16 ? _mlir_ciface_attn_rt_rnn_backward_bf16 : _mlir_ciface_attn_rt_rnn_backward;
  attn::Rng rng(9);
  V3 x({B, T, I}, rng), hs({B, T, H}, rng), dhs({B, T, H}, rng), dx({B, T, I}, rng);
  V2 h0({B, H}, rng), c0({B, H}, rng), wi({I, 4 * H}, rng), wh({H, 4 * H}, rng), hn({B, H}, rng),
      cn({B, H}, rng), dhn({B, H}, rng), dcn({B, H}, rng), dh0({B, H}, rng), dc0({B, H}, rng),
      dwi({I, 4 * H}, rng), dwh({H, 4 * H}, rng);
  V1 b({4 * H}, rng), db({4 * H}, rng);
  forward(&x.ref, &h0.ref, &c0.ref, &wi.ref, &wh.ref, &b.ref, &b.ref, &wh.ref, &wh.ref, &x.ref,
          &hs.ref, &hn.ref, &cn.ref, ATTN_RNN_LSTM, 0, 1, 0, 0, 0);
  if (clobberWithOtherContents) {
    std::vector<float> saved = hs.buf;
    V2 h0b({B, H}, rng);
    forward(&x.ref, &h0b.ref, &c0.ref, &wi.ref, &wh.ref, &b.ref, &b.ref, &wh.ref, &wh.ref, &x.ref,
            &hs.ref, &hn.ref, &cn.ref, ATTN_RNN_LSTM, 0, 1, 0, 0, 0);
    std::copy(saved.begin(), saved.end(), hs.buf.begin()); // same address, first contents
  }
  backward(&x.ref, &h0.ref, &c0.ref, &wi.ref, &wh.ref, &b.ref, &b.ref, &wh.ref, &wh.ref, &x.ref,
           &hs.ref, &hn.ref, &cn.ref, &dhs.ref, &dhn.ref, &dcn.ref, &dx.ref, &dh0.ref, &dc0.ref,
           &dwi.ref, &dwh.ref, &db.ref, &db.ref, &dwh.ref, &dwh.ref, ATTN_RNN_LSTM, 0, 0, 0, 0);
  return {dx.values(), dh0.values(), dc0.values(), dwi.values(), dwh.values(), db.values()};
}

TEST(RecurrentWorkspace, ReusedWhenValidRecomputedWhenStale) {
  size_t hits = attn::cpu::recurrentWorkspaceHits();
  size_t misses = attn::cpu::recurrentWorkspaceMisses();
  Grads reused = trainStep(false);
  EXPECT_EQ(attn::cpu::recurrentWorkspaceHits(), hits + 1);
  EXPECT_EQ(attn::cpu::recurrentWorkspaceMisses(), misses);
  // The second forward (other h0) replaced the entry for the buffer; its hash no longer
  // matches the restored contents, so the backward recomputes the first forward.
  Grads recomputed = trainStep(true);
  EXPECT_EQ(attn::cpu::recurrentWorkspaceMisses(), misses + 1);
  EXPECT_LT(maxDiff(reused.dx, recomputed.dx), 1e-6);
  EXPECT_LT(maxDiff(reused.dh0, recomputed.dh0), 1e-6);
  EXPECT_LT(maxDiff(reused.dc0, recomputed.dc0), 1e-6);
  EXPECT_LT(maxDiff(reused.dwi, recomputed.dwi), 1e-6);
  EXPECT_LT(maxDiff(reused.dwh, recomputed.dwh), 1e-6);
  EXPECT_LT(maxDiff(reused.db, recomputed.db), 1e-6);
}

// The bf16 backward (f32 gradients from bf16 factors) against the f32 one: within bf16's
// error, not equal; from its workspace and recomputed alike.
TEST(RecurrentWorkspace, Bf16BackwardIsTheF32OneWithinBf16sError) {
  ATTN_SKIP_WITHOUT_BF16();
  Grads f32 = trainStep(false), bf16 = trainStep(false, true), recomputed = trainStep(true, true);
  for (auto member : {&Grads::dx, &Grads::dh0, &Grads::dc0, &Grads::dwi, &Grads::dwh, &Grads::db}) {
    EXPECT_LT(maxDiff(bf16.*member, f32.*member), 2e-2);
    EXPECT_LT(maxDiff(recomputed.*member, bf16.*member), 1e-6);
  }
  EXPECT_GT(maxDiff(bf16.dwh, f32.dwh), 1e-5); // it did round
}

} // namespace
