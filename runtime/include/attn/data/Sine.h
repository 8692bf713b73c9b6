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

// x: f32 [count, window], y: f32 [count, horizon] with
//   x[i, t] = sin(phi_i + 0.1 * t),   y[i, k] = sin(phi_i + 0.1 * (window + k)),
//   phi_i = 2*pi * rng.nextDouble(), rng = attn::Rng(seed) (attn/Random.h), drawn for i = 0, 1, ...
// (computed in double, stored as float). Throws std::runtime_error if window < 1, horizon < 1
// or count < 0.
Examples makeSine(int64_t window, int64_t count, uint64_t seed, int64_t horizon = 1);

// `sines`, a forecasting task: one series s of window + horizon samples per example, a noisy
// mixture of three sines, x[i, t] = s_i(t) for t < window and y[i, k] = s_i(window + k):
//   s_i(t) = sum_{c<3} a_c sin(w_c t + phi_c) + 0.05 n_t,
//   a_c ~ U(0.2, 0.6), w_c ~ U(0.05, 0.35) (radians per sample), phi_c ~ U(0, 2 pi),
//   n_t ~ N(0, 1) (Box-Muller), all from attn::Rng(seed) in that order, example by example.
// The noise is in the targets too: a perfect forecaster's MSE is 0.0025. Throws like makeSine.
Examples makeSines(int64_t window, int64_t horizon, int64_t count, uint64_t seed);

// `wave`, a one-to-many task (seed 000's n_x = 1, n_y = N): from one vector, a whole sequence.
// x: f32 [count, 4] = (a, w, cos phi, sin phi), y: f32 [count, horizon] with
//   y[i, t] = a sin(w t + phi),   a ~ U(0.5, 1), w ~ U(0.1, 0.5), phi ~ U(0, 2 pi),
// drawn from attn::Rng(seed) in that order (the phase enters as its cosine and sine, so that
// phases near 0 and 2 pi, which give the same wave, look alike). Throws if horizon < 1 or
// count < 0.
inline constexpr int64_t kWaveFeatures = 4;
Examples makeWave(int64_t horizon, int64_t count, uint64_t seed);

} // namespace attn::data

#endif // ATTN_DATA_SINE_H
