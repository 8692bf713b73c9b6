// oneDNN implementations of the kernels declared in attn/kernels.h.
//
// Each memref descriptor becomes a dnnl::memory::desc with the memref's sizes and strides (in
// elements) wrapped around the caller's pointer (aligned + offset), so views need no copies.
// A transpose is just the last two dims/strides of the desc swapped. Primitives are cached by
// the descriptors, because compiled loops call the same kernel with the same shapes many times
// and creating a oneDNN primitive costs far more than executing a small one.
//
// The _bf16 kernels (attn-precision's bf16 products) take bf16 factors and give an f32 result:
// oneDNN's bf16 matmul (avx512_core_bf16) multiplies them with f32 accumulation. The factors
// come rounded by compiled code (attn-round-bf16-factors), once per value, where a kernel
// rounding its f32 factors would round an activation for its forward product and again for
// its weight's gradient. (oneDNN 2.6 ignores fpmath_mode::bf16 on f32 operands on this ISA:
// the rounding must be explicit somewhere.)
//
// The _int8 dense kernel (attn-precision's int8 policy, inference only) quantises the weight
// per output column once and keeps that copy for as long as the weight's buffer lives (the
// runtime's allocator tells it when the buffer is freed, attn/Alloc.h); see dense_int8 below.
//
// These functions are called from compiled code through a C ABI: they must not throw. Invalid
// shapes or a oneDNN failure print a message to stderr and abort.
#include "attn/cpu/Matmul.h"
#include "attn/kernels.h"

#include "Memref.h"
#include "OneDNN.h"

#include "attn/Alloc.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#define ATTN_EXPORT __attribute__((visibility("default")))

