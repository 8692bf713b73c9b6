// Decoding's picks as the CPU makes them, for the tests of the decoding kernels
// (runtime/cuda/DecodeKernels.cuh): emulated-decode-kernels-test.cpp on the emulator,
// program-test.cpp on a GPU through attn/cuda/Offload.h.
#ifndef ATTN_TESTS_CUDA_DECODEREFERENCE_H
#define ATTN_TESTS_CUDA_DECODEREFERENCE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace attn::cuda::testing {

// The rows that decide the picks, written over rows 0..5 of x [>= 6, cols] (cols >= 140):
// three equals in three threads' shares, the largest in the last column, a NaN first, a NaN
// in the same thread's share as the row's largest, a row of equals, +inf.
constexpr int64_t kDecodeCaseRows = 6;
inline void writeDecodeCases(float *x, int64_t cols) {
  auto at = [&](int64_t r, int64_t j) -> float & { return x[r * cols + j]; };
  at(0, 3) = at(0, cols - 7) = at(0, 130) = 40;
  at(1, cols - 1) = 60;
  at(2, 0) = NAN;
  at(3, 5) = NAN;
  at(3, 133) = 70;
  for (int64_t j = 0; j < cols; ++j)
    at(4, j) = -1;
  at(5, cols / 2) = INFINITY;
}

// A score as beam search and top-k sampling rank it: a NaN as -inf.
inline float rankedValue(float v) { return std::isnan(v) ? -INFINITY : v; }

// A row's ids, best first: by ranked value, ties to the lower id (a stable sort).
inline std::vector<int32_t> ranking(const float *row, int64_t cols) {
  std::vector<int32_t> order(cols);
  for (int64_t j = 0; j < cols; ++j)
    order[j] = int32_t(j);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return rankedValue(row[a]) > rankedValue(row[b]); });
  return order;
}

} // namespace attn::cuda::testing

#endif // ATTN_TESTS_CUDA_DECODEREFERENCE_H
