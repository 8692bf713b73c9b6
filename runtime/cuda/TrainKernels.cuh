// The GPU kernels of attn.layer_norm, attn.cross_entropy (and _grad) and attn.adam_update
// (attn/cuda/Kernels.h has the contracts), f32 throughout.
//
// Row-wise ops run one block of 128 threads per row: each thread strides over the row's
// columns, and the block combines the threads' partials in a fixed order (warp shuffles, then
// the 4 warps in order), so every reduction gives the same bits on every run. Sums over rows
// (dgamma, dbeta, the mean loss) go through per-chunk partials summed in order, not atomics.
//
// Device code only, over the primitives of Warp.cuh, like FlashKernels.cuh: train_kernels.cu
// includes that file first and launches these; tests/cuda's emulator runs them on CPU threads.
#ifndef ATTN_RUNTIME_CUDA_TRAINKERNELS_CUH
#define ATTN_RUNTIME_CUDA_TRAINKERNELS_CUH

#include <cmath>
#include <cstdint>

namespace attn::cuda::train {

constexpr int kThreads = 128, kWarps = kThreads / 32;
// dgamma and dbeta: rows summed per block before the partials are summed in order.
constexpr int kRowsPerChunk = 64;
// Dynamic shared memory of a row kernel: one partial per warp.
constexpr size_t kReduceShared = kWarps * sizeof(float);

// Grids (host side): column blocks of kThreads, row chunks of kRowsPerChunk, Adam's blocks (a
// grid-stride loop, so a capped grid covers any n).
inline unsigned columnBlocks(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }
inline int64_t rowChunks(int64_t rows) { return (rows + kRowsPerChunk - 1) / kRowsPerChunk; }
inline unsigned adamBlocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 ? blocks : 65535);
}

struct Add {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Every thread's v combined over the block; every thread gets the result.
template <typename Op> __device__ __forceinline__ float blockReduce(float v, Op op) {
  float *partials = reinterpret_cast<float *>(dynamicShared());
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, shuffleXor(v, offset));
  if ((threadIdx.x & 31) == 0)
    partials[threadIdx.x >> 5] = v;
  syncBlock();
  float r = partials[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w)
    r = op(r, partials[w]);
  syncBlock(); // partials may be written again
  return r;
}

//===- layer norm ---------------------------------------------------------------------------===//

// grid: rows. x, y [rows, dim]; mean, rstd [rows].
__global__ void __launch_bounds__(kThreads)
    layerNormForward(int64_t dim, float epsilon, const float *__restrict__ x,
                     const float *__restrict__ gamma, const float *__restrict__ beta,
                     float *__restrict__ y, float *__restrict__ mean, float *__restrict__ rstd) {
  const int64_t row = blockIdx.x;
  const float *xr = x + row * dim;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads)
    s += xr[c];
  const float mu = blockReduce(s, Add{}) / float(dim);
  // Two passes: the variance of x - mean, not E[x^2] - mean^2, which cancels badly.
  float q = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads)
    q += (xr[c] - mu) * (xr[c] - mu);
  const float rs = 1.0f / sqrtf(blockReduce(q, Add{}) / float(dim) + epsilon);
  for (int64_t c = threadIdx.x; c < dim; c += kThreads)
    y[row * dim + c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}

// grid: rows. With xhat = (x - mean) rstd and g = dy gamma:
//   dx = rstd (g - mean(g) - xhat mean(g xhat)).
__global__ void __launch_bounds__(kThreads)
    layerNormBackwardDx(int64_t dim, const float *__restrict__ x, const float *__restrict__ gamma,
                        const float *__restrict__ mean, const float *__restrict__ rstd,
                        const float *__restrict__ dy, float *__restrict__ dx) {
  const int64_t row = blockIdx.x;
  const float mu = mean[row], rs = rstd[row];
  const float *xr = x + row * dim, *dyr = dy + row * dim;
  float a = 0.0f, b = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) {
    const float g = dyr[c] * gamma[c];
    a += g;
    b += g * (xr[c] - mu) * rs;
  }
  const float meanG = blockReduce(a, Add{}) / float(dim);
  const float meanGx = blockReduce(b, Add{}) / float(dim);
  for (int64_t c = threadIdx.x; c < dim; c += kThreads) {
    const float xhat = (xr[c] - mu) * rs;
    dx[row * dim + c] = rs * (dyr[c] * gamma[c] - meanG - xhat * meanGx);
  }
}

// grid: (column blocks of 128, row chunks). partial[chunk][c] = the chunk's sum over rows of
// dy xhat (dgamma) and dy (dbeta): [chunks][dim] each.
__global__ void __launch_bounds__(kThreads)
    layerNormBackwardPartials(int64_t rows, int64_t dim, const float *__restrict__ x,
                              const float *__restrict__ mean, const float *__restrict__ rstd,
                              const float *__restrict__ dy, float *__restrict__ partialGamma,
                              float *__restrict__ partialBeta) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t r0 = int64_t(blockIdx.y) * kRowsPerChunk;
  if (c >= dim)
    return;
  const int64_t r1 = r0 + kRowsPerChunk < rows ? r0 + kRowsPerChunk : rows;
  float sg = 0.0f, sb = 0.0f;
  for (int64_t r = r0; r < r1; ++r) {
    const float d = dy[r * dim + c];
    sg += d * (x[r * dim + c] - mean[r]) * rstd[r];
    sb += d;
  }
  partialGamma[int64_t(blockIdx.y) * dim + c] = sg;
  partialBeta[int64_t(blockIdx.y) * dim + c] = sb;
}