namespace attn::cpu {
namespace {

using dims = dnnl::memory::dims;

[[noreturn]] void fail(const char *kernel, const std::string &msg) {
  std::fprintf(stderr, "attn runtime: %s: %s\n", kernel, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string dimsStr(const dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// A tensor view in oneDNN terms: logical dims and element strides.
struct View {
  dims sizes;
  dims strides;
};

template <typename Memref> View viewOf(const Memref &m, int rank) {
  View v{dims(m.sizes, m.sizes + rank), dims(m.strides, m.strides + rank)};
  return v;
}

// Swaps the last two dims: op(a) = a^T without touching data.
void transposeLast2(View &v) {
  size_t r = v.sizes.size();
  std::swap(v.sizes[r - 1], v.sizes[r - 2]);
  std::swap(v.strides[r - 1], v.strides[r - 2]);
}

// The stride of a size-1 dim never affects addressing, but MLIR may give it any value and
// oneDNN uses strides to recognise plain (gemm-able) layouts. Rewrite such strides to what a
// dense row-major layout over the inner dims would have, innermost first.
void canonicaliseUnitStrides(View &v) {
  for (size_t i = v.sizes.size(); i-- > 0;) {
    if (v.sizes[i] != 1)
      continue;
    int64_t s = 1;
    for (size_t j = i + 1; j < v.sizes.size(); ++j)
      s = std::max<int64_t>(s, v.strides[j] * v.sizes[j]);
    v.strides[i] = s;
  }
}

dnnl::memory::desc mdOf(const View &v,
                        dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  return dnnl::memory::desc(v.sizes, type, v.strides);
}

// The number type of a product's factors, from their memrefs' (attn-precision).
template <typename Memref> constexpr dnnl::memory::data_type factorType() {
  using Element = std::remove_pointer_t<decltype(Memref::aligned)>;
  return std::is_same_v<Element, float> ? dnnl::memory::data_type::f32
                                        : dnnl::memory::data_type::bf16;
}

using onednn::engine;
using onednn::userScratchpad;
using onednn::Key;

void appendView(Key &key, const View &v) {
  key.push_back(static_cast<int64_t>(v.sizes.size()));
  key.insert(key.end(), v.sizes.begin(), v.sizes.end());
  key.insert(key.end(), v.strides.begin(), v.strides.end());
}

// A matmul primitive and the scratchpad it needs per call.
struct Cached {
  dnnl::matmul prim;
  dnnl::memory::desc scratch;
};

// The cached primitive for `key`, made from `make()` (a primitive_desc) on a miss.
template <typename Make> std::shared_ptr<Cached> lookup(const Key &key, Make make) {
  return onednn::cached<Cached>(key, [&] {
    dnnl::matmul::primitive_desc pd = make();
    return Cached{dnnl::matmul(pd), pd.scratchpad_desc()};
  });
}

void execute(const Cached &c, std::unordered_map<int, dnnl::memory> args) {
  onednn::execute(c.prim, std::move(args), c.scratch);
}

template <typename T> void *dataOf(const T *aligned, int64_t offset) {
  return const_cast<T *>(aligned + offset);
}

// Below this many flops a matmul runs on one thread: oneDNN's OpenMP fork/join costs more than
// it saves (measured: a [32,32]x[32,32] matmul takes ~1.3 us on one thread, ~8 us on two), and
// recurrent models make hundreds of such calls per step. Primitives for such shapes are also
// created on one thread, since oneDNN may size its work split when it creates a primitive.
constexpr double kSmallFlops = 2.0 * 1024 * 1024;

// Runs `body` with OpenMP limited to one thread when `flops` is small (restored on the way
// out, also when oneDNN throws).
template <typename Body> void withThreadsFor(double flops, Body body) {
  struct Restore {
    int threads;
    ~Restore() {
      if (threads > 0)
        omp_set_num_threads(threads);
    }
  } restore{0};
  if (flops < kSmallFlops && !omp_in_parallel()) {
    restore.threads = omp_get_max_threads();
    omp_set_num_threads(1);
  }
  body();
}

bool anyZero(const View &v) {
  return std::any_of(v.sizes.begin(), v.sizes.end(), [](int64_t d) { return d == 0; });
}

//===- int8 ----------------------------------------------------------------------------===//

// Rounds to nearest (ties away from zero) in a form the compiler vectorises; |v| <= 127.
inline int8_t toInt8(float v) {
  return static_cast<int8_t>(static_cast<int>(v + (v < 0 ? -0.5f : 0.5f)));
}

// x [M, K] (a view at `data`) quantised per row: q [M, K] row-major, scales [M] (s[m] =
// max_k |x[m, k]| / 127). A weight's columns are the rows of its transposed view.
void quantiseRows(const View &x, const float *data, int8_t *q, float *scales) {
  const int64_t M = x.sizes[0], K = x.sizes[1], sm = x.strides[0], sk = x.strides[1];
  for (int64_t m = 0; m < M; ++m) {
    const float *row = data + m * sm;
    int8_t *out = q + m * K;
    float amax = 0;
    if (sk == 1) {
#pragma omp simd reduction(max : amax)
      for (int64_t k = 0; k < K; ++k)
        amax = std::max(amax, std::fabs(row[k]));
    } else {
      for (int64_t k = 0; k < K; ++k)
        amax = std::max(amax, std::fabs(row[k * sk]));
    }
    float scale = amax > 0 ? amax / 127.0f : 1.0f, inv = 1.0f / scale;
    scales[m] = scale;
    if (sk == 1) {
#pragma omp simd
      for (int64_t k = 0; k < K; ++k)
        out[k] = toInt8(row[k] * inv);
    } else {
      for (int64_t k = 0; k < K; ++k)
        out[k] = toInt8(row[k * sk] * inv);
    }
  }
}

// A weight's int8 copy: w [K, N] quantised per output column n with scale s[n] = max_k
// |w[k, n]| / 127, in the layouts the primitives asked for (oneDNN's blocked VNNI layout, with
// the compensation its s8 x s8 products need), made from `plain` on first use of each.
struct Int8Weight {
  std::vector<int8_t> plain; // [K, N] column-major: row n of the transposed view is column n
  std::vector<float> scales; // [N]
  std::mutex mutex;          // guards `packed`
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> packed;

  // The copy in `layout` (made once, then shared by every call that asks for it).
  dnnl::memory in(const dnnl::memory::desc &layout, int64_t K, int64_t N) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[desc, memory] : packed)
      if (desc == layout)
        return memory;
    dnnl::memory::desc from({K, N}, dnnl::memory::data_type::s8, dims{1, K});
    dnnl::memory src(from, engine(), plain.data()), dst(layout, engine());
    dnnl::reorder(src, dst).execute(onednn::stream(), src, dst);
    onednn::stream().wait();
    packed.emplace_back(layout, dst);
    return dst;
  }
};

// The int8 copies, by the weight's buffer (the block bufferAlloc gave: a memref's `allocated`)
// and its view into it (address and strides: a slice of a parameter is a view of its buffer).
// A buffer's copies are dropped when it is freed (forgetFreed, the allocator's free
// listener; a constant's buffer is never freed, nor written): compiled code never
// writes a parameter, and the runtime replaces a parameter by a new tensor rather than
// writing it, so while a buffer lives its contents are the ones quantised.
struct Int8Weights {
  std::mutex mutex;
  std::atomic<size_t> size{0};
  std::unordered_map<const void *, std::vector<std::pair<Key, std::shared_ptr<Int8Weight>>>>
      byAddress;
};

Int8Weights &int8Weights() {
  static Int8Weights *weights = new Int8Weights; // never destroyed: frees run at exit too
  return *weights;
}

void forgetFreed(void *p) {
  Int8Weights &w = int8Weights();
  if (w.size.load(std::memory_order_relaxed) == 0)
    return;
  std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.byAddress.find(p);
  if (it == w.byAddress.end())
    return;
  w.size -= it->second.size();
  w.byAddress.erase(it);
}

// w: a [K, N] view at `data`, in the buffer `block`.
std::shared_ptr<Int8Weight> int8Weight(const View &w, const void *block, const float *data) {
  static const bool listening = (setFreeListener(forgetFreed), true);
  (void)listening;
  Int8Weights &cache = int8Weights();
  Key key{reinterpret_cast<intptr_t>(data)};
  appendView(key, w);
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    for (auto &[k, entry] : cache.byAddress[block])
      if (k == key)
        return entry;
  }
  const int64_t K = w.sizes[0], N = w.sizes[1];
  auto entry = std::make_shared<Int8Weight>();
  entry->plain.resize(K * N);
  entry->scales.resize(N);
  quantiseRows(View{{N, K}, {w.strides[1], w.strides[0]}}, data, entry->plain.data(),
               entry->scales.data());
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.byAddress[block].emplace_back(key, entry);
  ++cache.size;
  return entry;
}

// An int8 matmul primitive: q [M, K] s8 x the weight's s8 copy, summed in int32 and scaled
// per column by the weight's scales into the f32 y.
struct CachedInt8 {
  dnnl::matmul prim;
  dnnl::memory::desc scratch, weights;
};

} // namespace

size_t cachedPrimitiveCount() { return onednn::cachedCount(); }

// Ties to even; a NaN stays a NaN (its payload's top bits, quieted), as vcvtneps2bf16 does.
ATTN_ROW_KERNEL_16 void roundToBf16(const float *src, uint16_t *dst, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &src[i], sizeof bits);
    bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
    dst[i] = nan ? static_cast<uint16_t>((bits >> 16) | 0x40u)
                 : static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
}

