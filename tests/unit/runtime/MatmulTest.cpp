// The oneDNN kernels against naive loops, over the memref views compiled code may pass.
#include "attn/cpu/Matmul.h"
#include "attn/Alloc.h"
#include "attn/Cpu.h"
#include "attn/Random.h"
#include "attn/kernels.h"
#include "tests/support/CpuFeatures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

// A rank-3 strided view into a buffer owned by the test (the runtime's buffers, as compiled
// programs' are: the int8 kernels keep a weight's copy until its buffer is freed).
struct View3 {
  std::vector<float, attn::BufferAllocator<float>> buf;
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

// The bf16 factor the _bf16 kernels take for the f32 view `v`: the same sizes, strides and
// offset over its whole buffer rounded (padding included: NaN stays NaN, so reading it shows).
struct Bf16View3 {
  std::vector<uint16_t, attn::BufferAllocator<uint16_t>> buf;
  attn_memref_bf16_3 ref;
};
Bf16View3 bf16Of(const View3 &v) {
  Bf16View3 r;
  r.buf.resize(v.buf.size());
  attn::cpu::roundToBf16(v.buf.data(), r.buf.data(), v.buf.size());
  r.ref.allocated = r.ref.aligned = r.buf.data();
  r.ref.offset = v.ref.offset;
  std::copy(v.ref.sizes, v.ref.sizes + 3, r.ref.sizes);
  std::copy(v.ref.strides, v.ref.strides + 3, r.ref.strides);
  return r;
}

// Runs the kernel on random inputs and returns the max abs error against a triple loop.
double runCase(const Case &cs) {
  attn::Rng rng(42);
  View3 a = cs.transA ? makeView(cs.batchA, cs.K, cs.M, rng, cs.rowPad, cs.offset)
                      : makeView(cs.batchA, cs.M, cs.K, rng, cs.rowPad, cs.offset);
  View3 b = cs.transB ? makeView(cs.batchB, cs.N, cs.K, rng, cs.rowPad, cs.offset)
                      : makeView(cs.batchB, cs.K, cs.N, rng, cs.rowPad, cs.offset);
  View3 c = makeView(cs.batch, cs.M, cs.N, rng, cs.rowPad, cs.offset);
  if (cs.bf16) {
    Bf16View3 a16 = bf16Of(a), b16 = bf16Of(b);
    _mlir_ciface_attn_rt_matmul_bf16(&a16.ref, &b16.ref, &c.ref, cs.transA, cs.transB);
  } else {
    _mlir_ciface_attn_rt_matmul(&a.ref, &b.ref, &c.ref, cs.transA, cs.transB);
  }
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

// The bf16 products: the same views of the factors rounded to bfloat16 (bf16Of), the sums in
// f32, against loops over the same rounded values. Loops over the unrounded values would be
// about 1e-2 away (bfloat16 keeps 8 bits), far above kTol.
Case bf16(Case cs) {
  cs.bf16 = true;
  return cs;
}
TEST(MatmulBf16, Plain) {
  ATTN_SKIP_WITHOUT_BF16();
  EXPECT_LT(runCase(bf16({1, 1, 1, 7, 13, 5, false, false})), kTol); }
TEST(MatmulBf16, TransBoth) {
  ATTN_SKIP_WITHOUT_BF16();
  EXPECT_LT(runCase(bf16({1, 1, 1, 7, 13, 5, true, true})), kTol); }
TEST(MatmulBf16, BroadcastB) {
  ATTN_SKIP_WITHOUT_BF16();
  EXPECT_LT(runCase(bf16({3, 1, 3, 7, 13, 5, false, true})), kTol); }
TEST(MatmulBf16, StridedViewBatchTrans) {
  ATTN_SKIP_WITHOUT_BF16();
  EXPECT_LT(runCase(bf16({3, 1, 3, 7, 13, 5, true, true, /*rowPad=*/2, /*offset=*/5})), kTol);
}
TEST(MatmulBf16, Large) {
  ATTN_SKIP_WITHOUT_BF16();
  EXPECT_LT(runCase(bf16({2, 2, 2, 64, 256, 96, false, true})), 1e-3); }
TEST(MatmulBf16, RoundingForHostCode) {
  // The reference itself: rounding is what tells a bf16 product from an f32 one.
  EXPECT_EQ(roundToBf16(1.0f + 1.0f / 256), 1.0f);             // a tie, to even
  EXPECT_EQ(roundToBf16(1.0f + 3.0f / 256), 1.0f + 4.0f / 256); // a tie, to even (up)
  EXPECT_EQ(roundToBf16(1.0f + 1.5f / 256), 1.0f + 2.0f / 256);
  // attn::cpu::roundToBf16 (what host code rounds the factors with) gives its bits, over a
  // length that is no multiple of the vector width, and keeps a NaN a NaN (adding the
  // rounding bias to a NaN's bits can carry it into infinity).
  attn::Rng rng(7);
  std::vector<float> x(37);
  for (float &v : x)
    v = static_cast<float>(1000 * (2 * rng.nextDouble() - 1));
  x[5] = NAN;
  uint32_t nanBits = 0x7f80ffffu; // a NaN whose payload sits in the dropped half
  std::memcpy(&x[6], &nanBits, sizeof nanBits);
  std::vector<uint16_t> bits(x.size());
  attn::cpu::roundToBf16(x.data(), bits.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t wide = uint32_t(bits[i]) << 16;
    float back;
    std::memcpy(&back, &wide, sizeof back);
    if (std::isnan(x[i]))
      EXPECT_TRUE(std::isnan(back)) << "at " << i;
    else
      EXPECT_EQ(back, roundToBf16(x[i])) << "at " << i;
  }
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
  if (bf16) {
    Bf16View3 x16 = bf16Of(x), w16 = bf16Of(w);
    auto to2bf16 = [](const attn_memref_bf16_3 &m) {
      attn_memref_bf16_2 r{
          m.allocated, m.aligned, m.offset, {m.sizes[1], m.sizes[2]}, {m.strides[1], m.strides[2]}};
      return r;
    };
    attn_memref_bf16_2 xb = to2bf16(x16.ref), wb = to2bf16(w16.ref);
    _mlir_ciface_attn_rt_dense_bf16(&xb, &wb, &b1, &y2);
  } else {
    _mlir_ciface_attn_rt_dense(&x2, &w2, &b1, &y2);
  }
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
TEST(DenseBf16, MatchesLoopsOverRoundedFactors) {
  ATTN_SKIP_WITHOUT_BF16();
  denseAgainstLoops(true);
}

//===- int8 ----------------------------------------------------------------------------===//


// v quantised as the int8 kernels do: to nearest, ties away from zero, on the scale amax / 127.
int quantise(float v, float scale) {
  float q = v * (1.0f / scale);
  return static_cast<int>(q + (q < 0 ? -0.5f : 0.5f));
}
float scaleOf(float amax) { return amax > 0 ? amax / 127.0f : 1.0f; }

// The int8 product's reference: x [M, K] quantised per row, w [K, N] per column, the integer
// sums exact, scaled back in double, plus bias[n]. `f32` gets the unquantised product.
void int8Reference(int64_t M, int64_t K, int64_t N, const std::function<float(int64_t, int64_t)> &x,
                   const std::function<float(int64_t, int64_t)> &w,
                   const std::function<float(int64_t)> &bias, std::vector<double> &want,
                   std::vector<double> &f32) {
  std::vector<float> sx(M), sw(N);
  for (int64_t m = 0; m < M; ++m) {
    float amax = 0;
    for (int64_t k = 0; k < K; ++k)
      amax = std::max(amax, std::fabs(x(m, k)));
    sx[m] = scaleOf(amax);
  }
  for (int64_t n = 0; n < N; ++n) {
    float amax = 0;
    for (int64_t k = 0; k < K; ++k)
      amax = std::max(amax, std::fabs(w(k, n)));
    sw[n] = scaleOf(amax);
  }
  want.assign(M * N, 0);
  f32.assign(M * N, 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t sum = 0;
      double exact = 0;
      for (int64_t k = 0; k < K; ++k) {
        sum += quantise(x(m, k), sx[m]) * quantise(w(k, n), sw[n]);
        exact += double(x(m, k)) * w(k, n);
      }
      want[m * N + n] = double(sx[m]) * sw[n] * double(sum) + bias(n);
      f32[m * N + n] = exact + bias(n);
    }
}

// The kernel's result equals the reference over the quantised factors to f32 rounding, and is
// not the f32 product (quantisation moved it).
void expectInt8(const std::vector<double> &want, const std::vector<double> &f32,
                const std::function<float(int64_t)> &got) {
  double differs = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got(i), want[i], 1e-5 * (1 + std::fabs(want[i]))) << "at " << i;
    differs = std::max(differs, std::fabs(got(i) - f32[i]));
  }
  EXPECT_GT(differs, 1e-4);
}

TEST(DenseInt8, MatchesLoopsOverQuantisedFactors) {
  ATTN_SKIP_WITHOUT_VNNI();
  attn::Rng rng(3);
  for (int64_t M : {1, 7}) {
    const int64_t K = 13, N = 5;
    View3 x = makeView(1, M, K, rng, /*rowPad=*/2, /*offset=*/3);
    View3 w = makeView(1, K, N, rng);
    View3 y = makeView(1, M, N, rng, /*rowPad=*/1);
    std::vector<float, attn::BufferAllocator<float>> bias(2 * N);
    for (float &v : bias)
      v = static_cast<float>(rng.nextDouble());
    auto to2 = [](const attn_memref3 &m) {
      return attn_memref2{
          m.allocated, m.aligned, m.offset, {m.sizes[1], m.sizes[2]}, {m.strides[1], m.strides[2]}};
    };
    attn_memref2 x2 = to2(x.ref), w2 = to2(w.ref), y2 = to2(y.ref);
    attn_memref1 b1{bias.data(), bias.data(), 1, {N}, {2}}; // every other element: strided
    _mlir_ciface_attn_rt_dense_int8(&x2, &w2, &b1, &y2);
    std::vector<double> want, f32;
    int8Reference(
        M, K, N, [&](int64_t m, int64_t k) { return x.at(0, m, k); },
        [&](int64_t k, int64_t n) { return w.at(0, k, n); },
        [&](int64_t n) { return bias[1 + 2 * n]; }, want, f32);
    expectInt8(want, f32, [&](int64_t i) { return y.at(0, i / N, i % N); });
  }
}

// The tied output layer's form: a batch of [M, K] rows against one [N, K] weight, transposed;
// with M = 1 (a decoding step), contiguous batches (one product), and padded rows (one each).
TEST(MatmulInt8, MatchesLoopsOverQuantisedFactors) {
  ATTN_SKIP_WITHOUT_VNNI();
  attn::Rng rng(5);
  struct Shape {
    int64_t B, M, rowPad;
  };
  for (Shape sh : {Shape{6, 1, 0}, Shape{3, 4, 0}, Shape{3, 4, 2}}) {
    const int64_t K = 19, N = 11;
    View3 a = makeView(sh.B, sh.M, K, rng, sh.rowPad);
    View3 b = makeView(1, N, K, rng);
    View3 c = makeView(sh.B, sh.M, N, rng, sh.rowPad);
    _mlir_ciface_attn_rt_matmul_int8(&a.ref, &b.ref, &c.ref, 0, 1);
    for (int64_t i = 0; i < sh.B; ++i) {
      std::vector<double> want, f32;
      int8Reference(
          sh.M, K, N, [&](int64_t m, int64_t k) { return a.at(i, m, k); },
          [&](int64_t k, int64_t n) { return b.at(0, n, k); }, [](int64_t) { return 0.0f; }, want,
          f32);
      SCOPED_TRACE("batch " + std::to_string(i) + " of B" + std::to_string(sh.B) + " M" +
                   std::to_string(sh.M) + " pad " + std::to_string(sh.rowPad));
      expectInt8(want, f32, [&](int64_t j) { return c.at(i, j / N, j % N); });
    }
  }
}

// The kernel keeps a weight's int8 copy, by address, until the buffer is freed: a new weight
// in the same (recycled) block is quantised again, not read from the old copy.
TEST(DenseInt8, QuantisesAgainAWeightInARecycledBuffer) {
  ATTN_SKIP_WITHOUT_VNNI();
  const int64_t M = 3, K = 128, N = 128; // 64 KiB: a recycled size class, not malloc's
  attn::Rng rng(9);
  std::vector<float, attn::BufferAllocator<float>> x(M * K), y(M * N), bias(N, 0.0f);
  for (float &v : x)
    v = static_cast<float>(2 * rng.nextDouble() - 1);
  // Runs the kernel with w filled from `value` and checks y against the int8 reference.
  auto check = [&](float *w, float value) {
    for (int64_t i = 0; i < K * N; ++i)
      w[i] = value * static_cast<float>(1 + (i % 7));
    attn_memref2 x2{x.data(), x.data(), 0, {M, K}, {K, 1}}, w2{w, w, 0, {K, N}, {N, 1}},
        y2{y.data(), y.data(), 0, {M, N}, {N, 1}};
    attn_memref1 b1{bias.data(), bias.data(), 0, {N}, {1}};
    _mlir_ciface_attn_rt_dense_int8(&x2, &w2, &b1, &y2);
    std::vector<double> want, f32;
    int8Reference(
        M, K, N, [&](int64_t m, int64_t k) { return x[m * K + k]; },
        [&](int64_t k, int64_t n) { return w[k * N + n]; }, [](int64_t) { return 0.0f; }, want,
        f32);
    expectInt8(want, f32, [&](int64_t i) { return y[i]; });
  };
  float *w = static_cast<float *>(attn::bufferAlloc(K * N * sizeof(float)));
  check(w, 1.0f);
  attn::bufferFree(w);
  float *again = static_cast<float *>(attn::bufferAlloc(K * N * sizeof(float)));
  ASSERT_EQ(again, w) << "the allocator did not recycle the block: the test tests nothing";
  {
    SCOPED_TRACE("the recycled buffer");
    check(again, -3.0f);
  }
  attn::bufferFree(again);
}

} // namespace
