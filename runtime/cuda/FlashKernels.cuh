// The fused attention kernels (attn/cuda/FlashAttention.h has the contract): the dot-product
// family of attn.fused_attention, FlashAttention-2's algorithm on tensor cores.
//
// Every kernel runs 4 warps; a warp owns 16 rows of its block's 64 (queries in the forward and
// in dQ, keys in dK/dV), so the per-warp products are mma.sync.m16n8k16 with f32 accumulators
// and no warp needs another's scores. Tiles are staged in shared memory by cp.async, each row
// padded by 16 bytes so that ldmatrix's eight row addresses fall in distinct banks.
//
//   forward  (grid: query tiles x B*H)  S = Q K^T, online softmax, O += P V; out, lse.
//   delta    (grid: rows / 4)           delta[i] = dO[i] . O[i] - d_lse[i]
//   dq       (grid: query tiles x B*H)  P = exp(S - lse), dS = P (dO V^T - delta), dQ += dS K
//   dkdv     (grid: key tiles x B*H)    the same P and dS transposed, from the keys' side:
//                                       dV += P^T dO, dK += dS^T Q.
//
// The backward is FlashAttention-2's with dQ in a kernel of its own instead of atomics into a
// shared f32 buffer: it recomputes S and dP once more (7 tile products instead of 5), and in
// exchange every gradient is written once by one block, so a training step gives the same bits
// on every run, as the CPU kernels do.
//
// Scores are kept in the log2 domain (scaled by scale * log2 e) so that one ex2.approx serves
// every exponential; lse is converted back to the natural log at the boundary.
//
// Device code only, over the primitives of Warp.cuh: flash_attention.cu includes that file
// first and launches these kernels; tests/cuda's emulator includes its own CPU versions first.
#ifndef ATTN_RUNTIME_CUDA_FLASHKERNELS_CUH
#define ATTN_RUNTIME_CUDA_FLASHKERNELS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace attn::cuda::flash {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kBlockRows = kWarps * 16; // the rows a block owns: 64 queries or 64 keys
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

//===- per-element-type pieces: packing and the MMA instruction ----------------------------===//

template <typename T> struct Elem;

template <> struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
  }
  static __device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
  // c[16x8] += a[16x16] b[16x8]
  static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0,
                                             uint32_t b1) {
    mmaBf16(c, a, b0, b1);
  }
};

template <> struct Elem<__half> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
  }
  static __device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
  static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0,
                                             uint32_t b1) {
    mmaF16(c, a, b0, b1);
  }
};

//===- shared memory tiles and fragments --------------------------------------------------===//

// Rows [0, Rows) of a [rows][D] global tile into shared memory with row stride D + 8; rows at
// and past `validRows` read as zeros.
template <typename T, int D, int Rows>
__device__ __forceinline__ void stageTile(T *shared, const T *global, int validRows) {
  constexpr int kChunks = D / 8; // 16-byte chunks per row
  for (int c = threadIdx.x; c < Rows * kChunks; c += kThreads) {
    int row = c / kChunks, col = (c % kChunks) * 8;
    bool valid = row < validRows;
    copyAsync16(shared + row * (D + 8) + col, valid ? global + int64_t(row) * D + col : global,
                valid);
  }
}

// The A operand (16 x 16, row-major) at (row0, col0) of a shared tile with row stride ld.
// Lanes 8m..8m+7 address matrix m: m = 0 rows 0-7 / cols 0-7, 1 rows 8-15 / cols 0-7,
// 2 rows 0-7 / cols 8-15, 3 rows 8-15 / cols 8-15: mma's a0..a3 in that order.
template <typename T>
__device__ __forceinline__ void loadA(uint32_t a[4], const T *tile, int ld, int row0, int col0) {
  int lane = threadIdx.x & 31, m = lane >> 3;
  loadMatrices(a, tile + (row0 + (m & 1) * 8 + (lane & 7)) * ld + col0 + (m >> 1) * 8);
}