void clearPrimitiveCache() { onednn::clearCache(); }

} // namespace attn::cpu

using namespace attn::cpu;

// a: [Ba, M, K] (memref [Ba, K, M] when trans_a), b: [Bb, K, N] (memref [Bb, N, K] when
// trans_b), c: [B, M, N]; Ba, Bb in {1, B}.
template <typename Factor>
static void matmul(const char *kName, Factor *a, Factor *b, attn_memref3 *c, int64_t trans_a,
                   int64_t trans_b) {
  constexpr dnnl::memory::data_type kType = factorType<Factor>();
  View va = viewOf(*a, 3), vb = viewOf(*b, 3), vc = viewOf(*c, 3);
  if (trans_a)
    transposeLast2(va);
  if (trans_b)
    transposeLast2(vb);

  const int64_t B = vc.sizes[0], M = vc.sizes[1], N = vc.sizes[2];
  const int64_t K = va.sizes[2];
  bool ok = va.sizes[1] == M && vb.sizes[1] == K && vb.sizes[2] == N &&
            (va.sizes[0] == B || va.sizes[0] == 1) && (vb.sizes[0] == B || vb.sizes[0] == 1);
  if (!ok)
    fail(kName, "incompatible shapes: op(a) " + dimsStr(va.sizes) + " x op(b) " +
                    dimsStr(vb.sizes) + " -> c " + dimsStr(vc.sizes));
  if (anyZero(vc))
    return;
  if (K == 0) { // an empty sum: oneDNN rejects K = 0, the answer is zeros
    for (int64_t i = 0; i < B; ++i)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n)
          c->aligned[c->offset + i * vc.strides[0] + m * vc.strides[1] + n * vc.strides[2]] = 0;
    return;
  }
  canonicaliseUnitStrides(va);
  canonicaliseUnitStrides(vb);
  canonicaliseUnitStrides(vc);

  double flops = 2.0 * B * M * N * K;
  try {
    withThreadsFor(flops, [&] {
      Key key{kType == dnnl::memory::data_type::bf16 ? onednn::kMatmulBf16 : onednn::kMatmul};
      appendView(key, va);
      appendView(key, vb);
      appendView(key, vc);
      dnnl::memory memA(mdOf(va, kType), engine(), dataOf(a->aligned, a->offset));
      dnnl::memory memB(mdOf(vb, kType), engine(), dataOf(b->aligned, b->offset));
      dnnl::memory memC(mdOf(vc), engine(), dataOf(c->aligned, c->offset));
      std::shared_ptr<Cached> prim = lookup(key, [&] {
        dnnl::matmul::desc d(memA.get_desc(), memB.get_desc(), memC.get_desc());
        return dnnl::matmul::primitive_desc(d, userScratchpad(), engine());
      });
      execute(*prim, {{DNNL_ARG_SRC, memA}, {DNNL_ARG_WEIGHTS, memB}, {DNNL_ARG_DST, memC}});
    });
  } catch (const dnnl::error &e) {
    fail(kName, std::string("oneDNN error: ") + e.what() + " (op(a) " + dimsStr(va.sizes) +
                    ", op(b) " + dimsStr(vb.sizes) + ", c " + dimsStr(vc.sizes) + ")");
  }
}

