// Flash attention for dot-product scores (attn.fused_attention and its _grad when the score
// region is c * sum(q * k); attn-to-onednn recognises it), called by compiled code through
// attn/kernels.h. FlashAttention-2's order: in the forward,
// query tiles outer and key tiles inner with a running max, a running sum and a rescaled
// accumulator per query row; in the backward, key tiles outer (their dK, dV accumulate in a
// tile) and query tiles inner, the probabilities recomputed from the saved log-sum-exp. Scores
// and probabilities exist one [128, 128] tile at a time, never as [T, S]; the tile products are
// oneDNN's sgemm.
//
// The _regions kernels run a researcher's score on the same tiles: attn-to-onednn compiles a
// score region of the form f(q . k, i, j, captures) and a mask region m(i, j, captures) into
// tile functions (attn/kernels.h), applied to each tile of products between the GEMMs (and, in
// the backward, f's derivative to each dS tile); the mask region's verdict per tile pair lets
// the loops skip what it hides from every query.
//
// The _bf16 kernels (attn-precision's bf16 policy) run the same algorithm with every tile
// product in bf16 with f32 sums: q (scaled), k, v and d_out are rounded to bfloat16 once per
// call, the probabilities and dS once per tile, and each product is a oneDNN bf16 matmul
// (avx512_core_bf16) cached per tile shape; the online softmax, lse, delta and every
// accumulator stay f32. oneDNN 2.6 has no public bf16 gemm, hence primitives per shape.
//
// Shapes at the boundary: q [B, H, T, D], k [B, H, S, D], v [B, H, S, Dv], mask [B, S];
// forward out [B, H, T, Dv], lse [B, H, T]; backward d_out, d_lse like out, lse, and dq, dk, dv
// like q, k, v.
#include "Memref.h"
#include "OneDNN.h"
#include "attn/Alloc.h"
#include "attn/kernels.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

using namespace attn::cpu::memref;

namespace {

// 128 queries x 256 keys: per tile 8 MFLOP of GEMMs (D = 64) against 32 K exponentials, and
// oneDNN's per-call cost spread over enough work (64 x 64 tiles ran the forward at 50% of the
// GEMM peak on a Zen 4, 128 x 128 at 64%; on the Zen 5, 128 x 128 tiles took 2-10% longer
// than these, forward and backward, f32 and bf16, at S 512 and 2048).
constexpr int64_t kQueryTile = 128, kKeyTile = 256;
// A causal tile that crosses the diagonal (or a window's edge) is computed in bands of this
// many query rows, each over the keys its rows may see: 3/4 of such a tile's work instead of
// all of it. (Bands of 32 do 5/8 of it, but in twice the GEMM calls, and were slower on Zen 5.)
constexpr int64_t kBand = 64;
// A window bounded on both sides shows a band of kBand queries at most W + kBand - 1 keys
// (and a band of keys at most as many queries). Where that is at most kWide, the kernels take
// each band in one product over all of them (64 x 319 for a window of 256), not one per key
// tile it crosses (three, banded again at the window's edges): a third of the GEMM calls, each
// wider (a window of 256 at S 4096 went from 4.9x to 6.0x faster than causal attention).
constexpr int64_t kWide = 512;
// The backward's wide bands are of this many keys (each against up to W + 31 queries): its
// products over the band's queries are as wide either way, and 32 did 10% less work than 64
// for about 3% less time on Zen 5 (a window of 256 at S 4096).
constexpr int64_t kWideKeys = 32;
// What a score loses where its key is not allowed: enough for fastExp to give its weight
// exactly 0 next to any allowed key's score. A row with no allowed key at all is the fused
// op's zero row (output 0, lse 0, no gradient), recognised by Allowed::emptyRow, not computed.
constexpr float kPush = 1e9f;

// exp(x) by Cephes' range reduction and polynomial (relative error about 2e-7), written so the
// loops calling it vectorize (this file is compiled with -fno-trapping-math); 0 below -87.3,
// where expf underflows, so a pushed-down score gets exactly the weight 0 it gets from expf.
// kBf16: for the bf16 kernels, whose weights are rounded to bfloat16 (2^-9) anyway, a degree-4
// Taylor polynomial after the same reduction (relative error 5.6e-5): 4 multiply-adds, not 8.
template <bool kBf16 = false> __attribute__((always_inline)) inline float fastExp(float x) {
  float c = x < -87.3f ? -87.3f : (x > 88.7f ? 88.7f : x);
  float n = std::floor(c * 1.44269504088896341f + 0.5f);
  float r = c - n * 0.693359375f + n * 2.12194440e-4f;
  float p;
  if constexpr (kBf16) {
    p = 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
  } else {
    p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
  }
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.3f ? 0.0f : p * scale;
}

// Scratch tiles from the runtime's buffers (attn/Alloc.h: 64-byte aligned, recycled), so that
// results do not depend on where malloc put them.
using Scratch = std::vector<float, attn::BufferAllocator<float>>;

struct Shape {
  int64_t B, H, T, S, D, Dv;
};

std::string dims(const int64_t *sizes, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

Shape checkShapes(const char *kernel, const attn_memref4 &q, const attn_memref4 &k,
                  const attn_memref4 &v, const attn_memref2 &mask) {
  Shape d{q.sizes[0], q.sizes[1], q.sizes[2], k.sizes[2], q.sizes[3], v.sizes[3]};
  bool ok = k.sizes[0] == d.B && k.sizes[1] == d.H && k.sizes[3] == d.D && v.sizes[0] == d.B &&
            v.sizes[1] == d.H && v.sizes[2] == d.S && mask.sizes[0] == d.B && mask.sizes[1] == d.S;
  if (!ok)
    fail(kernel, "inconsistent shapes: q " + dims(q.sizes, 4) + ", k " + dims(k.sizes, 4) + ", v " +
                     dims(v.sizes, 4) + ", mask " + dims(mask.sizes, 2));
  return d;
}

template <typename M>
void checkSizes(const char *kernel, const char *name, const M &m, int rank,
                std::initializer_list<int64_t> want) {
  if (!std::equal(want.begin(), want.end(), m.sizes))
    fail(kernel, std::string(name) + " is " + dims(m.sizes, rank) + ", expected " +
                     dims(want.begin(), rank));
}

// bfloat16 as its bits: the top half of an f32.
using Bf16 = uint16_t;
using Bf16Scratch = std::vector<Bf16, attn::BufferAllocator<Bf16>>;

// x rounded to the nearest bfloat16, ties to even (what oneDNN's reorder does); vectorises. A
// NaN whose payload fills the low half of its bits would carry into the exponent or the sign
// (arithmetic makes only the canonical NaNs, which stay NaNs): the NaN-safe form
// (attn::cpu::roundToBf16, a compare and a blend more) made the causal bf16 forward 3-4%
// slower, measured in turns at B1 H8 S2048.
inline Bf16 roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<Bf16>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// dst [rows, cols] (ld) = bf16(src [rows, cols] (ld)). A row kernel (AVX-512 where the CPU has
// it): compiled for the baseline ISA, this loop took as long as the rounded tile's product.
ATTN_ROW_KERNEL_16 void roundTile(const float *src, int64_t rows, int64_t cols, int64_t ld,
                                  Bf16 *dst) {
  for (int64_t r = 0; r < rows; ++r)
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c)
      dst[r * ld + c] = roundToBf16(src[r * ld + c]);
}

// dst[0..n) = bf16(factor * src[0..n)).
ATTN_ROW_KERNEL_16 void roundScaled(const float *src, int64_t n, float factor, Bf16 *dst) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    dst[i] = roundToBf16(factor * src[i]);
}

