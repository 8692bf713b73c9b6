// Launches of DecodeKernels.cuh behind attn/cuda/Kernels.h: decoding's choices on the GPU,
// read back by attn/cuda/Offload.h's entry points (runtime/cuda/program.cpp), so that a
// decoding step reads back K or K x k tokens, not K x V log-probabilities.
#include "attn/cuda/Kernels.h"

#include "Launch.cuh"
#include "Warp.cuh"
// After Warp.cuh: the kernels are written over its primitives.
#include "DecodeKernels.cuh"

#include <cuda_runtime.h>

#include <string>

namespace attn::cuda {

Status argmaxRows(int64_t rows, int64_t cols, const float *x, int32_t *index, float *value,
                  void *stream) {
  if (rows <= 0)
    return {};
  if (cols <= 0)
    return Status::error("attn::cuda argmaxRows: rows of no value have no largest one");
  decode::argmaxRows<<<unsigned(rows), decode::kThreads, decode::kShared,
                       static_cast<cudaStream_t>(stream)>>>(x, cols, index, value);
  return launched("argmaxRows");
}

Status topKRows(int64_t rows, int64_t cols, int64_t k, const float *x, int32_t *index, float *value,
                void *stream) {
  if (rows <= 0)
    return {};
  if (k < 1 || k > cols)
    return Status::error("attn::cuda topKRows: k must be in [1, " + std::to_string(cols) +
                         "] (the row's width), got " + std::to_string(k));
  decode::topKRows<<<unsigned(rows), decode::kThreads, decode::kShared,
                     static_cast<cudaStream_t>(stream)>>>(x, cols, k, index, value);
  return launched("topKRows");
}

} // namespace attn::cuda