// x: [M, K], w: [K, N], bias: [N], y: [M, N]; y = x w + bias (the bias added in f32).
template <typename Factor>
static void dense(const char *kName, Factor *x, Factor *w, attn_memref1 *bias, attn_memref2 *y) {
  constexpr dnnl::memory::data_type kType = factorType<Factor>();
  View vx = viewOf(*x, 2), vw = viewOf(*w, 2), vy = viewOf(*y, 2);
  // oneDNN wants the bias with the dst's rank: [1, N]. oneDNN 2.6's gemm-based matmul reads
  // the bias as dense whatever its md strides say, so a strided bias view (rare, and only N
  // floats) is first copied into a contiguous buffer.
  const float *biasData = bias->aligned + bias->offset;
  std::vector<float> biasCopy;
  if (bias->strides[0] != 1 && bias->sizes[0] > 1) {
    biasCopy.resize(bias->sizes[0]);
    for (int64_t n = 0; n < bias->sizes[0]; ++n)
      biasCopy[n] = biasData[n * bias->strides[0]];
    biasData = biasCopy.data();
  }
  View vbias{{1, bias->sizes[0]}, {bias->sizes[0], 1}};

  const int64_t M = vy.sizes[0], N = vy.sizes[1], K = vx.sizes[1];
  bool ok = vx.sizes[0] == M && vw.sizes[0] == K && vw.sizes[1] == N && vbias.sizes[1] == N;
  if (!ok)
    fail(kName, "incompatible shapes: x " + dimsStr(vx.sizes) + ", w " + dimsStr(vw.sizes) +
                    ", bias " + dimsStr({bias->sizes[0]}) + " -> y " + dimsStr(vy.sizes));
  if (anyZero(vy))
    return;
  if (K == 0) { // empty sum: y = bias broadcast over rows
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        y->aligned[y->offset + m * vy.strides[0] + n * vy.strides[1]] = biasData[n];
    return;
  }
  canonicaliseUnitStrides(vx);
  canonicaliseUnitStrides(vw);
  canonicaliseUnitStrides(vy);

  double flops = 2.0 * M * N * K;
  try {
    withThreadsFor(flops, [&] {
      Key key{kType == dnnl::memory::data_type::bf16 ? onednn::kDenseBf16 : onednn::kDense};
      appendView(key, vx);
      appendView(key, vw);
      appendView(key, vbias);
      appendView(key, vy);
      dnnl::memory memX(mdOf(vx, kType), engine(), dataOf(x->aligned, x->offset));
      dnnl::memory memW(mdOf(vw, kType), engine(), dataOf(w->aligned, w->offset));
      dnnl::memory memBias(mdOf(vbias), engine(), dataOf(biasData, 0));
      dnnl::memory memY(mdOf(vy), engine(), dataOf(y->aligned, y->offset));
      std::shared_ptr<Cached> prim = lookup(key, [&] {
        dnnl::matmul::desc d(memX.get_desc(), memW.get_desc(), memBias.get_desc(),
                             memY.get_desc());
        return dnnl::matmul::primitive_desc(d, userScratchpad(), engine());
      });
      execute(*prim, {{DNNL_ARG_SRC, memX},
                     {DNNL_ARG_WEIGHTS, memW},
                     {DNNL_ARG_BIAS, memBias},
                     {DNNL_ARG_DST, memY}});
    });
  } catch (const dnnl::error &e) {
    fail(kName, std::string("oneDNN error: ") + e.what() + " (x " + dimsStr(vx.sizes) + ", w " +
                    dimsStr(vw.sizes) + ", y " + dimsStr(vy.sizes) + ")");
  }
}

