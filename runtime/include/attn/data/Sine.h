// The builtin sine dataset: predict the next sample of a sine wave from a window of samples.
#ifndef ATTN_DATA_SINE_H
#define ATTN_DATA_SINE_H

#include "attn/Tensor.h"

#include <cstdint>

namespace attn::data {

// A supervised dataset: row i of x is the input of example i, row i of y its target.
struct Examples {
  Tensor x;
  Tensor y;
};

// x: f32 [count, window], y: f32 [count, 1] with
//   x[i, t] = sin(phi_i + 0.1 * t),   y[i, 0] = sin(phi_i + 0.1 * window),
//   phi_i = 2*pi * rng.nextDouble(), rng = attn::Rng(seed) (attn/Random.h), drawn for i = 0, 1, ...
// (computed in double, stored as float). Throws std::runtime_error if window < 1 or count < 0.
Examples makeSine(int64_t window, int64_t count, uint64_t seed);

} // namespace attn::data

#endif // ATTN_DATA_SINE_H
