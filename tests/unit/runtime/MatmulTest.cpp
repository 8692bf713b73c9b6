// The oneDNN kernels against naive loops, over the memref views compiled code may pass.
#include "attn/Random.h"
#include "attn/cpu/Matmul.h"
#include "attn/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

// A rank-3 strided view into a buffer owned by the test.
struct View3 {
  std::vector<float> buf;
  attn_memref3 ref;
  // Element (i, j, k) of the view.
  float &at(int64_t i, int64_t j, int64_t k) {
    return ref.aligned[ref.offset + i * ref.strides[0] + j * ref.strides[1] + k * ref.strides[2]];
  }
};

// A dense view of [d0, d1, d2] whose rows are `rowPad` elements longer than needed and which
// starts `offset` elements into its buffer: exercises strides and offset. Filled with random
// values; padding holds NaN so that reading it shows up in the result.
View3 makeView(int64_t d0, int64_t d1, int64_t d2, attn::Rng &rng, int64_t rowPad = 0,
               int64_t offset = 0) {
  View3 v;
  int64_t ld = d2 + rowPad;
  v.buf.assign(offset + d0 * d1 * ld, NAN);
  v.ref.allocated = v.ref.aligned = v.buf.data();
  v.ref.offset = offset;
  v.ref.sizes[0] = d0, v.ref.sizes[1] = d1, v.ref.sizes[2] = d2;
  v.ref.strides[0] = d1 * ld, v.ref.strides[1] = ld, v.ref.strides[2] = 1;
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j)
      for (int64_t k = 0; k < d2; ++k)
        v.at(i, j, k) = static_cast<float>(2 * rng.nextDouble() - 1);
  return v;
}

struct Case {
  int64_t batchA, batchB, batch, M, K, N;
  bool transA, transB;
  int64_t rowPad = 0, offset = 0;
  bool bf16 = false; // the _bf16 kernel, against loops over the factors rounded to bfloat16
};

// x rounded to the nearest bfloat16 (ties to even), as a float: the top 16 bits of its pattern
// after adding half of the dropped part's unit (less one, plus the kept part's lowest bit).
float roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// Runs the kernel on random inputs and returns the max abs error against a triple loop.
double runCase(const Case &cs) {
  attn::Rng rng(42);
  View3 a = cs.transA ? makeView(cs.batchA, cs.K, cs.M, rng, cs.rowPad, cs.offset)
                      : makeView(cs.batchA, cs.M, cs.K, rng, cs.rowPad, cs.offset);
  View3 b = cs.transB ? makeView(cs.batchB, cs.N, cs.K, rng, cs.rowPad, cs.offset)
                      : makeView(cs.batchB, cs.K, cs.N, rng, cs.rowPad, cs.offset);
  View3 c = makeView(cs.batch, cs.M, cs.N, rng, cs.rowPad, cs.offset);
  (cs.bf16 ? _mlir_ciface_attn_rt_matmul_bf16
           : _mlir_ciface_attn_rt_matmul)(&a.ref, &b.ref, &c.ref, cs.transA, cs.transB);
  auto factor = [&](float v) { return cs.bf16 ? roundToBf16(v) : v; };

  double maxErr = 0;
  for (int64_t i = 0; i < cs.batch; ++i) {
    int64_t ia = cs.batchA == 1 ? 0 : i, ib = cs.batchB == 1 ? 0 : i;
    for (int64_t m = 0; m < cs.M; ++m)
      for (int64_t n = 0; n < cs.N; ++n) {
        double want = 0;
        for (int64_t k = 0; k < cs.K; ++k) {
          float x = cs.transA ? a.at(ia, k, m) : a.at(ia, m, k);
          float y = cs.transB ? b.at(ib, n, k) : b.at(ib, k, n);
          want += double(factor(x)) * double(factor(y));
        }
        double err = std::fabs(want - c.at(i, m, n));
        maxErr = std::isnan(err) ? INFINITY : std::max(maxErr, err);
      }
  }
  // The kernel must not write the padding of c.
  for (int64_t p = 0; p < cs.offset; ++p)
    EXPECT_TRUE(std::isnan(c.buf[p])) << "wrote before the view at " << p;
  return maxErr;
}