// x: [M, K], w: [K, N] (in the buffer wBlock), bias: [N] (or none), y: [M, N], views at x, w,
// bias, y;
// y[m, n] = sx[m] sw[n] sum_k qx[m, k] qw[k, n] + bias[n], with qx, sx the rows of x quantised
// at this call and qw, sw the weight's kept int8 copy (int8Weight).
static void int8Product(const char *kName, View vx, const float *x, const View &vw,
                        const void *wBlock, const float *w, const float *bias, int64_t biasStride,
                        View vy, float *y) {
  const int64_t M = vy.sizes[0], N = vy.sizes[1], K = vx.sizes[1];
  const int64_t sm = vy.strides[0], sn = vy.strides[1];
  auto biasAt = [&](int64_t n) { return bias ? bias[n * biasStride] : 0.0f; };
  if (anyZero(vy))
    return;
  if (K == 0) { // empty sum: y = bias broadcast over rows
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        y[m * sm + n * sn] = biasAt(n);
    return;
  }
  canonicaliseUnitStrides(vy);

  static thread_local std::vector<int8_t, attn::BufferAllocator<int8_t>> qx;
  static thread_local std::vector<float> sx;
  std::shared_ptr<Int8Weight> weight = int8Weight(vw, wBlock, w);
  qx.resize(M * K);
  sx.resize(M);
  quantiseRows(vx, x, qx.data(), sx.data());
  try {
    withThreadsFor(2.0 * M * N * K, [&] {
      Key key{onednn::kDenseInt8};
      appendView(key, vy);
      key.push_back(K);
      dnnl::memory::desc src({M, K}, dnnl::memory::data_type::s8, dims{K, 1});
      std::shared_ptr<CachedInt8> prim = onednn::cached<CachedInt8>(key, [&] {
        dnnl::memory::desc anyWeights({K, N}, dnnl::memory::data_type::s8,
                                      dnnl::memory::format_tag::any);
        dnnl::primitive_attr attr = userScratchpad();
        attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, anyWeights, mdOf(vy)), attr,
                                        engine());
        return CachedInt8{dnnl::matmul(pd), pd.scratchpad_desc(), pd.weights_desc()};
      });
      dnnl::memory memX(src, engine(), qx.data());
      dnnl::memory memW = weight->in(prim->weights, K, N);
      dnnl::memory memY(mdOf(vy), engine(), y);
      dnnl::memory memScales({{N}, dnnl::memory::data_type::f32, dims{1}}, engine(),
                             weight->scales.data());
      onednn::execute(prim->prim,
                      {{DNNL_ARG_SRC, memX},
                       {DNNL_ARG_WEIGHTS, memW},
                       {DNNL_ARG_DST, memY},
                       {DNNL_ARG_ATTR_OUTPUT_SCALES, memScales}},
                      prim->scratch);
    });
  } catch (const dnnl::error &e) {
    fail(kName, std::string("oneDNN error: ") + e.what() + " (x " + dimsStr(vx.sizes) + ", w " +
                    dimsStr(vw.sizes) + ", y " + dimsStr(vy.sizes) + ")");
  }
  // The rows' scales and the bias (oneDNN's bias would be added before the row scale).
  for (int64_t m = 0; m < M; ++m) {
    float *out = y + m * sm, s = sx[m];
    if (sn == 1 && bias && biasStride == 1) {
#pragma omp simd
      for (int64_t n = 0; n < N; ++n)
        out[n] = out[n] * s + bias[n];
    } else {
      for (int64_t n = 0; n < N; ++n)
        out[n * sn] = out[n * sn] * s + biasAt(n);
    }
  }
}

// x: [M, K], w: [K, N], bias: [N], y: [M, N].
static void denseInt8(attn_memref2 *x, attn_memref2 *w, attn_memref1 *bias, attn_memref2 *y) {
  View vx = viewOf(*x, 2), vw = viewOf(*w, 2), vy = viewOf(*y, 2);
  const int64_t M = vy.sizes[0], N = vy.sizes[1], K = vx.sizes[1];
  if (vx.sizes[0] != M || vw.sizes[0] != K || vw.sizes[1] != N || bias->sizes[0] != N)
    fail("attn_rt_dense_int8", "incompatible shapes: x " + dimsStr(vx.sizes) + ", w " +
                                   dimsStr(vw.sizes) + ", bias " + dimsStr({bias->sizes[0]}) +
                                   " -> y " + dimsStr(vy.sizes));
  int8Product("attn_rt_dense_int8", vx, x->aligned + x->offset, vw, w->allocated,
              w->aligned + w->offset, bias->aligned + bias->offset, bias->strides[0], vy,
              y->aligned + y->offset);
}

