// The GPU kernels of decoding's choices (attn/cuda/Kernels.h has the contracts): greedy
// decoding's argmax per row, and beam search's (and top-k sampling's) k best per row.
//
// One block of 128 threads per row: each thread scans a strided share of the row, then the
// block reduces the threads' (value, index) pairs in shared memory, in a fixed tree. The
// order is the value, then the lower index, so that the pick is the CPU's.
//
// Device code only, over the primitives of Warp.cuh, like TrainKernels.cuh: decode.cu
// includes that file first and launches these; tests/cuda's emulator runs them on CPU threads.
#ifndef ATTN_RUNTIME_CUDA_DECODEKERNELS_CUH
#define ATTN_RUNTIME_CUDA_DECODEKERNELS_CUH

#include <cmath>
#include <cstdint>

namespace attn::cuda::decode {

constexpr int kThreads = 128;
// Dynamic shared memory of a row kernel: a value and an index per thread.
constexpr size_t kShared = kThreads * (sizeof(float) + sizeof(int64_t));

// Whether (v, at) ranks before (w, wat): the larger value, then the lower index.
__device__ __forceinline__ bool ranksBefore(float v, int64_t at, float w, int64_t wat) {
  return v > w || (v == w && at < wat);
}

// The block's best (value, index) pair of the threads' (v, at), at < 0 for none, into
// value[0] and index[0] of the shared arrays, which every thread reads after the last barrier.
__device__ __forceinline__ void blockBest(float *value, int64_t *index, float v, int64_t at) {
  value[threadIdx.x] = v;
  index[threadIdx.x] = at;
  syncBlock();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      const float w = value[threadIdx.x + half];
      const int64_t wat = index[threadIdx.x + half];
      const int64_t mine = index[threadIdx.x];
      if (wat >= 0 && (mine < 0 || ranksBefore(w, wat, value[threadIdx.x], mine))) {
        value[threadIdx.x] = w;
        index[threadIdx.x] = wat;
      }
    }
    syncBlock();
  }
}

// grid: rows. x [rows, cols]; best [rows], bestValue [rows]. std::max_element's pick: it
// replaces its pick only by a larger value, so ties go to the lowest index, and a NaN wins
// only as the row's first element (nothing is larger than it), never elsewhere.
__global__ void argmaxRows(const float *__restrict__ x, int64_t cols, int32_t *__restrict__ best,
                           float *__restrict__ bestValue) {
  float *value = reinterpret_cast<float *>(dynamicShared());
  int64_t *index = reinterpret_cast<int64_t *>(value + kThreads);
  const float *row = x + int64_t(blockIdx.x) * cols;
  float v = 0;
  int64_t at = -1;
  for (int64_t j = threadIdx.x; j < cols; j += kThreads)
    if (row[j] == row[j] && (at < 0 || row[j] > v)) { // > keeps the first of equals
      v = row[j];
      at = j;
    }
  blockBest(value, index, v, at);
  if (threadIdx.x == 0) {
    const bool firstIsNan = row[0] != row[0];
    best[blockIdx.x] = firstIsNan || index[0] < 0 ? 0 : int32_t(index[0]);
    bestValue[blockIdx.x] = firstIsNan || index[0] < 0 ? row[0] : value[0];
  }
}

// grid: rows. x [rows, cols]; index [rows, k], value [rows, k], 1 <= k <= cols. k passes: pass
// r finds the best element ranked after pass r - 1's, so nothing is marked or sorted and the
// row is read k times (k is a beam, the row a vocabulary: a few passes over 100 KB). A NaN
// ranks as -inf.
__global__ void topKRows(const float *__restrict__ x, int64_t cols, int64_t k,
                         int32_t *__restrict__ index, float *__restrict__ value) {
  float *bestValue = reinterpret_cast<float *>(dynamicShared());
  int64_t *bestIndex = reinterpret_cast<int64_t *>(bestValue + kThreads);
  const float *row = x + int64_t(blockIdx.x) * cols;
  float lastValue = 0;
  int64_t lastIndex = -1;
  for (int64_t r = 0; r < k; ++r) {
    float v = -INFINITY;
    int64_t at = -1;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
      const float xj = row[j] == row[j] ? row[j] : -INFINITY;
      const bool after = lastIndex < 0 || ranksBefore(lastValue, lastIndex, xj, j);
      if (after && (at < 0 || xj > v)) { // > keeps the first of equals
        v = xj;
        at = j;
      }
    }
    blockBest(bestValue, bestIndex, v, at);
    lastValue = bestValue[0];
    lastIndex = bestIndex[0];
    if (threadIdx.x == 0) {
      index[int64_t(blockIdx.x) * k + r] = int32_t(lastIndex);
      value[int64_t(blockIdx.x) * k + r] = lastValue;
    }
    syncBlock(); // bestValue[0] is read before the next pass writes it
  }
}

} // namespace attn::cuda::decode

#endif // ATTN_RUNTIME_CUDA_DECODEKERNELS_CUH