constexpr double kTol = 1e-4;

TEST(Matmul, Plain) { EXPECT_LT(runCase({1, 1, 1, 7, 13, 5, false, false}), kTol); }
TEST(Matmul, TransA) { EXPECT_LT(runCase({1, 1, 1, 7, 13, 5, true, false}), kTol); }
TEST(Matmul, TransB) { EXPECT_LT(runCase({1, 1, 1, 7, 13, 5, false, true}), kTol); }
TEST(Matmul, TransBoth) { EXPECT_LT(runCase({1, 1, 1, 7, 13, 5, true, true}), kTol); }
TEST(Matmul, Batch3) { EXPECT_LT(runCase({3, 3, 3, 7, 13, 5, false, false}), kTol); }
TEST(Matmul, Batch3TransBoth) { EXPECT_LT(runCase({3, 3, 3, 7, 13, 5, true, true}), kTol); }
TEST(Matmul, BroadcastA) { EXPECT_LT(runCase({1, 3, 3, 7, 13, 5, false, false}), kTol); }
TEST(Matmul, BroadcastB) { EXPECT_LT(runCase({3, 1, 3, 7, 13, 5, false, true}), kTol); }
TEST(Matmul, StridedView) {
  EXPECT_LT(runCase({1, 1, 1, 7, 13, 5, false, false, /*rowPad=*/3, /*offset=*/11}), kTol);
}
TEST(Matmul, StridedViewBatchTrans) {
  EXPECT_LT(runCase({3, 1, 3, 7, 13, 5, true, true, /*rowPad=*/2, /*offset=*/5}), kTol);
}
TEST(Matmul, Vector) { EXPECT_LT(runCase({1, 1, 1, 1, 9, 1, false, false}), kTol); }

// The bf16 products: the same views, the factors rounded to bfloat16 and the sums in f32. Not
// rounding would miss by about 1e-2 here (bfloat16 keeps 8 bits), far above kTol.
Case bf16(Case cs) {
  cs.bf16 = true;
  return cs;
}
TEST(MatmulBf16, Plain) { EXPECT_LT(runCase(bf16({1, 1, 1, 7, 13, 5, false, false})), kTol); }
TEST(MatmulBf16, TransBoth) { EXPECT_LT(runCase(bf16({1, 1, 1, 7, 13, 5, true, true})), kTol); }
TEST(MatmulBf16, BroadcastB) { EXPECT_LT(runCase(bf16({3, 1, 3, 7, 13, 5, false, true})), kTol); }
TEST(MatmulBf16, StridedViewBatchTrans) {
  EXPECT_LT(runCase(bf16({3, 1, 3, 7, 13, 5, true, true, /*rowPad=*/2, /*offset=*/5})), kTol);
}
TEST(MatmulBf16, Large) { EXPECT_LT(runCase(bf16({2, 2, 2, 64, 256, 96, false, true})), 1e-3); }
TEST(MatmulBf16, RoundsItsFactors) {
  // The reference itself: rounding is what tells the two kernels apart.
  EXPECT_EQ(roundToBf16(1.0f + 1.0f / 256), 1.0f);             // a tie, to even
  EXPECT_EQ(roundToBf16(1.0f + 3.0f / 256), 1.0f + 4.0f / 256); // a tie, to even (up)
  EXPECT_EQ(roundToBf16(1.0f + 1.5f / 256), 1.0f + 2.0f / 256);
  Case cs{1, 1, 1, 7, 13, 5, false, false};
  attn::Rng rng(42);
  View3 a = makeView(1, 7, 13, rng), b = makeView(1, 13, 5, rng), c = makeView(1, 7, 5, rng);
  View3 c32 = c;
  c32.ref.aligned = c32.ref.allocated = c32.buf.data();
  _mlir_ciface_attn_rt_matmul_bf16(&a.ref, &b.ref, &c.ref, 0, 0);
  _mlir_ciface_attn_rt_matmul(&a.ref, &b.ref, &c32.ref, 0, 0);
  double apart = 0;
  for (int64_t m = 0; m < cs.M; ++m)
    for (int64_t n = 0; n < cs.N; ++n)
      apart = std::max(apart, double(std::fabs(c.at(0, m, n) - c32.at(0, m, n))));
  EXPECT_GT(apart, 1e-3);
}