// a: [Ba, M, K], b: one weight [1, K, N] (memref [1, N, K] when trans_b), c: [B, M, N]: the
// tied output layer's logits against the embedding table, say. The batches are one matrix of
// B M rows where the strides allow (a decoding step's [rows, 1, K]), else one product each.
static void matmulInt8(attn_memref3 *a, attn_memref3 *b, attn_memref3 *c, int64_t trans_a,
                       int64_t trans_b) {
  const char *kName = "attn_rt_matmul_int8";
  View va = viewOf(*a, 3), vb = viewOf(*b, 3), vc = viewOf(*c, 3);
  if (trans_b)
    transposeLast2(vb);
  const int64_t B = vc.sizes[0], M = vc.sizes[1], N = vc.sizes[2], K = va.sizes[2];
  if (trans_a || vb.sizes[0] != 1 || va.sizes[0] != B || va.sizes[1] != M || vb.sizes[1] != K ||
      vb.sizes[2] != N)
    fail(kName, "expects a [B, M, K] x one [K, N] weight (no transposed a): op(a) " +
                    dimsStr(va.sizes) + (trans_a ? " transposed" : "") + " x op(b) " +
                    dimsStr(vb.sizes) + " -> c " + dimsStr(vc.sizes));
  View vw{{K, N}, {vb.strides[1], vb.strides[2]}};
  const float *x = a->aligned + a->offset, *w = b->aligned + b->offset;
  float *y = c->aligned + c->offset;
  if (M == 1) { // the batches are the rows
    int8Product(kName, View{{B, K}, {va.strides[0], va.strides[2]}}, x, vw, b->allocated, w,
                nullptr, 0, View{{B, N}, {vc.strides[0], vc.strides[2]}}, y);
    return;
  }
  bool flat = B == 1 || (va.strides[0] == M * va.strides[1] && vc.strides[0] == M * vc.strides[1]);
  if (flat) {
    int8Product(kName, View{{B * M, K}, {va.strides[1], va.strides[2]}}, x, vw, b->allocated, w,
                nullptr, 0, View{{B * M, N}, {vc.strides[1], vc.strides[2]}}, y);
    return;
  }
  for (int64_t i = 0; i < B; ++i)
    int8Product(kName, View{{M, K}, {va.strides[1], va.strides[2]}}, x + i * va.strides[0], vw,
                b->allocated, w, nullptr, 0, View{{M, N}, {vc.strides[1], vc.strides[2]}},
                y + i * vc.strides[0]);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_matmul(attn_memref3 *a, attn_memref3 *b,
                                                        attn_memref3 *c, int64_t trans_a,
                                                        int64_t trans_b) {
  matmul("attn_rt_matmul", a, b, c, trans_a, trans_b);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_matmul_bf16(attn_memref_bf16_3 *a,
                                                             attn_memref_bf16_3 *b, attn_memref3 *c,
                                                             int64_t trans_a, int64_t trans_b) {
  matmul("attn_rt_matmul_bf16", a, b, c, trans_a, trans_b);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_dense(attn_memref2 *x, attn_memref2 *w,
                                                       attn_memref1 *bias, attn_memref2 *y) {
  dense("attn_rt_dense", x, w, bias, y);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_dense_bf16(attn_memref_bf16_2 *x,
                                                            attn_memref_bf16_2 *w,
                                                            attn_memref1 *bias, attn_memref2 *y) {
  dense("attn_rt_dense_bf16", x, w, bias, y);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_dense_int8(attn_memref2 *x, attn_memref2 *w,
                                                            attn_memref1 *bias, attn_memref2 *y) {
  denseInt8(x, w, bias, y);
}

extern "C" ATTN_EXPORT void _mlir_ciface_attn_rt_matmul_int8(attn_memref3 *a, attn_memref3 *b,
                                                             attn_memref3 *c, int64_t trans_a,
                                                             int64_t trans_b) {
  matmulInt8(a, b, c, trans_a, trans_b);
}