// One row of the online softmax: the running max m and sum l take in the scores s[0..cols),
// which become their weights exp(s - m_new) (fastExp<kBf16>); returns the factor
// exp(m_old - m_new) by which the row's accumulator is to be rescaled. Inlined into the row
// kernels below, each compiled for its ISAs.
template <bool kBf16>
__attribute__((always_inline)) inline float softmaxRow(float *s, int64_t cols, float &m, float &l) {
  // The comparison written out: GCC 12 vectorises this reduction, not std::max's (a scalar
  // loop that took half of this function).
  float mx = m;
#pragma omp simd reduction(max : mx)
  for (int64_t c = 0; c < cols; ++c)
    mx = s[c] > mx ? s[c] : mx;
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < cols; ++c) {
    s[c] = fastExp<kBf16>(s[c] - mx);
    sum += s[c];
  }
  float correction = fastExp(m - mx);
  l = l * correction + sum;
  m = mx;
  return correction;
}

ATTN_ROW_KERNEL float onlineSoftmaxRow(float *s, int64_t cols, float &m, float &l) {
  return softmaxRow<false>(s, cols, m, l);
}

// p[c] = exp(s[c] - lse): the forward's probabilities again.
ATTN_ROW_KERNEL void probabilityRow(float *s, int64_t cols, float lse) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c)
    s[c] = fastExp(s[c] - lse);
}

// ds = p (dp - delta), in place of dp.
ATTN_ROW_KERNEL void scoreGradientRow(const float *p, float *dp, int64_t cols, float delta) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c)
    dp[c] = p[c] * (dp[c] - delta);
}

// The bf16 kernels' forms: the same values, and each rounded to bfloat16 as it is written (the
// factor of the next tile product), instead of a second pass over the tile to round it.

// onlineSoftmaxRow, its weights also written to p[0..cols) rounded. (Rounded in a second loop
// over the row, still in L1: GCC vectorises the exponentials' loop with the 16-bit stores in
// it at half the width.)
ATTN_ROW_KERNEL_16 float onlineSoftmaxRowBf16(float *s, Bf16 *p, int64_t cols, float &m, float &l) {
  float correction = softmaxRow<true>(s, cols, m, l);
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c)
    p[c] = roundToBf16(s[c]);
  return correction;
}

// probabilityRow, also rounded into p[0..cols).
ATTN_ROW_KERNEL_16 void probabilityRowBf16(float *s, Bf16 *p, int64_t cols, float lse) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) {
    s[c] = fastExp<true>(s[c] - lse);
    p[c] = roundToBf16(s[c]);
  }
}

// scoreGradientRow into ds[0..cols), rounded (dp is left as it was).
ATTN_ROW_KERNEL_16 void scoreGradientRowBf16(const float *p, const float *dp, Bf16 *ds,
                                             int64_t cols, float delta) {
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c)
    ds[c] = roundToBf16(p[c] * (dp[c] - delta));
}

// A cached oneDNN matmul for one tile product's shape, transposes, alpha and beta.
struct TileProduct {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c, scratch;
};

// C [M, N] (ldc) = alpha op(A) op(B) + beta C, row-major, A and B bfloat16, C f32, beta 0 or 1
// (alpha: oneDNN's output scale; beta 1: its sum post-op).
void gemmBf16(char ta, char tb, int64_t M, int64_t N, int64_t K, float alpha, const Bf16 *A,
              int64_t lda, const Bf16 *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  using dt = dnnl::memory::data_type;
  namespace onednn = attn::cpu::onednn;
  int32_t alphaBits;
  std::memcpy(&alphaBits, &alpha, sizeof alphaBits);
  onednn::Key key{onednn::kFlashTileBf16, ta, tb, M, N, K, lda, ldb, ldc, alphaBits, beta != 0};
  // This thread's memory objects for the product, made once and repointed per call: making
  // three dnnl::memory, a scratchpad and an argument map per call cost about as much as a
  // 64-row tile product itself.
  struct Bound {
    std::shared_ptr<TileProduct> product;
    dnnl::memory a, b, c;
    std::vector<char, attn::BufferAllocator<char>> scratchBuffer;
    std::unordered_map<int, dnnl::memory> args;
  };
  static thread_local std::map<onednn::Key, Bound> bound;
  auto it = bound.find(key);
  if (it == bound.end()) {
    if (bound.size() >= 256) // as many shapes as ragged batches may bring, and no more
      bound.clear();
    auto product = onednn::cached<TileProduct>(key, [&] {
      // op(A) [M, K] and op(B) [K, N] as strides over the stored, row-major matrices.
      dnnl::memory::desc a({M, K}, dt::bf16,
                           ta == 'N' ? dnnl::memory::dims{lda, 1} : dnnl::memory::dims{1, lda});
      dnnl::memory::desc b({K, N}, dt::bf16,
                           tb == 'N' ? dnnl::memory::dims{ldb, 1} : dnnl::memory::dims{1, ldb});
      dnnl::memory::desc c({M, N}, dt::f32, {ldc, 1});
      dnnl::primitive_attr attr = onednn::userScratchpad();
      if (alpha != 1.0f)
        attr.set_output_scales(0, {alpha});
      if (beta != 0) {
        dnnl::post_ops sum;
        sum.append_sum(1.0f);
        attr.set_post_ops(sum);
      }
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, onednn::engine());
      return TileProduct{dnnl::matmul(pd), a, b, c, pd.scratchpad_desc()};
    });
    dnnl::engine &e = onednn::engine();
    Bound fresh{product,
                dnnl::memory(product->a, e, DNNL_MEMORY_NONE),
                dnnl::memory(product->b, e, DNNL_MEMORY_NONE),
                dnnl::memory(product->c, e, DNNL_MEMORY_NONE),
                {},
                {}};
    fresh.scratchBuffer.resize(std::max<size_t>(product->scratch.get_size(), 1));
    fresh.args = {
        {DNNL_ARG_SRC, fresh.a},
        {DNNL_ARG_WEIGHTS, fresh.b},
        {DNNL_ARG_DST, fresh.c},
        {DNNL_ARG_SCRATCHPAD, dnnl::memory(product->scratch, e, fresh.scratchBuffer.data())}};
    it = bound.emplace(key, std::move(fresh)).first;
  }
  Bound &p = it->second;
  p.a.set_data_handle(const_cast<Bf16 *>(A));
  p.b.set_data_handle(const_cast<Bf16 *>(B));
  p.c.set_data_handle(C);
  p.product->prim.execute(onednn::stream(), p.args);
  onednn::stream().wait();
}

