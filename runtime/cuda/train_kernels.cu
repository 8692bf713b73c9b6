// Launches of TrainKernels.cuh behind attn/cuda/Kernels.h: shapes checked, grids sized, launch
// errors returned.
#include "attn/cuda/Kernels.h"

#include "Launch.cuh"
#include "Warp.cuh"
// After Warp.cuh: the kernels are written over its primitives.
#include "TrainKernels.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <string>

namespace attn::cuda {
namespace {

using namespace train;

// One block per row: the grid's x dimension holds 2^31 - 1.
Status checkRows(const char *op, int64_t rows, int64_t dim) {
  if (rows < 1 || dim < 1 || rows > 0x7fffffff)
    return Status::error(std::string("attn::cuda ") + op + ": shape [" + std::to_string(rows) +
                         ", " + std::to_string(dim) + "] (rows in [1, 2^31), dim >= 1)");
  return {};
}

CrossEntropyWorkspace crossEntropyParts(const void *workspace, int64_t rows) {
  float *base = static_cast<float *>(const_cast<void *>(workspace));
  return {base, base + rows, base + 2 * rows, base + 3 * rows};
}

} // namespace

Status layerNormForward(int64_t rows, int64_t dim, float epsilon, const float *x,
                        const float *gamma, const float *beta, float *y, float *mean, float *rstd,
                        void *stream) {
  if (Status st = checkRows("layer_norm", rows, dim); !st)
    return st;
  train::layerNormForward<<<unsigned(rows), kThreads, kReduceShared,
                            static_cast<cudaStream_t>(stream)>>>(dim, epsilon, x, gamma, beta, y,
                                                                 mean, rstd);
  return launched("layer_norm");
}

size_t layerNormBackwardWorkspace(int64_t rows, int64_t dim) {
  return size_t(2 * rowChunks(rows) * dim) * sizeof(float);
}

Status layerNormBackward(int64_t rows, int64_t dim, const float *x, const float *gamma,
                         const float *mean, const float *rstd, const float *dy, float *dx,
                         float *dgamma, float *dbeta, void *workspace, void *stream) {
  if (Status st = checkRows("layer_norm backward", rows, dim); !st)
    return st;
  if (rowChunks(rows) > 65535)
    return Status::error("attn::cuda layer_norm backward: " + std::to_string(rows) +
                         " rows exceed the grid's 65535 chunks of " +
                         std::to_string(kRowsPerChunk));
  auto s = static_cast<cudaStream_t>(stream);
  layerNormBackwardDx<<<unsigned(rows), kThreads, kReduceShared, s>>>(dim, x, gamma, mean, rstd, dy,
                                                                      dx);
  if (Status st = launched("layer_norm backward (dx)"); !st)
    return st;
  const int64_t chunks = rowChunks(rows);
  float *partialGamma = static_cast<float *>(workspace), *partialBeta = partialGamma + chunks * dim;
  layerNormBackwardPartials<<<dim3(columnBlocks(dim), unsigned(chunks)), kThreads, 0, s>>>(
      rows, dim, x, mean, rstd, dy, partialGamma, partialBeta);
  sumChunks<<<columnBlocks(dim), kThreads, 0, s>>>(chunks, dim, partialGamma, dgamma);
  sumChunks<<<columnBlocks(dim), kThreads, 0, s>>>(chunks, dim, partialBeta, dbeta);
  return launched("layer_norm backward (dgamma, dbeta)");
}

Status sumRows(int64_t rows, int64_t cols, const float *in, float *out, void *stream) {
  if (rows < 1 || cols < 1 || columnBlocks(cols) > 0x7fffffffu)
    return Status::error("attn::cuda sumRows: shape [" + std::to_string(rows) + ", " +
                         std::to_string(cols) + "]");
  // layer norm's sum of chunk partials: the same fixed-order column sum.
  sumChunks<<<columnBlocks(cols), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(rows, cols,
                                                                                   in, out);
  return launched("sum_rows");
}

size_t crossEntropyWorkspace(int64_t rows) { return size_t(3 * rows + 1) * sizeof(float); }

Status crossEntropyForward(int64_t rows, int64_t classes, const CrossEntropyOptions &options,
                           const float *logits, const int32_t *labels, float *loss, void *workspace,
                           void *stream) {
  if (Status st = checkRows("cross_entropy", rows, classes); !st)
    return st;
  auto s = static_cast<cudaStream_t>(stream);
  const CrossEntropyWorkspace ws = crossEntropyParts(workspace, rows);
  crossEntropyRows<<<unsigned(rows), kThreads, kReduceShared, s>>>(
      classes, options.ignoreIndex, options.labelSmoothing, logits, labels, ws);
  crossEntropyMean<<<1, kThreads, kReduceShared, s>>>(rows, ws, loss);
  return launched("cross_entropy");
}

Status crossEntropyBackward(int64_t rows, int64_t classes, const CrossEntropyOptions &options,
                            const float *logits, const int32_t *labels, const float *grad,
                            const void *workspace, float *dlogits, void *stream) {
  if (Status st = checkRows("cross_entropy_grad", rows, classes); !st)
    return st;
  crossEntropyGrad<<<unsigned(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      classes, options.ignoreIndex, options.labelSmoothing, logits, labels, grad,
      crossEntropyParts(workspace, rows), dlogits);
  return launched("cross_entropy_grad");
}

Status adamUpdate(int64_t n, const AdamOptions &o, float lr, int64_t step, float *param,
                  const float *grad, float *m, float *v, void *stream) {
  if (n < 1 || step < 1)
    return Status::error("attn::cuda adam_update: " + std::to_string(n) + " elements at step " +
                         std::to_string(step) + " (both must be >= 1)");
  // As the CPU lowering computes them: 1 - beta^t in f32, once per call.
  const AdamStep s{o.beta1,
                   o.beta2,
                   o.epsilon,
                   o.weightDecay,
                   lr,
                   1.0f - std::pow(o.beta1, float(step)),
                   1.0f - std::pow(o.beta2, float(step)),
                   o.decoupled};
  train::adamUpdate<<<adamBlocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(n, s, param,
                                                                                       grad, m, v);
  return launched("adam_update");
}

} // namespace attn::cuda