// B operands of two adjacent n8 tiles (b[0..1] for n0..n0+7, b[2..3] for n0+8..n0+15) over
// k0..k0+15, from a shared tile stored [n][k] (keys by head dim for Q K^T: B = K^T).
template <typename T>
__device__ __forceinline__ void loadBFromNK(uint32_t b[4], const T *tile, int ld, int n0, int k0) {
  int lane = threadIdx.x & 31, m = lane >> 3;
  loadMatrices(b, tile + (n0 + (m >> 1) * 8 + (lane & 7)) * ld + k0 + (m & 1) * 8);
}

// The same from a shared tile stored [k][n] (keys by head dim for P V: B = V), transposed by
// ldmatrix on the way.
template <typename T>
__device__ __forceinline__ void loadBFromKN(uint32_t b[4], const T *tile, int ld, int k0, int n0) {
  int lane = threadIdx.x & 31, m = lane >> 3;
  loadMatricesTransposed(b, tile + (k0 + (m & 1) * 8 + (lane & 7)) * ld + n0 + (m >> 1) * 8);
}

//===- accumulator fragments ---------------------------------------------------------------===//
//
// A warp's 16 x (8 N) f32 accumulator is acc[N][4]: lane (g = lane / 4, t = lane % 4) holds
// rows g (elements 0, 1) and g + 8 (elements 2, 3), columns 8 n + 2 t and 8 n + 2 t + 1.

// acc = A B for A the warp's 16 x (16 K) rows in registers, B from a shared [n][k] tile.
template <typename T, int K, int N>
__device__ __forceinline__ void productNK(float acc[N][4], const uint32_t a[K][4], const T *tile,
                                          int ld) {
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[n][e] = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int n = 0; n < N; n += 2) {
      uint32_t b[4];
      loadBFromNK(b, tile, ld, n * 8, k * 16);
      Elem<T>::mma(acc[n], a[k], b[0], b[1]);
      Elem<T>::mma(acc[n + 1], a[k], b[2], b[3]);
    }
}

// The same with A's fragments read from a shared tile (rows row0.., stride ld) as it goes.
template <typename T, int K, int N>
__device__ __forceinline__ void productSharedNK(float acc[N][4], const T *aTile, int row0,
                                                const T *tile, int ld) {
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[n][e] = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    uint32_t a[4];
    loadA(a, aTile, ld, row0, k * 16);
#pragma unroll
    for (int n = 0; n < N; n += 2) {
      uint32_t b[4];
      loadBFromNK(b, tile, ld, n * 8, k * 16);
      Elem<T>::mma(acc[n], a, b[0], b[1]);
      Elem<T>::mma(acc[n + 1], a, b[2], b[3]);
    }
  }
}

// acc += P B for P a 16 x (8 KN) accumulator of this warp (rounded to T: an accumulator's
// layout is the A operand's, two n8 tiles making one k16 step) and B from a shared [k][n] tile.
template <typename T, int KN, int N>
__device__ __forceinline__ void accumulateKN(float acc[N][4], const float p[KN][4], const T *tile,
                                             int ld) {
#pragma unroll
  for (int k = 0; k < KN / 2; ++k) {
    const uint32_t a[4] = {Elem<T>::pack(p[2 * k][0], p[2 * k][1]),
                           Elem<T>::pack(p[2 * k][2], p[2 * k][3]),
                           Elem<T>::pack(p[2 * k + 1][0], p[2 * k + 1][1]),
                           Elem<T>::pack(p[2 * k + 1][2], p[2 * k + 1][3])};
#pragma unroll
    for (int n = 0; n < N; n += 2) {
      uint32_t b[4];
      loadBFromKN(b, tile, ld, k * 16, n * 8);
      Elem<T>::mma(acc[n], a, b[0], b[1]);
      Elem<T>::mma(acc[n + 1], a, b[2], b[3]);
    }
  }
}

// Rows `row` (and row + 8) of a warp's accumulator to global [rows][D], scaled, rounded to T.
template <typename T, int N>
__device__ __forceinline__ void storeRows(T *global, const float acc[N][4], int row, int rows,
                                          float scale0, float scale1) {
  int t = threadIdx.x & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    int r = row + half * 8;
    if (r >= rows)
      continue;
    float s = half ? scale1 : scale0;
#pragma unroll
    for (int n = 0; n < N; ++n) {
      uint32_t bits = Elem<T>::pack(acc[n][2 * half] * s, acc[n][2 * half + 1] * s);
      memcpy(global + int64_t(r) * (N * 8) + n * 8 + 2 * t, &bits, sizeof bits);
    }
  }
}