// The number type of the tile products, as the kernels below are instantiated:
// - F32Tiles: the caller's f32 arrays and oneDNN's sgemm;
// - Bf16Tiles: bfloat16 copies of the inputs and of each probability / dS tile, and gemmBf16.
// `Factor` is the element type of a product's operands; `inputs` turns a whole f32 input into
// its factors (times `factor`: the forward's scale folded into q), `tile` a tile computed
// here (same ld) into a per-thread buffer's.
struct F32Tiles {
  using Factor = float;
  struct Inputs {
    const float *data;
  };
  static Inputs inputs(const float *x, int64_t, float factor) {
    (void)factor; // the f32 kernels scale in the product (alpha)
    return {x};
  }
  static constexpr bool kScaledQuery = false;
  static const float *tile(const float *t, int64_t, int64_t, int64_t, Bf16Scratch &) { return t; }
  // The rows [rows, ld] that the row functions below write a tile's factors to: the f32 tile
  // `t` itself, which they compute in place.
  static float *rows(float *t, int64_t, int64_t, Bf16Scratch &) { return t; }
  static float softmaxRow(float *s, float *, int64_t cols, float &m, float &l) {
    return onlineSoftmaxRow(s, cols, m, l);
  }
  static void probabilities(float *s, float *, int64_t cols, float lse) {
    probabilityRow(s, cols, lse);
  }
  static void scoreGradients(const float *p, float *dp, float *, int64_t cols, float delta) {
    scoreGradientRow(p, dp, cols, delta);
  }
  static void gemm(char ta, char tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                   int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    if (dnnl_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != dnnl_success)
      fail("attn_rt_flash_attention", "oneDNN sgemm failed for " + std::to_string(M) + "x" +
                                          std::to_string(N) + "x" + std::to_string(K));
  }
};

struct Bf16Tiles {
  using Factor = Bf16;
  struct Inputs {
    Bf16Scratch rounded;
    const Bf16 *data;
  };
  static Inputs inputs(const float *x, int64_t n, float factor) {
    Inputs in;
    in.rounded.resize(n);
    constexpr int64_t kChunk = 1 << 14;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i += kChunk)
      roundScaled(x + i, std::min(kChunk, n - i), factor, in.rounded.data() + i);
    in.data = in.rounded.data();
    return in;
  }
  // q is rounded scaled, so that scale q k^T is one bf16 product without an output scale.
  static constexpr bool kScaledQuery = true;
  static const Bf16 *tile(const float *t, int64_t rows, int64_t cols, int64_t ld,
                          Bf16Scratch &buffer) {
    if ((int64_t)buffer.size() < rows * ld)
      buffer.resize(rows * ld);
    roundTile(t, rows, cols, ld, buffer.data());
    return buffer.data();
  }
  // The rows are a per-thread buffer, written rounded as the row functions compute: the
  // softmax's weights, the probabilities (also kept in f32 in s: dS reads them) and dS.
  static Bf16 *rows(float *, int64_t rows, int64_t ld, Bf16Scratch &buffer) {
    if ((int64_t)buffer.size() < rows * ld)
      buffer.resize(rows * ld);
    return buffer.data();
  }
  static float softmaxRow(float *s, Bf16 *p, int64_t cols, float &m, float &l) {
    return onlineSoftmaxRowBf16(s, p, cols, m, l);
  }
  static void probabilities(float *s, Bf16 *p, int64_t cols, float lse) {
    probabilityRowBf16(s, p, cols, lse);
  }
  static void scoreGradients(const float *p, float *dp, Bf16 *ds, int64_t cols, float delta) {
    scoreGradientRowBf16(p, dp, ds, cols, delta);
  }
  static void gemm(char ta, char tb, int64_t M, int64_t N, int64_t K, float alpha, const Bf16 *A,
                   int64_t lda, const Bf16 *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    try {
      gemmBf16(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    } catch (const dnnl::error &e) {
      fail("attn_rt_flash_attention_bf16", std::string("oneDNN error: ") + e.what() + " for " +
                                               std::to_string(M) + "x" + std::to_string(N) +
                                               "x" + std::to_string(K));
    }
  }
};

// A sliding window (FlashAttention-2's window_size): query i sees key j only where
// i - left <= j <= i + right, -1 leaving a side open. i is the query's index, as the mask
// region that the lowering recognised as this window reads it.
struct Window {
  int64_t left = -1, right = -1;
};

// Which keys a query i of one batch row may see: mask[j] != 0, j within the window, and, when
// causal, j <= i + S - T. The window is the _regions kernels' only (their empty-row test,
// the running max, finds the rows it leaves without keys, so tiles it hides are skipped
// without asking whether each row sees a key elsewhere).
class Allowed {
public:
  Allowed(const float *mask, const Shape &d, bool causal, Window window = {})
      : mask_(mask), offset_(d.S - d.T), S_(d.S), causal_(causal), window_(window) {
    first_ = S_;
    for (int64_t j = S_ - 1; j >= 0; --j)
      if (mask[j] != 0)
        first_ = j;
    for (int64_t k0 = 0; k0 < S_; k0 += kKeyTile) {
      bool none = true, all = true;
      for (int64_t j = k0; j < std::min(k0 + kKeyTile, S_); ++j) {
        none = none && mask[j] == 0;
        all = all && mask[j] != 0;
      }
      tileMasked_.push_back(none);
      tileOpen_.push_back(all);
    }
  }

  // Whether the scores of queries q0.. against the keys [k0, k0 + cols) need push: a padded
  // key among them, or a query from q0 on that sees no key at all (emptyRow is monotone in i).
  bool needsPush(int64_t q0, int64_t k0, int64_t cols) const {
    return !open(k0, cols) || emptyRow(q0);
  }

  // Pushes the scores row[0..cols) of query i against keys k0.. down where the padding hides
  // them (a lookup, vectorised). The keys the causal mask or the window hide from the row, a
  // suffix and a prefix of it, the callers give weight 0 without an exp and are left alone.
  void push(int64_t i, int64_t k0, int64_t cols, float *row) const {
    if (open(k0, cols))
      return;
    const float *m = mask_ + k0;
    int64_t limit = visible(i, k0, cols);
    for (int64_t c = 0; c < limit; ++c)
      row[c] -= m[c] == 0 ? kPush : 0.0f;
  }

  // How many of the keys [k0, k0 + cols) query i may see by the causal mask and the window's
  // right side (a prefix).
  int64_t visible(int64_t i, int64_t k0, int64_t cols) const {
    int64_t n = causal_ ? std::clamp<int64_t>(i + offset_ + 1 - k0, 0, cols) : cols;
    return window_.right < 0
               ? n
               : std::min(n, std::clamp<int64_t>(i + window_.right + 1 - k0, 0, cols));
  }

  // How many of the keys [k0, k0 + cols) are too far back for query i's window (a prefix).
  int64_t from(int64_t i, int64_t k0, int64_t cols) const {
    return window_.left < 0 ? 0 : std::clamp<int64_t>(i - window_.left - k0, 0, cols);
  }

  // The query rows per band of the tile (queries [q0, q0 + rows), keys [k0, k0 + cols)): kBand
  // where the causal mask or the window hides part of the tile from its first row (or the
  // window from its last), else the whole tile. Each band computes only the keys between its
  // first row's first and its last row's last visible one.
  int64_t band(int64_t q0, int64_t rows, int64_t k0, int64_t cols) const {
    return visible(q0, k0, cols) < cols || from(q0 + rows - 1, k0, cols) > 0 ? kBand : rows;
  }

  // Whether query i sees no key at all.
  bool emptyRow(int64_t i) const { return causal_ ? first_ > i + offset_ : first_ >= S_; }

  // Whether key tile [k0, k0 + kKeyTile) can be left out for queries [q0, q1): when every one
  // of them sees an allowed key (so its running max is a real score) and none of these keys,
  // their weights are exactly 0 (fastExp of less than -1e9 + a real score).
  // The window's hidden tiles are skipped whatever the rows see (the class comment says why).
  bool skip(int64_t q0, int64_t q1, int64_t k0) const {
    bool rowsSeeSomething = causal_ ? first_ <= q0 + offset_ : first_ < S_;
    bool noneHere = tileMasked_[k0 / kKeyTile] || (causal_ && k0 > q1 - 1 + offset_);
    int64_t cols = std::min(kKeyTile, S_ - k0);
    bool outOfWindow = from(q0, k0, cols) == cols || visible(q1 - 1, k0, cols) == 0;
    return (rowsSeeSomething && noneHere) || (outOfWindow && hasWindow());
  }

