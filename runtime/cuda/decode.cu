// Greedy decoding's choice on the GPU (attn/cuda/Kernels.h: argmaxRows; attn_cuda_argmax_rows
// of attn/cuda/Offload.h reads it back): each row's largest value and its index, so that a
// decoding step reads back K tokens, not K x V log-probabilities.
#include "attn/cuda/Kernels.h"

#include <cuda_runtime.h>

#include <string>

namespace {

constexpr int kThreads = 256;

// One block per row: each thread scans a strided share of the row, then the block reduces
// (value, index) pairs in shared memory. The choice is std::max_element's on the CPU path,
// which replaces its pick only by a larger value: ties go to the lowest index, and a NaN wins
// only as the row's first element (nothing is larger than it), never elsewhere.
//   x [rows, cols] row-major; index [rows], value [rows].
__global__ void argmaxRowsKernel(const float *__restrict__ x, int64_t cols,
                                 int32_t *__restrict__ index, float *__restrict__ value) {
  __shared__ float bestValue[kThreads];
  __shared__ int64_t bestIndex[kThreads];
  const float *row = x + blockIdx.x * cols;
  float v = 0;
  int64_t at = -1;
  for (int64_t j = threadIdx.x; j < cols; j += kThreads)
    if (row[j] == row[j] && (at < 0 || row[j] > v)) { // > keeps the first of equals
      v = row[j];
      at = j;
    }
  bestValue[threadIdx.x] = v;
  bestIndex[threadIdx.x] = at;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const float w = bestValue[threadIdx.x + half];
      const int64_t wat = bestIndex[threadIdx.x + half];
      const int64_t mine = bestIndex[threadIdx.x];
      if (wat >= 0 &&
          (mine < 0 || w > bestValue[threadIdx.x] || (w == bestValue[threadIdx.x] && wat < mine))) {
        bestValue[threadIdx.x] = w;
        bestIndex[threadIdx.x] = wat;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const bool firstIsNan = row[0] != row[0];
    index[blockIdx.x] = firstIsNan || bestIndex[0] < 0 ? 0 : int32_t(bestIndex[0]);
    value[blockIdx.x] = firstIsNan || bestIndex[0] < 0 ? row[0] : bestValue[0];
  }
}

} // namespace

namespace attn::cuda {

Status argmaxRows(int64_t rows, int64_t cols, const float *x, int32_t *index, float *value,
                  void *stream) {
  if (rows <= 0)
    return {};
  if (cols <= 0)
    return Status::error("attn::cuda argmaxRows: rows of no value have no largest one");
  argmaxRowsKernel<<<unsigned(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      x, cols, index, value);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(std::string("attn::cuda argmaxRows: ") + cudaGetErrorString(err));
  return {};
}

} // namespace attn::cuda
