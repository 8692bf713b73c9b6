// The GPU kernels of attn's training ops besides attention and the matmuls: layer norm, softmax
// cross-entropy and Adam, each with the contract of its op (docs/dialect.md: attn.layer_norm,
// attn.cross_entropy and attn.cross_entropy_grad, attn.adam_update), in f32 device memory,
// row-major and contiguous. Every reduction has a fixed order (no atomics): the same inputs
// give the same bits on every run, as on the CPU.
//
// Calls are asynchronous on `stream` (null: the default stream); a launch error is returned.
#ifndef ATTN_CUDA_KERNELS_H
#define ATTN_CUDA_KERNELS_H

#include "attn/cuda/Device.h"

#include <cstddef>
#include <cstdint>

namespace attn::cuda {

//===- attn.layer_norm -----------------------------------------------------------------------===//
// y = (x - mean) / sqrt(var + epsilon) * gamma + beta over the last dim; x, y [rows, dim],
// gamma, beta [dim]; mean and rstd [rows] are kept for the backward.
Status layerNormForward(int64_t rows, int64_t dim, float epsilon, const float *x,
                        const float *gamma, const float *beta, float *y, float *mean, float *rstd,
                        void *stream = nullptr);

// Device memory the backward needs for dgamma and dbeta's partial sums.
size_t layerNormBackwardWorkspace(int64_t rows, int64_t dim);

// dx [rows, dim]; dgamma, dbeta [dim] (overwritten, not accumulated).
Status layerNormBackward(int64_t rows, int64_t dim, const float *x, const float *gamma,
                         const float *mean, const float *rstd, const float *dy, float *dx,
                         float *dgamma, float *dbeta, void *workspace, void *stream = nullptr);

//===- attn.cross_entropy, attn.cross_entropy_grad --------------------------------------------===//
struct CrossEntropyOptions {
  int64_t ignoreIndex = -1;
  float labelSmoothing = 0.0f;
};

// Device memory the forward keeps for the backward: per row, its log-sum-exp and its loss;
// and the count of contributing rows.
size_t crossEntropyWorkspace(int64_t rows);

// loss (one float) = the mean over contributing rows of
//   -(1 - e) log p[label] - (e / C) sum_c log p[c],  p = softmax(logits[row]),
// 0 when no row contributes; rows whose label is ignoreIndex or outside [0, C) contribute
// nothing. logits [rows, classes], labels [rows] (int32).
Status crossEntropyForward(int64_t rows, int64_t classes, const CrossEntropyOptions &options,
                           const float *logits, const int32_t *labels, float *loss, void *workspace,
                           void *stream = nullptr);

// dlogits = grad * (softmax(logits) - q) * valid / count, q the smoothed one-hot target; grad
// is the loss's gradient (one float in device memory); workspace as the forward left it.
Status crossEntropyBackward(int64_t rows, int64_t classes, const CrossEntropyOptions &options,
                            const float *logits, const int32_t *labels, const float *grad,
                            const void *workspace, float *dlogits, void *stream = nullptr);

//===- attn.adam_update -----------------------------------------------------------------------===//
struct AdamOptions {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, weightDecay = 0.0f;
  bool decoupled = false; // AdamW
};

// In place, with t = step (from 1):
//   g' = grad + weight_decay param (Adam) or grad (AdamW),
//   m = beta1 m + (1 - beta1) g',  v = beta2 v + (1 - beta2) g'^2,
//   param -= lr (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)
//            [+ lr weight_decay param, AdamW].
Status adamUpdate(int64_t n, const AdamOptions &options, float lr, int64_t step, float *param,
                  const float *grad, float *m, float *v, void *stream = nullptr);

} // namespace attn::cuda

#endif // ATTN_CUDA_KERNELS_H