  bool hasWindow() const { return window_.left >= 0 || window_.right >= 0; }

  // With a window bounded on both sides (the right one by the window or the causal mask), the
  // most keys any `rows` consecutive queries see, and so the widest band over them; else -1.
  int64_t bandWidth(int64_t rows) const {
    int64_t right =
        causal_ ? (window_.right < 0 ? offset_ : std::min(window_.right, offset_)) : window_.right;
    if (window_.left < 0 || (right < 0 && !causal_))
      return -1;
    return window_.left + std::max<int64_t>(right, 0) + rows;
  }
  // The keys queries [q0, q1) see between them, by the causal mask and the window: [lo, hi).
  std::pair<int64_t, int64_t> keysOf(int64_t q0, int64_t q1) const {
    int64_t lo = from(q0, 0, S_), hi = visible(q1 - 1, 0, S_);
    return {std::min(lo, hi), hi};
  }
  // The queries of [0, T) that see some key of [k0, k1) by the causal mask and the window.
  std::pair<int64_t, int64_t> queriesOf(int64_t k0, int64_t k1, int64_t T) const {
    int64_t lo = 0, hi = T;
    if (causal_)
      lo = std::max(lo, k0 - offset_);
    if (window_.right >= 0)
      lo = std::max(lo, k0 - window_.right);
    if (window_.left >= 0)
      hi = std::min(hi, k1 - 1 + window_.left + 1);
    return {std::min(lo, hi), hi};
  }

private:
  const float *mask_;
  int64_t offset_, S_;
  bool causal_;
  Window window_;
  // Whether no key of [k0, k0 + cols) is padding.
  bool open(int64_t k0, int64_t cols) const {
    for (int64_t t = k0 / kKeyTile; t <= (k0 + cols - 1) / kKeyTile; ++t)
      if (!tileOpen_[t])
        return false;
    return true;
  }

  int64_t first_;                // the first unmasked key; S when there is none
  std::vector<bool> tileMasked_; // per key tile: every key masked
  std::vector<bool> tileOpen_;   // per key tile: no key masked
};

// An op's score and mask regions, compiled into tile functions (attn/kernels.h), and its
// scalar captures: what the _regions kernels apply between the GEMMs. The captures are
// [rows, numCaptures]: one row that every head reads, or one row per head (a per-head capture,
// an ALiBi slope per head, makes the lowering write each head's values).
struct Regions {
  // score: null where the score is the scaled product itself (only the mask differs from the
  // plain kernel's); mask: null without a mask region
  attn_tile_fn score = nullptr, mask = nullptr;
  attn_tile_grad_fn scoreGrad = nullptr;        // the backward's only
  Window window;                                // a mask region recognised as a sliding window
  float *captures = nullptr;
  int64_t numCaptures = 0;
  int64_t rows = 1;         // 1, or H
  bool maskPerHead = false; // the mask reads a per-head capture: verdicts per head

  // The row of captures that head h reads.
  int64_t row(int64_t h) const { return rows == 1 ? 0 : h; }
  float *of(int64_t h) const { return captures + row(h) * numCaptures; }
  void check(const char *kernel, int64_t heads) const {
    if (rows != 1 && rows != heads)
      fail(kernel, "captures have " + std::to_string(rows) + " rows; expected 1 or the " +
                       std::to_string(heads) + " heads");
  }

  // t [rows, cols] (ld) = f(t, i, j, captures of head h), t the products q . k.
  void modify(int64_t h, float *t, int64_t ld, int64_t rows, int64_t cols, int64_t i0,
              int64_t j0) const {
    if (!score)
      return;
    float *c = of(h);
    score(t, t, 0, rows * ld, 1, c, c, 0, numCaptures, 1, ld, rows, cols, i0, j0);
  }
  // t [rows, cols] (ld) = 1 where head h's mask region allows (i, j), else 0.
  void allowedIn(int64_t h, float *t, int64_t ld, int64_t rows, int64_t cols, int64_t i0,
                 int64_t j0) const {
    float *c = of(h);
    mask(t, t, 0, rows * ld, 1, c, c, 0, numCaptures, 1, ld, rows, cols, i0, j0);
  }
  // ds [rows, cols] (ld) = ds df/d dot at the products `dots`; dCaptures [this.rows,
  // numCaptures] gains ds df/d capture in head h's row. Only with a scoreGrad (the caller's
  // check: a product score has none).
  void gradient(int64_t h, float *dots, float *ds, float *dCaptures, int64_t ld, int64_t rows,
                int64_t cols, int64_t i0, int64_t j0) const {
    int64_t n = rows * ld, nc = numCaptures;
    float *c = of(h), *dc = dCaptures + row(h) * nc;
    scoreGrad(dots, dots, 0, n, 1, ds, ds, 0, n, 1, c, c, 0, nc, 1, dc, dc, 0, nc, 1, ld, rows,
              cols, i0, j0);
  }
};

// The regions of a _regions kernel call (inactive for the plain dot product), with the mask
// region's verdict on every (query tile, key tile) pair, taken once per call: a pair it hides
// from every query is skipped (a sliding window of W costs O(S W), not O(S^2)), one it allows
// whole is not masked, only the others evaluate the mask again on their scores.
class ScoreMods {
public:
  enum Verdict : uint8_t { kNone, kSome, kAll };

  ScoreMods() = default;
  // Pairs the causal mask hides from every query are not asked about (half of them). A mask
  // that reads a per-head capture gets verdicts per head; any other, one set for all heads
  // (taking them per head would cost H times as many mask evaluations).
  ScoreMods(const Regions &r, const Shape &d, bool causal) : regions_(&r) {
    if (!r.mask)
      return;
    keyTiles_ = (d.S + kKeyTile - 1) / kKeyTile;
    queryTiles_ = (d.T + kQueryTile - 1) / kQueryTile;
    int64_t sets = r.maskPerHead ? r.rows : 1;
    verdicts_.assign(sets * queryTiles_ * keyTiles_, kAll);
#pragma omp parallel
    {
      Scratch t(kQueryTile * kKeyTile);
#pragma omp for collapse(3) schedule(dynamic)
      for (int64_t h = 0; h < sets; ++h)
        for (int64_t qt = 0; qt < queryTiles_; ++qt)
          for (int64_t kt = 0; kt < keyTiles_; ++kt) {
            int64_t q0 = qt * kQueryTile, k0 = kt * kKeyTile;
            int64_t rows = std::min(kQueryTile, d.T - q0), cols = std::min(kKeyTile, d.S - k0);
            Verdict &v = verdicts_[(h * queryTiles_ + qt) * keyTiles_ + kt];
            if (causal && k0 > q0 + rows - 1 + d.S - d.T) {
              v = kNone;
              continue;
            }
            r.allowedIn(h, t.data(), kKeyTile, rows, cols, q0, k0);
            int64_t allowed = 0;
            for (int64_t i = 0; i < rows; ++i)
              for (int64_t j = 0; j < cols; ++j)
                allowed += t[i * kKeyTile + j] != 0;
            v = allowed == 0 ? kNone : allowed == rows * cols ? kAll : kSome;
          }
    }
  }