// A column of a row-major matrix as an [K, 1] operand: stride along K is the row length.
TEST(Matmul, ColumnView) {
  attn::Rng rng(7);
  View3 a = makeView(1, 4, 6, rng);
  View3 w = makeView(1, 6, 9, rng);
  View3 b = w; // take column 2 of w as b: [1, 6, 1]
  b.ref.aligned = b.ref.allocated = b.buf.data();
  b.ref.offset = 2;
  b.ref.sizes[2] = 1;
  View3 c = makeView(1, 4, 1, rng);
  _mlir_ciface_attn_rt_matmul(&a.ref, &b.ref, &c.ref, 0, 0);
  for (int64_t m = 0; m < 4; ++m) {
    double want = 0;
    for (int64_t k = 0; k < 6; ++k)
      want += double(a.at(0, m, k)) * b.at(0, k, 0);
    EXPECT_NEAR(c.at(0, m, 0), want, kTol);
  }
}

TEST(Matmul, CachesPrimitives) {
  attn::cpu::clearPrimitiveCache();
  Case cs{1, 1, 1, 3, 4, 5, false, false};
  runCase(cs);
  EXPECT_EQ(attn::cpu::cachedPrimitiveCount(), 1u);
  runCase(cs);
  EXPECT_EQ(attn::cpu::cachedPrimitiveCount(), 1u);
  cs.transB = true;
  runCase(cs);
  EXPECT_EQ(attn::cpu::cachedPrimitiveCount(), 2u);
}

// Compiled programs may run on several threads at once; the cache and streams must cope.
TEST(Matmul, ConcurrentCalls) {
  attn::cpu::clearPrimitiveCache();
  std::vector<double> errs(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&errs, t] {
      for (int rep = 0; rep < 5; ++rep)
        errs[t] = std::max(errs[t], runCase({2, 1, 2, 5 + t % 2, 9, 3, t % 2 == 0, false}));
    });
  for (std::thread &th : threads)
    th.join();
  for (double e : errs)
    EXPECT_LT(e, kTol);
  EXPECT_EQ(attn::cpu::cachedPrimitiveCount(), 2u);
}

void denseAgainstLoops(bool bf16) {
  attn::Rng rng(3);
  const int64_t M = 7, K = 13, N = 5;
  View3 x = makeView(1, M, K, rng, /*rowPad=*/2, /*offset=*/3);
  View3 w = makeView(1, K, N, rng);
  View3 y = makeView(1, M, N, rng, /*rowPad=*/1);
  std::vector<float> bias(2 * N);
  for (float &v : bias)
    v = static_cast<float>(rng.nextDouble());

  auto to2 = [](const attn_memref3 &m) {
    attn_memref2 r{m.allocated, m.aligned, m.offset, {m.sizes[1], m.sizes[2]},
                   {m.strides[1], m.strides[2]}};
    return r;
  };
  attn_memref2 x2 = to2(x.ref), w2 = to2(w.ref), y2 = to2(y.ref);
  // Bias as every other element of `bias`: a strided 1-d view.
  attn_memref1 b1{bias.data(), bias.data(), 1, {N}, {2}};
  (bf16 ? _mlir_ciface_attn_rt_dense_bf16 : _mlir_ciface_attn_rt_dense)(&x2, &w2, &b1, &y2);
  auto factor = [&](float v) { return bf16 ? roundToBf16(v) : v; };

  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double want = bias[1 + 2 * n]; // added in f32, not rounded
      for (int64_t k = 0; k < K; ++k)
        want += double(factor(x.at(0, m, k))) * factor(w.at(0, k, n));
      EXPECT_NEAR(y.at(0, m, n), want, kTol) << "at " << m << ", " << n;
    }
}

TEST(Dense, MatchesLoops) { denseAgainstLoops(false); }
TEST(DenseBf16, MatchesLoopsOverRoundedFactors) { denseAgainstLoops(true); }

} // namespace