struct Dims {
  int64_t heads, T, S;
  bool hasMask;
  float scaleLog2; // scale * log2 e
  float scale;
  // A local window (Luong's local attention): key j is seen by query i only if
  // |j - center[b, h, i]| <= window. window < 0: none (center is null).
  int64_t window;
  const float *center; // [B, H, T]
};

// Query `row`'s window center (0 without a window or past T).
__device__ __forceinline__ float centerOf(const Dims &d, int64_t bh, int64_t row) {
  return d.center && row < d.T ? d.center[bh * d.T + row] : 0.0f;
}

// Whether query i (its window centred at `center`) may see key j of batch row `mask` (null:
// every key).
template <bool Causal>
__device__ __forceinline__ bool allowed(const Dims &d, const float *mask, int64_t i, int64_t j,
                                        float center) {
  if (j >= d.S || i >= d.T)
    return false;
  if (Causal && j > i + d.S - d.T)
    return false;
  if (d.window >= 0 && fabsf(float(j) - center) > float(d.window))
    return false;
  return !mask || mask[j] != 0.0f;
}

// The key tiles (of `tile` keys) a causal block of queries [q0, q0 + 64) reaches: up to the
// last row's diagonal. All of them without `causal`.
__device__ __forceinline__ int keyTiles(const Dims &d, bool causal, int q0, int tile) {
  int64_t end = d.S;
  if (causal) {
    int64_t lastRow = (int64_t(q0) + kBlockRows < d.T ? int64_t(q0) + kBlockRows : d.T) - 1;
    end = end < lastRow + d.S - d.T + 1 ? end : lastRow + d.S - d.T + 1;
  }
  return end <= 0 ? 0 : int((end + tile - 1) / tile);
}

//===- forward -----------------------------------------------------------------------------===//