  bool active() const { return regions_ != nullptr; }
  // Whether a mask region was taken verdicts of (they are per tile pair).
  bool masks() const { return !verdicts_.empty(); }
  const Regions &regions() const { return *regions_; }

  // Whether head h's mask region hides the tile pair of query q0 and key k0 from every query.
  bool hidden(int64_t h, int64_t q0, int64_t k0) const { return verdict(h, q0, k0) == kNone; }

  // s [rows, cols] (ld), head h's products of queries i0.. and keys j0..: the score region's
  // scores, pushed down where the mask region hides the key (`allowed` is scratch). The keys
  // are within one key tile where there is a mask region (its verdicts are per tile).
  void apply(int64_t h, float *s, int64_t ld, int64_t rows, int64_t cols, int64_t i0, int64_t j0,
             Scratch &allowed) const {
    regions_->modify(h, s, ld, rows, cols, i0, j0);
    if (verdict(h, i0, j0) != kSome)
      return;
    if ((int64_t)allowed.size() < rows * ld)
      allowed.resize(rows * ld);
    regions_->allowedIn(h, allowed.data(), ld, rows, cols, i0, j0);
    for (int64_t r = 0; r < rows; ++r)
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c)
        s[r * ld + c] -= allowed[r * ld + c] == 0 ? kPush : 0.0f;
  }

private:
  Verdict verdict(int64_t h, int64_t i0, int64_t j0) const {
    if (verdicts_.empty())
      return kAll;
    int64_t set = regions_->maskPerHead ? regions_->row(h) : 0;
    return verdicts_[(set * queryTiles_ + i0 / kQueryTile) * keyTiles_ + j0 / kKeyTile];
  }

  const Regions *regions_ = nullptr;
  int64_t queryTiles_ = 0, keyTiles_ = 0;
  // [capture rows, query tiles, key tiles]; empty without a mask region
  std::vector<Verdict> verdicts_;
};

// Whether the kernels take the window's wide bands (kWide): a window bounded on both sides,
// narrow enough, and no mask region (whose verdicts are per tile pair). The same for every
// batch row's `allowed` (the band's width does not read the key mask).
bool wideBands(const Allowed &allowed, const ScoreMods &mods) {
  int64_t width = allowed.bandWidth(kBand);
  return width > 0 && width <= kWide && !mods.masks();
}

// s [rows, cols] (ld) = scale q[q0..] k[k0..]^T, less kPush where the padding hides a key (the
// causal mask's and the window's hidden keys are left to the callers), 0 in a row with no key;
// q [T, D] and k [S, D] of one (batch, head h) (q already scaled where Tiles::kScaledQuery).
// With active `mods` (the _regions kernels) the products become the score region's scores,
// masked by its mask region; `dots` (when not null, same ld) keeps the products.
template <class Tiles>
void scoreTile(const typename Tiles::Factor *q, const typename Tiles::Factor *k, const Shape &d,
               const Allowed &allowed, const ScoreMods &mods, int64_t h, int64_t q0, int64_t rows,
               int64_t k0, int64_t cols, int64_t ld, float scale, float *s, float *dots,
               Scratch &scratch) {
  Tiles::gemm('N', 'T', rows, cols, d.D, Tiles::kScaledQuery ? 1.0f : scale, q + q0 * d.D, d.D,
              k + k0 * d.D, d.D, 0.0f, s, ld);
  if (dots)
    for (int64_t r = 0; r < rows; ++r)
      std::copy(s + r * ld, s + r * ld + cols, dots + r * ld);
  if (mods.active())
    mods.apply(h, s, ld, rows, cols, q0, k0, scratch);
  if (!allowed.needsPush(q0, k0, cols))
    return;
  for (int64_t r = 0; r < rows; ++r) {
    float *row = s + r * ld;
    if (allowed.emptyRow(q0 + r)) {
      std::fill(row, row + cols, 0.0f);
      continue;
    }
    allowed.push(q0 + r, k0, cols, row);
  }
}

template <class Tiles>
void flashForward(const char *kernel, attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                  attn_memref2 *mask, attn_memref4 *out, attn_memref3 *lse, int64_t causal,
                  float scale, const Regions *regions = nullptr) {
  using Factor = typename Tiles::Factor;
  Shape d = checkShapes(kernel, *q, *k, *v, *mask);
  checkSizes(kernel, "out", *out, 4, {d.B, d.H, d.T, d.Dv});
  checkSizes(kernel, "lse", *lse, 3, {d.B, d.H, d.T});
  std::vector<float> qBuf, kBuf, vBuf, mBuf;
  const float *Q = rowMajor(*q, 4, qBuf), *K = rowMajor(*k, 4, kBuf), *V = rowMajor(*v, 4, vBuf);
  const float *M = rowMajor(*mask, 2, mBuf);
  auto Qf = Tiles::inputs(Q, d.B * d.H * d.T * d.D, scale);
  auto Kf = Tiles::inputs(K, d.B * d.H * d.S * d.D, 1.0f);
  auto Vf = Tiles::inputs(V, d.B * d.H * d.S * d.Dv, 1.0f);
  RowMajorOut<attn_memref4> O(*out, 4);
  RowMajorOut<attn_memref3> L(*lse, 3);
  std::vector<Allowed> allowed;
  for (int64_t b = 0; b < d.B; ++b)
    allowed.emplace_back(M + b * d.S, d, causal != 0, regions ? regions->window : Window{});
  if (regions)
    regions->check(kernel, d.H);
  ScoreMods mods = regions ? ScoreMods(*regions, d, causal != 0) : ScoreMods();
  int64_t queryTiles = (d.T + kQueryTile - 1) / kQueryTile;
  bool wide = d.B > 0 && wideBands(allowed[0], mods);

#pragma omp parallel
  {
    Scratch s(std::max(kQueryTile * kKeyTile, kBand * kWide)), acc(kQueryTile * d.Dv),
        m(kQueryTile), l(kQueryTile), maskScratch;
    Bf16Scratch pFactors; // the probabilities rounded, where Tiles rounds
#pragma omp for collapse(3) schedule(dynamic)
    for (int64_t b = 0; b < d.B; ++b)
      for (int64_t h = 0; h < d.H; ++h)
        for (int64_t qt = 0; qt < queryTiles; ++qt) {
          int64_t bh = b * d.H + h;
          const Factor *q1 = Qf.data + bh * d.T * d.D, *k1 = Kf.data + bh * d.S * d.D,
                       *v1 = Vf.data + bh * d.S * d.Dv;
          int64_t q0 = qt * kQueryTile, rows = std::min(kQueryTile, d.T - q0);
          std::fill(m.begin(), m.end(), -INFINITY);
          std::fill(l.begin(), l.end(), 0.0f);
          std::fill(acc.begin(), acc.end(), 0.0f);
          // Rows [r0, r0 + n) of the tile over the `seen` keys from j0 (s [n, seen], ld): the
          // others are hidden from all of them, by the causal mask or the window.
          auto band = [&](int64_t r0, int64_t n, int64_t j0, int64_t seen, int64_t ld) {
            scoreTile<Tiles>(q1, k1, d, allowed[b], mods, h, q0 + r0, n, j0, seen, ld, scale,
                             s.data(), nullptr, maskScratch);
            // The weights p [n, seen] (ld), the factor of P V.
            Factor *pBand = Tiles::rows(s.data(), n, ld, pFactors);
            for (int64_t r = r0; r < r0 + n; ++r) {
              // The row's own keys [first, mine): those before (out of its window) and after
              // (causally hidden) get weight 0 without an exp.
              float *row = &s[(r - r0) * ld];
              Factor *pRow = pBand + (r - r0) * ld;
              int64_t mine = allowed[b].visible(q0 + r, j0, seen);
              int64_t first = std::min(allowed[b].from(q0 + r, j0, seen), mine);
              std::fill(pRow, pRow + first, Factor(0));
              std::fill(pRow + mine, pRow + seen, Factor(0));
              if (mine == first)
                continue;
              float correction =
                  Tiles::softmaxRow(row + first, pRow + first, mine - first, m[r], l[r]);
              if (correction != 1.0f)
                for (int64_t c = 0; c < d.Dv; ++c)
                  acc[r * d.Dv + c] *= correction;
            }
            // acc [n, Dv] += p [n, seen] v [seen, Dv]
            Tiles::gemm('N', 'N', n, d.Dv, seen, 1.0f, pBand, ld, v1 + j0 * d.Dv, d.Dv, 1.0f,
                        &acc[r0 * d.Dv], d.Dv);
          };
          if (wide) {
            for (int64_t r0 = 0; r0 < rows; r0 += kBand) {
              int64_t n = std::min(kBand, rows - r0);
              auto [lo, hi] = allowed[b].keysOf(q0 + r0, q0 + r0 + n);
              if (hi > lo)
                band(r0, n, lo, hi - lo, kWide);
            }
          } else {
            for (int64_t k0 = 0; k0 < d.S; k0 += kKeyTile) {
              if (allowed[b].skip(q0, q0 + rows, k0) || mods.hidden(h, q0, k0))
                continue;
              int64_t cols = std::min(kKeyTile, d.S - k0);
              int64_t rowsPerBand = allowed[b].band(q0, rows, k0, cols);
              for (int64_t r0 = 0; r0 < rows; r0 += rowsPerBand) {
                int64_t n = std::min(rowsPerBand, rows - r0);
                int64_t lo = allowed[b].from(q0 + r0, k0, cols);
                int64_t seen = allowed[b].visible(q0 + r0 + n - 1, k0, cols) - lo;
                if (seen > 0)
                  band(r0, n, k0 + lo, seen, kKeyTile);
              }
            }
          }
          float *o1 = O.data + (bh * d.T + q0) * d.Dv, *lse1 = L.data + bh * d.T + q0;
          for (int64_t r = 0; r < rows; ++r) {
            // The mask region may hide every key of a row: its scores are then all pushed
            // down (or never seen), which the running max tells.
            bool empty = allowed[b].emptyRow(q0 + r) || (mods.active() && !(m[r] > -kPush / 2));
            for (int64_t c = 0; c < d.Dv; ++c)
              o1[r * d.Dv + c] = empty ? 0.0f : acc[r * d.Dv + c] / l[r];
            lse1[r] = empty ? 0.0f : m[r] + std::log(l[r]);
          }
        }
  }
  O.finish();
  L.finish();
}