// grid: column blocks of 128. out[c] = sum over chunks, in order, of partial[chunk][c].
__global__ void __launch_bounds__(kThreads)
    sumChunks(int64_t chunks, int64_t dim, const float *__restrict__ partial,
              float *__restrict__ out) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= dim)
    return;
  float s = 0.0f;
  for (int64_t k = 0; k < chunks; ++k)
    s += partial[k * dim + c];
  out[c] = s;
}

//===- cross-entropy ------------------------------------------------------------------------===//

// What the forward keeps per row for the backward, and the contributing rows' count.
struct CrossEntropyWorkspace {
  float *lse, *loss, *valid; // [rows] each
  float *count;              // [1]
};

__device__ __forceinline__ bool contributes(int32_t label, int64_t classes, int64_t ignoreIndex) {
  return label != ignoreIndex && label >= 0 && label < classes;
}

// grid: rows. Per row: lse = log sum_c exp(x_c); the row's loss
//   (1 - e)(lse - x[label]) + (e / C) sum_c (lse - x_c) = lse - (1 - e) x[label] - (e / C) sum x.
__global__ void __launch_bounds__(kThreads)
    crossEntropyRows(int64_t classes, int64_t ignoreIndex, float smoothing,
                     const float *__restrict__ logits, const int32_t *__restrict__ labels,
                     CrossEntropyWorkspace ws) {
  const int64_t row = blockIdx.x;
  const float *xr = logits + row * classes;
  float mx = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += kThreads)
    mx = fmaxf(mx, xr[c]);
  mx = blockReduce(mx, Max{});
  float se = 0.0f, sx = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += kThreads) {
    se += expf(xr[c] - mx);
    sx += xr[c];
  }
  const float lse = mx + logf(blockReduce(se, Add{}));
  const float sumX = smoothing != 0.0f ? blockReduce(sx, Add{}) : 0.0f;
  if (threadIdx.x == 0) {
    const int32_t label = labels[row];
    const bool valid = contributes(label, classes, ignoreIndex);
    ws.lse[row] = lse;
    ws.valid[row] = valid ? 1.0f : 0.0f;
    ws.loss[row] =
        valid ? lse - (1.0f - smoothing) * xr[label] - smoothing / float(classes) * sumX : 0.0f;
  }
}

// One block: the mean over contributing rows, summed in a fixed order; 0 when none.
__global__ void __launch_bounds__(kThreads)
    crossEntropyMean(int64_t rows, CrossEntropyWorkspace ws, float *__restrict__ loss) {
  float s = 0.0f, n = 0.0f;
  for (int64_t r = threadIdx.x; r < rows; r += kThreads) {
    s += ws.loss[r];
    n += ws.valid[r];
  }
  s = blockReduce(s, Add{});
  n = blockReduce(n, Add{});
  if (threadIdx.x == 0) {
    *ws.count = n;
    *loss = n > 0.0f ? s / n : 0.0f;
  }
}

// grid: rows. dlogits = grad (softmax - q) valid / count, q = (1 - e) onehot + e / C.
__global__ void __launch_bounds__(kThreads)
    crossEntropyGrad(int64_t classes, int64_t ignoreIndex, float smoothing,
                     const float *__restrict__ logits, const int32_t *__restrict__ labels,
                     const float *__restrict__ grad, CrossEntropyWorkspace ws,
                     float *__restrict__ dlogits) {
  const int64_t row = blockIdx.x;
  const int32_t label = labels[row];
  const bool valid = contributes(label, classes, ignoreIndex);
  const float scale = valid ? *grad / *ws.count : 0.0f;
  const float lse = ws.lse[row];
  for (int64_t c = threadIdx.x; c < classes; c += kThreads) {
    const float q = (c == label ? 1.0f - smoothing : 0.0f) + smoothing / float(classes);
    dlogits[row * classes + c] = valid ? scale * (expf(logits[row * classes + c] - lse) - q) : 0.0f;
  }
}

//===- Adam ---------------------------------------------------------------------------------===//

struct AdamStep {
  float beta1, beta2, epsilon, weightDecay, lr;
  float correction1, correction2; // 1 - beta^t
  bool decoupled;
};

// Grid-stride over n elements, in place.
__global__ void __launch_bounds__(kThreads)
    adamUpdate(int64_t n, AdamStep s, float *__restrict__ param, const float *__restrict__ grad,
               float *__restrict__ m, float *__restrict__ v) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * kThreads) {
    const float p = param[i];
    float g = grad[i];
    if (!s.decoupled && s.weightDecay != 0.0f)
      g += s.weightDecay * p;
    const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * g;
    const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * (g * g);
    float step = s.lr * ((mi / s.correction1) / (sqrtf(vi / s.correction2) + s.epsilon));
    if (s.decoupled && s.weightDecay != 0.0f)
      step += s.lr * s.weightDecay * p;
    param[i] = p - step;
    m[i] = mi;
    v[i] = vi;
  }
}

} // namespace attn::cuda::train

#endif // ATTN_RUNTIME_CUDA_TRAINKERNELS_CUH