// q [B, H, T, D], k, v [B, H, S, D], mask [B, S] -> out [B, H, T, D], lse [B, H, T].
// Shared: K tile [64][D + 8], V tile [64][D + 8] (the Q tile passes through K's).
template <typename T, int D, bool Causal>
__global__ void __launch_bounds__(kThreads, 1)
    flashForward(Dims d, const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                 const float *__restrict__ keyMask, T *__restrict__ out, float *__restrict__ lse) {
  constexpr int kLd = D + 8, kKeys = 64;
  unsigned char *shared = dynamicShared();
  T *sK = reinterpret_cast<T *>(shared);
  T *sV = sK + kKeys * kLd;

  // Causal tiles further down see more keys: start those first.
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kBlockRows;
  const int64_t bh = blockIdx.y, b = bh / d.heads;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int row0 = q0 + warp * 16 + g; // this lane's rows: row0 and row0 + 8
  const T *kBase = k + bh * d.S * D, *vBase = v + bh * d.S * D;
  const float *mask = d.hasMask ? keyMask + b * d.S : nullptr;
  const float center[2] = {centerOf(d, bh, row0), centerOf(d, bh, row0 + 8)};

  // The warp's 16 query rows as A fragments, for the whole loop.
  stageTile<T, D, kBlockRows>(sK, q + (bh * d.T + q0) * D, int(d.T - q0));
  commitCopies();
  waitCopies<0>();
  syncBlock();
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    loadA(qf[kk], sK, kLd, warp * 16, kk * 16);
  syncBlock();

  float o[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  const int tiles = keyTiles(d, Causal, q0, kKeys);

  // Pipeline: K(j+1) loads during softmax(j) and P V(j); V(j+1) during the next Q K^T.
  if (tiles > 0) {
    stageTile<T, D, kKeys>(sK, kBase, int(d.S));
    commitCopies();
    stageTile<T, D, kKeys>(sV, vBase, int(d.S));
    commitCopies();
  }
  for (int j = 0; j < tiles; ++j) {
    const int kv0 = j * kKeys;
    waitCopies<1>(); // K(j) is in
    syncBlock();
    float s[kKeys / 8][4];
    productNK<T, D / 16, kKeys / 8>(s, qf, sK, kLd);
    syncBlock(); // every warp is done with K(j)
    if (j + 1 < tiles)
      stageTile<T, D, kKeys>(sK, kBase + int64_t(kv0 + kKeys) * D, int(d.S - kv0 - kKeys));
    commitCopies();

    // Masks are checked only on tiles that need them: padding, the diagonal, a key mask.
    const bool edge =
        mask || d.window >= 0 || kv0 + kKeys > d.S || (Causal && kv0 + kKeys - 1 > q0 + d.S - d.T);
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[n][e] * d.scaleLog2;
        if (edge && !allowed<Causal>(d, mask, row0 + (e >> 1) * 8, kv0 + n * 8 + 2 * t + (e & 1),
                                     center[e >> 1]))
          x = -INFINITY;
        s[n][e] = x;
      }
      // Online softmax per row; a lane's rows are shared by its quad (lanes 4g .. 4g + 3).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n)
        mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
      mx = fmaxf(mx, shuffleXor(mx, 1));
      mx = fmaxf(mx, shuffleXor(mx, 2));
      const float mNew = fmaxf(m[r], mx);
      // A row with nothing allowed so far keeps m = -inf; subtracting 0 keeps its p at 0.
      const float base = mNew == -INFINITY ? 0.0f : mNew;
      const float alpha = exp2Approx(m[r] - base);
      m[r] = mNew;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < kKeys / 8; ++n) {
        s[n][2 * r] = exp2Approx(s[n][2 * r] - base);
        s[n][2 * r + 1] = exp2Approx(s[n][2 * r + 1] - base);
        sum += s[n][2 * r] + s[n][2 * r + 1];
      }
      l[r] = l[r] * alpha + sum; // this lane's columns only; the quad's sum comes at the end
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][2 * r] *= alpha;
        o[n][2 * r + 1] *= alpha;
      }
    }

    waitCopies<1>(); // V(j) is in (K(j+1) may still be loading)
    syncBlock();
    accumulateKN<T, kKeys / 8, D / 8>(o, s, sV, kLd);
    syncBlock(); // every warp is done with V(j)
    if (j + 1 < tiles)
      stageTile<T, D, kKeys>(sV, vBase + int64_t(kv0 + kKeys) * D, int(d.S - kv0 - kKeys));
    commitCopies();
  }
  waitCopies<0>();

  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += shuffleXor(l[r], 1);
    l[r] += shuffleXor(l[r], 2);
    inv[r] = l[r] > 0.0f ? 1.0f / l[r] : 0.0f; // a row with no allowed key: out 0
    const int64_t row = row0 + r * 8;
    if (t == 0 && row < d.T)
      lse[bh * d.T + row] = l[r] > 0.0f ? m[r] * kLn2 + logf(l[r]) : 0.0f;
  }
  storeRows<T, D / 8>(out + bh * d.T * D, o, row0, int(d.T), inv[0], inv[1]);
}

//===- backward ----------------------------------------------------------------------------===//

// delta [rows] = rowsum(out * d_out) - d_lse: one warp per row of [rows][D].
template <typename T, int D>
__global__ void __launch_bounds__(kThreads, 1)
    backwardDelta(int64_t rows, const T *__restrict__ out, const T *__restrict__ dOut,
                  const float *__restrict__ dLse, float *__restrict__ delta) {
  const int64_t row = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows)
    return;
  float acc = 0.0f;
#pragma unroll
  for (int c = lane; c < D; c += 32)
    acc += Elem<T>::toFloat(out[row * D + c]) * Elem<T>::toFloat(dOut[row * D + c]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    acc += shuffleXor(acc, offset);
  if (lane == 0)
    delta[row] = acc - (dLse ? dLse[row] : 0.0f);
}