template <class Tiles>
void flashBackward(const char *kernel, attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                   attn_memref2 *mask, attn_memref4 *out, attn_memref3 *lse, attn_memref4 *d_out,
                   attn_memref3 *d_lse, attn_memref4 *dq, attn_memref4 *dk, attn_memref4 *dv,
                   int64_t causal, float scale, const Regions *regions = nullptr,
                   float *dCaptures = nullptr) {
  using Factor = typename Tiles::Factor;
  Shape d = checkShapes(kernel, *q, *k, *v, *mask);
  checkSizes(kernel, "out", *out, 4, {d.B, d.H, d.T, d.Dv});
  checkSizes(kernel, "lse", *lse, 3, {d.B, d.H, d.T});
  checkSizes(kernel, "d_out", *d_out, 4, {d.B, d.H, d.T, d.Dv});
  checkSizes(kernel, "d_lse", *d_lse, 3, {d.B, d.H, d.T});
  checkSizes(kernel, "dq", *dq, 4, {d.B, d.H, d.T, d.D});
  checkSizes(kernel, "dk", *dk, 4, {d.B, d.H, d.S, d.D});
  checkSizes(kernel, "dv", *dv, 4, {d.B, d.H, d.S, d.Dv});
  std::vector<float> qBuf, kBuf, vBuf, mBuf, oBuf, lBuf, doBuf, dlBuf;
  const float *Q = rowMajor(*q, 4, qBuf), *K = rowMajor(*k, 4, kBuf), *V = rowMajor(*v, 4, vBuf);
  const float *M = rowMajor(*mask, 2, mBuf), *O = rowMajor(*out, 4, oBuf);
  const float *LSE = rowMajor(*lse, 3, lBuf), *dO = rowMajor(*d_out, 4, doBuf);
  const float *dLSE = rowMajor(*d_lse, 3, dlBuf);
  auto Qf = Tiles::inputs(Q, d.B * d.H * d.T * d.D, scale);
  auto Kf = Tiles::inputs(K, d.B * d.H * d.S * d.D, 1.0f);
  auto Vf = Tiles::inputs(V, d.B * d.H * d.S * d.Dv, 1.0f);
  auto dOf = Tiles::inputs(dO, d.B * d.H * d.T * d.Dv, 1.0f);
  // dK += scale dS^T q: the scale is in q already where Tiles scaled it.
  float dkScale = Tiles::kScaledQuery ? 1.0f : scale;
  RowMajorOut<attn_memref4> dQ(*dq, 4), dK(*dk, 4), dV(*dv, 4);
  std::vector<Allowed> allowed;
  for (int64_t b = 0; b < d.B; ++b)
    allowed.emplace_back(M + b * d.S, d, causal != 0, regions ? regions->window : Window{});
  if (regions)
    regions->check(kernel, d.H);
  ScoreMods mods = regions ? ScoreMods(*regions, d, causal != 0) : ScoreMods();
  int64_t numCaptures = regions ? regions->rows * regions->numCaptures : 0; // [rows, N]
  std::vector<double> captureGrads(numCaptures, 0.0);
  int64_t keyTiles = (d.S + kKeyTile - 1) / kKeyTile, bhs = d.B * d.H;
  bool wide = d.B > 0 && wideBands(allowed[0], mods);

  // delta_i = sum_c dO[i, c] O[i, c] - d_lse[i], per (batch, head): dS = P (dP - delta).
  Scratch delta(bhs * d.T);
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < bhs * d.T; ++row) {
    float dot = 0;
    for (int64_t c = 0; c < d.Dv; ++c)
      dot += dO[row * d.Dv + c] * O[row * d.Dv + c];
    delta[row] = dot - dLSE[row];
  }
  std::fill(dQ.data, dQ.data + bhs * d.T * d.D, 0.0f);
  // dQ sums over the key tiles. Where the (batch, head) pairs alone leave threads idle, the key
  // tiles of one pair go to different threads, each adding into its own copy of dQ.
  int threads = omp_get_max_threads();
  bool splitKeys = threads > 1 && keyTiles > 1 && bhs < 2 * threads;
  std::vector<Scratch> dqCopies(splitKeys ? threads : 0);

