// What the tests and benchmarks that call the runtime's kernels directly (attn/kernels.h) share:
// memref descriptors over plain buffers, and random inputs.
#pragma once

#include "attn/Random.h"

#include <cstdint>
#include <vector>

namespace attn::testing {

// A memref of rank N over `data` (strides row-major, or `strides` when given).
template <typename M, int N>
M memref(float *data, const int64_t (&sizes)[N], const int64_t *strides = nullptr) {
  M m;
  m.allocated = m.aligned = data;
  m.offset = 0;
  int64_t stride = 1;
  for (int d = N - 1; d >= 0; --d) {
    m.sizes[d] = sizes[d];
    m.strides[d] = strides ? strides[d] : stride;
    stride *= sizes[d];
  }
  return m;
}

template <typename M, int N>
M memref(std::vector<float> &buf, const int64_t (&sizes)[N], const int64_t *strides = nullptr) {
  return memref<M, N>(buf.data(), sizes, strides);
}

// n values uniform in [-scale, scale).
inline std::vector<float> randomFloats(size_t n, Rng &rng, double scale = 1.0) {
  std::vector<float> v(n);
  for (float &x : v)
    x = (float)(scale * (2 * rng.nextDouble() - 1));
  return v;
}

} // namespace attn::testing