// dQ for a block of 64 queries: over key tiles of kKeys,
//   P = exp(S - lse), dS = P (dO V^T - delta), dQ += dS K;  dq = scale dQ.
// Shared: two areas of [64][D + 8]: Q and dO while their fragments are taken, then K and V.
template <typename T, int D, bool Causal, int kKeys>
__global__ void __launch_bounds__(kThreads, 1)
    flashBackwardDq(Dims d, const T *__restrict__ q, const T *__restrict__ k,
                    const T *__restrict__ v, const float *__restrict__ keyMask,
                    const float *__restrict__ lse, const T *__restrict__ dOut,
                    const float *__restrict__ delta, T *__restrict__ dq) {
  constexpr int kLd = D + 8;
  constexpr int kArea = (kKeys > kBlockRows ? kKeys : kBlockRows) * kLd;
  unsigned char *shared = dynamicShared();
  T *sK = reinterpret_cast<T *>(shared);
  T *sV = sK + kArea;

  const int q0 = (gridDim.x - 1 - blockIdx.x) * kBlockRows;
  const int64_t bh = blockIdx.y, b = bh / d.heads;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int row0 = q0 + warp * 16 + g;
  const T *kBase = k + bh * d.S * D, *vBase = v + bh * d.S * D;
  const float *mask = d.hasMask ? keyMask + b * d.S : nullptr;
  const float center[2] = {centerOf(d, bh, row0), centerOf(d, bh, row0 + 8)};

  stageTile<T, D, kBlockRows>(sK, q + (bh * d.T + q0) * D, int(d.T - q0));
  stageTile<T, D, kBlockRows>(sV, dOut + (bh * d.T + q0) * D, int(d.T - q0));
  commitCopies();
  waitCopies<0>();
  syncBlock();
  uint32_t qf[D / 16][4], dof[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    loadA(qf[kk], sK, kLd, warp * 16, kk * 16);
    loadA(dof[kk], sV, kLd, warp * 16, kk * 16);
  }
  float lse2[2], dl[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = row0 + r * 8;
    lse2[r] = row < d.T ? lse[bh * d.T + row] * kLog2e : 0.0f;
    dl[r] = row < d.T ? delta[bh * d.T + row] : 0.0f;
  }

  float acc[D / 8][4] = {};
  const int tiles = keyTiles(d, Causal, q0, kKeys);
  for (int j = 0; j < tiles; ++j) {
    const int kv0 = j * kKeys;
    syncBlock(); // the previous tile (or the Q, dO staging) is no longer read
    stageTile<T, D, kKeys>(sK, kBase + int64_t(kv0) * D, int(d.S - kv0));
    stageTile<T, D, kKeys>(sV, vBase + int64_t(kv0) * D, int(d.S - kv0));
    commitCopies();
    waitCopies<0>();
    syncBlock();

    float s[kKeys / 8][4], dp[kKeys / 8][4];
    productNK<T, D / 16, kKeys / 8>(s, qf, sK, kLd);
    productNK<T, D / 16, kKeys / 8>(dp, dof, sV, kLd);
#pragma unroll
    for (int n = 0; n < kKeys / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e >> 1;
        const float p =
            allowed<Causal>(d, mask, row0 + r * 8, kv0 + n * 8 + 2 * t + (e & 1), center[r])
                ? exp2Approx(s[n][e] * d.scaleLog2 - lse2[r])
                : 0.0f;
        s[n][e] = p * (dp[n][e] - dl[r]); // dS
      }
    accumulateKN<T, kKeys / 8, D / 8>(acc, s, sK, kLd);
  }
  storeRows<T, D / 8>(dq + bh * d.T * D, acc, row0, int(d.T), d.scale, d.scale);
}