#pragma omp parallel
  {
    int64_t tileSize = std::max(kQueryTile * kKeyTile, kWide * kBand);
    Scratch p(tileSize), ds(tileSize), dkTile(kKeyTile * d.D), dvTile(kKeyTile * d.Dv), maskScratch;
    // The products before the score region (its derivative reads them) and this thread's
    // share of the captures' gradients.
    bool keepDots = mods.active() && mods.regions().scoreGrad;
    Scratch dots(keepDots ? tileSize : 0), dCapturesMine(numCaptures, 0.0f);
    Bf16Scratch pFactors, dsFactors; // P and dS rounded, where Tiles rounds
    float *dqBase = dQ.data;
    if (splitKeys) {
      Scratch &mine = dqCopies[omp_get_thread_num()];
      mine.assign(bhs * d.T * d.D, 0.0f);
      dqBase = mine.data();
    }
    // Key tile kt of (b, h): its dK and dV rows, and its part of dQ (into dqBase).
    auto keyTile = [&](int64_t b, int64_t h, int64_t kt) {
      int64_t bh = b * d.H + h, k0 = kt * kKeyTile, cols = std::min(kKeyTile, d.S - k0);
      const Factor *q1 = Qf.data + bh * d.T * d.D, *k1 = Kf.data + bh * d.S * d.D,
                   *v1 = Vf.data + bh * d.S * d.Dv, *do1 = dOf.data + bh * d.T * d.Dv;
      const float *lse1 = LSE + bh * d.T, *delta1 = &delta[bh * d.T];
      float *dq1 = dqBase + bh * d.T * d.D;
      std::fill(dkTile.begin(), dkTile.end(), 0.0f);
      std::fill(dvTile.begin(), dvTile.end(), 0.0f);
      // Query rows [r0, r0 + n) against the `seen` keys from k0 + lo (p and ds [n, seen], ld):
      // the others are hidden from all of these rows, by the causal mask or the window.
      auto band = [&](int64_t r0, int64_t n, int64_t lo, int64_t seen, int64_t ld) {
        int64_t j0 = k0 + lo;
        scoreTile<Tiles>(q1, k1, d, allowed[b], mods, h, r0, n, j0, seen, ld, scale, p.data(),
                         keepDots ? dots.data() : nullptr, maskScratch);
        // P [n, seen] (ld) in f32 in p (dS reads it), and as the factor of dV's product.
        Factor *pTile = Tiles::rows(p.data(), n, ld, pFactors);
        for (int64_t r = 0; r < n; ++r) {
          float *row = &p[r * ld];
          Factor *pRow = pTile + r * ld;
          // A zero row has no weights and no gradient; a row's keys out of its window or
          // causally hidden none.
          int64_t mine = allowed[b].emptyRow(r0 + r) ? 0 : allowed[b].visible(r0 + r, j0, seen);
          int64_t first = std::min(allowed[b].from(r0 + r, j0, seen), mine);
          std::fill(row, row + first, 0.0f);
          std::fill(row + mine, row + seen, 0.0f);
          if constexpr (!std::is_same_v<Factor, float>) { // else pRow is row
            std::fill(pRow, pRow + first, Factor(0));
            std::fill(pRow + mine, pRow + seen, Factor(0));
          }
          Tiles::probabilities(row + first, pRow + first, mine - first, lse1[r0 + r]);
        }
        // dV [seen, Dv] += P^T [seen, n] dO [n, Dv]
        Tiles::gemm('T', 'N', seen, d.Dv, n, 1.0f, pTile, ld, do1 + r0 * d.Dv, d.Dv, 1.0f,
                    dvTile.data() + lo * d.Dv, d.Dv);
        // dP [n, seen] = dO [n, Dv] V^T [Dv, seen]; then dS = P (dP - delta), written as the
        // factor of dQ's and dK's products, unless the score region's backward (which turns dS
        // of the scores into dS of the products: P is 0 where a key is hidden, and so is dS)
        // comes first.
        Tiles::gemm('N', 'T', n, seen, d.Dv, 1.0f, do1 + r0 * d.Dv, d.Dv, v1 + j0 * d.Dv, d.Dv,
                    0.0f, ds.data(), ld);
        const Factor *dsTile;
        if (keepDots) {
          for (int64_t r = 0; r < n; ++r)
            scoreGradientRow(&p[r * ld], &ds[r * ld], seen, delta1[r0 + r]);
          mods.regions().gradient(h, dots.data(), ds.data(), dCapturesMine.data(), ld, n, seen, r0,
                                  j0);
          dsTile = Tiles::tile(ds.data(), n, seen, ld, dsFactors);
        } else {
          Factor *dsRows = Tiles::rows(ds.data(), n, ld, dsFactors);
          for (int64_t r = 0; r < n; ++r)
            Tiles::scoreGradients(&p[r * ld], &ds[r * ld], dsRows + r * ld, seen, delta1[r0 + r]);
          dsTile = dsRows;
        }
        // dQ [n, D] += scale dS [n, seen] K [seen, D]
        Tiles::gemm('N', 'N', n, d.D, seen, scale, dsTile, ld, k1 + j0 * d.D, d.D, 1.0f,
                    dq1 + r0 * d.D, d.D);
        // dK [seen, D] += scale dS^T [seen, n] Q [n, D]
        Tiles::gemm('T', 'N', seen, d.D, n, dkScale, dsTile, ld, q1 + r0 * d.D, d.D, 1.0f,
                    dkTile.data() + lo * d.D, d.D);
      };
      if (wide) {
        // Bands of kWideKeys keys, each against every query that sees one of them.
        for (int64_t lo = 0; lo < cols; lo += kWideKeys) {
          int64_t seen = std::min(kWideKeys, cols - lo);
          auto [r0, r1] = allowed[b].queriesOf(k0 + lo, k0 + lo + seen, d.T);
          if (r1 > r0)
            band(r0, r1 - r0, lo, seen, kWideKeys);
        }
      } else {
        for (int64_t q0 = 0; q0 < d.T; q0 += kQueryTile) {
          int64_t rows = std::min(kQueryTile, d.T - q0);
          if (allowed[b].skip(q0, q0 + rows, k0) || mods.hidden(h, q0, k0))
            continue;
          int64_t rowsPerBand = allowed[b].band(q0, rows, k0, cols);
          for (int64_t r0 = q0; r0 < q0 + rows; r0 += rowsPerBand) {
            int64_t n = std::min(rowsPerBand, q0 + rows - r0);
            int64_t lo = allowed[b].from(r0, k0, cols);
            int64_t seen = allowed[b].visible(r0 + n - 1, k0, cols) - lo;
            if (seen > 0)
              band(r0, n, lo, seen, kKeyTile);
          }
        }
      }
      std::copy(dkTile.begin(), dkTile.begin() + cols * d.D, dK.data + (bh * d.S + k0) * d.D);
      std::copy(dvTile.begin(), dvTile.begin() + cols * d.Dv, dV.data + (bh * d.S + k0) * d.Dv);
    };
    if (splitKeys) {
#pragma omp for collapse(3) schedule(dynamic)
      for (int64_t b = 0; b < d.B; ++b)
        for (int64_t h = 0; h < d.H; ++h)
          for (int64_t kt = 0; kt < keyTiles; ++kt)
            keyTile(b, h, kt);
    } else {
#pragma omp for collapse(2) schedule(dynamic)
      for (int64_t b = 0; b < d.B; ++b)
        for (int64_t h = 0; h < d.H; ++h)
          for (int64_t kt = 0; kt < keyTiles; ++kt)
            keyTile(b, h, kt);
    }
#pragma omp critical
    for (int64_t c = 0; c < numCaptures; ++c)
      captureGrads[c] += dCapturesMine[c];
  }
  for (int64_t c = 0; c < numCaptures; ++c)
    dCaptures[c] = (float)captureGrads[c];
  if (splitKeys) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < bhs * d.T * d.D; ++i) {
      float sum = 0;
      for (const Scratch &copy : dqCopies)
        sum += copy.empty() ? 0.0f : copy[i];
      dQ.data[i] = sum;
    }
  }
  dQ.finish();
  dK.finish();
  dV.finish();
}

} // namespace

// q [B, H, T, D], k [B, H, S, D], v [B, H, S, Dv], mask [B, S] -> out [B, H, T, Dv], lse [B, H, T]
extern "C" ATTN_EXPORT void
_mlir_ciface_attn_rt_flash_attention(attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                                     attn_memref2 *mask, attn_memref4 *out, attn_memref3 *lse,
                                     int64_t causal, float scale) {
  flashForward<F32Tiles>("attn_rt_flash_attention", q, k, v, mask, out, lse, causal, scale);
}

extern "C" ATTN_EXPORT void
_mlir_ciface_attn_rt_flash_attention_bf16(attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                                          attn_memref2 *mask, attn_memref4 *out,
                                          attn_memref3 *lse, int64_t causal, float scale) {
  flashForward<Bf16Tiles>("attn_rt_flash_attention_bf16", q, k, v, mask, out, lse, causal, scale);
}

// ... and d_out, d_lse like out, lse -> dq, dk, dv like q, k, v.
extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_flash_attention_backward(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref4 *out,
    attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse, attn_memref4 *dq, attn_memref4 *dk,
    attn_memref4 *dv, int64_t causal, float scale) {
  flashBackward<F32Tiles>("attn_rt_flash_attention_backward", q, k, v, mask, out, lse, d_out,
                          d_lse, dq, dk, dv, causal, scale);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_flash_attention_backward_bf16(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref4 *out,
    attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse, attn_memref4 *dq, attn_memref4 *dk,
    attn_memref4 *dv, int64_t causal, float scale) {
  flashBackward<Bf16Tiles>("attn_rt_flash_attention_backward_bf16", q, k, v, mask, out, lse,
                           d_out, d_lse, dq, dk, dv, causal, scale);
}

namespace {
// The regions of a _regions call. captures [rows, N]: rows 1 (every head's) or H (one per
// head); hasMask 0 (none), 1, or 2 (a mask that reads a per-head capture); window left and right
// -1 (no window) or >= 0; hasScore 0 where the score is the scaled product (the score
// functions are then not called).
Regions regionsOf(const char *kernel, attn_memref2 *captures, std::vector<float> &buffer,
                  int64_t hasMask, Window window, int64_t hasScore, attn_tile_fn score,
                  attn_tile_fn mask, attn_tile_grad_fn scoreGrad = nullptr) {
  if (window.left < -1 || window.right < -1)
    fail(kernel, "window sides are -1 (none) or >= 0; got " + std::to_string(window.left) + ", " +
                     std::to_string(window.right));
  Regions r;
  r.window = window;
  r.score = hasScore ? score : nullptr;
  r.mask = hasMask ? mask : nullptr;
  r.scoreGrad = hasScore ? scoreGrad : nullptr;
  r.captures = const_cast<float *>(rowMajor(*captures, 2, buffer));
  r.numCaptures = captures->sizes[1];
  r.rows = captures->sizes[0];
  r.maskPerHead = hasMask == 2;
  return r;
}

template <class Tiles>
void regionsForward(const char *kernel, attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                    attn_memref2 *mask, attn_memref2 *captures, attn_memref4 *out,
                    attn_memref3 *lse, int64_t causal, int64_t hasMask, Window window,
                    int64_t hasScore, float scale, attn_tile_fn score, attn_tile_fn maskFn) {
  std::vector<float> buffer;
  Regions r = regionsOf(kernel, captures, buffer, hasMask, window, hasScore, score, maskFn);
  flashForward<Tiles>(kernel, q, k, v, mask, out, lse, causal, scale, &r);
}

template <class Tiles>
void regionsBackward(const char *kernel, attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                     attn_memref2 *mask, attn_memref2 *captures, attn_memref4 *out,
                     attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse, attn_memref4 *dq,
                     attn_memref4 *dk, attn_memref4 *dv, attn_memref2 *d_captures, int64_t causal,
                     int64_t hasMask, Window window, int64_t hasScore, float scale,
                     attn_tile_fn score, attn_tile_grad_fn scoreGrad, attn_tile_fn maskFn) {
  std::vector<float> buffer;
  Regions r =
      regionsOf(kernel, captures, buffer, hasMask, window, hasScore, score, maskFn, scoreGrad);
  checkSizes(kernel, "d_captures", *d_captures, 2, {r.rows, r.numCaptures});
  RowMajorOut<attn_memref2> dC(*d_captures, 2);
  flashBackward<Tiles>(kernel, q, k, v, mask, out, lse, d_out, d_lse, dq, dk, dv, causal, scale, &r,
                       dC.data);
  dC.finish();
}
} // namespace

// q, k, v, mask, captures [1 or H, N] -> out, lse: the score and mask regions as tile functions.
extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_flash_attention_regions(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, int64_t causal, int64_t has_mask, int64_t window_left,
    int64_t window_right, int64_t has_score, float scale, attn_tile_fn score,
    attn_tile_fn mask_fn) {
  regionsForward<F32Tiles>("attn_rt_flash_attention_regions", q, k, v, mask, captures, out, lse,
                           causal, has_mask, {window_left, window_right}, has_score, scale, score,
                           mask_fn);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_flash_attention_regions_bf16(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, int64_t causal, int64_t has_mask, int64_t window_left,
    int64_t window_right, int64_t has_score, float scale, attn_tile_fn score,
    attn_tile_fn mask_fn) {
  regionsForward<Bf16Tiles>("attn_rt_flash_attention_regions_bf16", q, k, v, mask, captures, out,
                            lse, causal, has_mask, {window_left, window_right}, has_score, scale,
                            score, mask_fn);
}

// ... and d_out, d_lse -> dq, dk, dv, d_captures [1 or H, N].
extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_flash_attention_regions_backward(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse,
    attn_memref4 *dq, attn_memref4 *dk, attn_memref4 *dv, attn_memref2 *d_captures, int64_t causal,
    int64_t has_mask, int64_t window_left, int64_t window_right, int64_t has_score, float scale,
    attn_tile_fn score, attn_tile_grad_fn score_grad, attn_tile_fn mask_fn) {
  regionsBackward<F32Tiles>("attn_rt_flash_attention_regions_backward", q, k, v, mask, captures,
                            out, lse, d_out, d_lse, dq, dk, dv, d_captures, causal, has_mask,
                            {window_left, window_right}, has_score, scale, score, score_grad,
                            mask_fn);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_flash_attention_regions_backward_bf16(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse,
    attn_memref4 *dq, attn_memref4 *dk, attn_memref4 *dv, attn_memref2 *d_captures, int64_t causal,
    int64_t has_mask, int64_t window_left, int64_t window_right, int64_t has_score, float scale,
    attn_tile_fn score, attn_tile_grad_fn score_grad, attn_tile_fn mask_fn) {
  regionsBackward<Bf16Tiles>("attn_rt_flash_attention_regions_backward_bf16", q, k, v, mask,
                             captures, out, lse, d_out, d_lse, dq, dk, dv, d_captures, causal,
                             has_mask, {window_left, window_right}, has_score, scale, score,
                             score_grad, mask_fn);
}