// dK, dV for a block of 64 keys: over query tiles of kQueries, with the warp's 16 keys as
// rows (S^T = K Q^T, dP^T = V dO^T),
//   P^T = exp(S^T - lse), dV += P^T dO, dS^T = P^T (dP^T - delta), dK += dS^T Q;  dk = scale dK.
// Shared: K, V [64][D + 8]; Q, dO [kQueries][D + 8]; lse (log2 domain), delta and the window
// centers [kQueries].
template <typename T, int D, bool Causal, int kQueries>
__global__ void __launch_bounds__(kThreads, 1)
    flashBackwardDkDv(Dims d, const T *__restrict__ q, const T *__restrict__ k,
                      const T *__restrict__ v, const float *__restrict__ keyMask,
                      const float *__restrict__ lse, const T *__restrict__ dOut,
                      const float *__restrict__ delta, T *__restrict__ dk, T *__restrict__ dv) {
  constexpr int kLd = D + 8;
  unsigned char *shared = dynamicShared();
  T *sK = reinterpret_cast<T *>(shared);
  T *sV = sK + kBlockRows * kLd;
  T *sQ = sV + kBlockRows * kLd;
  T *sDo = sQ + kQueries * kLd;
  float *sLse = reinterpret_cast<float *>(sDo + kQueries * kLd);
  float *sDelta = sLse + kQueries;
  float *sCenter = sDelta + kQueries;

  const int kv0 = blockIdx.x * kBlockRows;
  const int64_t bh = blockIdx.y, b = bh / d.heads;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int key0 = kv0 + warp * 16 + g; // this lane's keys: key0 and key0 + 8
  const float *mask = d.hasMask ? keyMask + b * d.S : nullptr;

  stageTile<T, D, kBlockRows>(sK, k + (bh * d.S + kv0) * D, int(d.S - kv0));
  stageTile<T, D, kBlockRows>(sV, v + (bh * d.S + kv0) * D, int(d.S - kv0));
  commitCopies();

  float accK[D / 8][4] = {}, accV[D / 8][4] = {};
  // Causal: the first query that sees key kv0 is kv0 - (S - T).
  int64_t first = Causal ? kv0 - (d.S - d.T) : 0;
  first = first < 0 ? 0 : first / kQueries * kQueries;
  for (int64_t i0 = first; i0 < d.T; i0 += kQueries) {
    syncBlock(); // the previous query tile is no longer read
    stageTile<T, D, kQueries>(sQ, q + (bh * d.T + i0) * D, int(d.T - i0));
    stageTile<T, D, kQueries>(sDo, dOut + (bh * d.T + i0) * D, int(d.T - i0));
    for (int x = threadIdx.x; x < kQueries; x += kThreads) {
      const bool in = i0 + x < d.T;
      sLse[x] = in ? lse[bh * d.T + i0 + x] * kLog2e : 0.0f;
      sDelta[x] = in ? delta[bh * d.T + i0 + x] : 0.0f;
      sCenter[x] = centerOf(d, bh, i0 + x);
    }
    commitCopies();
    waitCopies<0>();
    syncBlock();

    float s[kQueries / 8][4], dp[kQueries / 8][4];
    productSharedNK<T, D / 16, kQueries / 8>(s, sK, warp * 16, sQ, kLd);
    productSharedNK<T, D / 16, kQueries / 8>(dp, sV, warp * 16, sDo, kLd);
#pragma unroll
    for (int n = 0; n < kQueries / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = n * 8 + 2 * t + (e & 1);
        const float p = allowed<Causal>(d, mask, i0 + col, key0 + (e >> 1) * 8, sCenter[col])
                            ? exp2Approx(s[n][e] * d.scaleLog2 - sLse[col])
                            : 0.0f;
        s[n][e] = p;                             // P^T
        dp[n][e] = p * (dp[n][e] - sDelta[col]); // dS^T
      }
    accumulateKN<T, kQueries / 8, D / 8>(accV, s, sDo, kLd);
    accumulateKN<T, kQueries / 8, D / 8>(accK, dp, sQ, kLd);
  }
  waitCopies<0>();
  storeRows<T, D / 8>(dk + bh * d.S * D, accK, key0, int(d.S), d.scale, d.scale);
  storeRows<T, D / 8>(dv + bh * d.S * D, accV, key0, int(d.S), 1.0f, 1.0f);
}

//===- launch plan -------------------------------------------------------------------------===//

// Tile sizes and dynamic shared memory per kernel (the grids: query or key tiles of kBlockRows
// by B * H). At D = 128 the backward's register-held accumulators leave room for 32-wide tiles
// only: wider ones spill (tests/cuda checks ptxas's report).
template <typename T, int D> struct Plan {
  static constexpr int dqKeys = D == 128 ? 32 : 64;
  static constexpr int dkdvQueries = D == 128 ? 32 : 64;
  static constexpr size_t forwardShared = 2 * 64 * (D + 8) * sizeof(T);
  static constexpr size_t dqShared =
      2 * (dqKeys > kBlockRows ? dqKeys : kBlockRows) * (D + 8) * sizeof(T);
  static constexpr size_t dkdvShared =
      (2 * kBlockRows + 2 * dkdvQueries) * (D + 8) * sizeof(T) + 3 * dkdvQueries * sizeof(float);
};

} // namespace attn::cuda::flash

#endif // ATTN_RUNTIME_CUDA_FLASHKERNELS_CUH
