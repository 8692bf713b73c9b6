#include "attn/data/Sine.h"

#include "attn/Random.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::data {

namespace {
void checkSizes(const char *what, int64_t window, int64_t horizon, int64_t count) {
  if (window < 1 || horizon < 1 || count < 0)
    throw std::runtime_error(std::string("attn: ") + what +
                             ": need window >= 1, horizon >= 1 and count >= 0, got window " +
                             std::to_string(window) + ", horizon " + std::to_string(horizon) +
                             ", count " + std::to_string(count));
}

// Example i's series at t in [0, window + horizon) into x [window] and y [horizon].
template <typename Series>
Examples fill(int64_t window, int64_t horizon, int64_t count, Series series) {
  Examples ex{Tensor(ATTN_F32, {count, window}), Tensor(ATTN_F32, {count, horizon})};
  float *x = ex.x.data<float>(), *y = ex.y.data<float>();
  std::vector<double> s(window + horizon);
  for (int64_t i = 0; i < count; ++i) {
    series(s);
    for (int64_t t = 0; t < window; ++t)
      x[i * window + t] = static_cast<float>(s[t]);
    for (int64_t k = 0; k < horizon; ++k)
      y[i * horizon + k] = static_cast<float>(s[window + k]);
  }
  return ex;
}
} // namespace

Examples makeSine(int64_t window, int64_t count, uint64_t seed, int64_t horizon) {
  checkSizes("makeSine", window, horizon, count);
  Rng rng(seed);
  return fill(window, horizon, count, [&](std::vector<double> &s) {
    double phi = 2.0 * M_PI * rng.nextDouble();
    for (size_t t = 0; t < s.size(); ++t)
      s[t] = std::sin(phi + 0.1 * static_cast<double>(t));
  });
}

Examples makeWave(int64_t horizon, int64_t count, uint64_t seed) {
  checkSizes("makeWave", 1, horizon, count);
  Examples ex{Tensor(ATTN_F32, {count, kWaveFeatures}), Tensor(ATTN_F32, {count, horizon})};
  float *x = ex.x.data<float>(), *y = ex.y.data<float>();
  Rng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    double a = 0.5 + 0.5 * rng.nextDouble(), w = 0.1 + 0.4 * rng.nextDouble();
    double phi = 2.0 * M_PI * rng.nextDouble();
    const double features[kWaveFeatures] = {a, w, std::cos(phi), std::sin(phi)};
    for (int64_t f = 0; f < kWaveFeatures; ++f)
      x[i * kWaveFeatures + f] = static_cast<float>(features[f]);
    for (int64_t t = 0; t < horizon; ++t)
      y[i * horizon + t] = static_cast<float>(a * std::sin(w * static_cast<double>(t) + phi));
  }
  return ex;
}

Examples makeSines(int64_t window, int64_t horizon, int64_t count, uint64_t seed) {
  checkSizes("makeSines", window, horizon, count);
  Rng rng(seed);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.nextDouble(); };
  auto normal = [&] { // Box-Muller; 1 - u keeps the logarithm finite
    double u = 1.0 - rng.nextDouble(), v = rng.nextDouble();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
  };
  return fill(window, horizon, count, [&](std::vector<double> &s) {
    double a[3], w[3], phi[3];
    for (int c = 0; c < 3; ++c) {
      a[c] = uniform(0.2, 0.6);
      w[c] = uniform(0.05, 0.35);
      phi[c] = uniform(0.0, 2.0 * M_PI);
    }
    for (size_t t = 0; t < s.size(); ++t) {
      double v = 0;
      for (int c = 0; c < 3; ++c)
        v += a[c] * std::sin(w[c] * static_cast<double>(t) + phi[c]);
      s[t] = v + 0.05 * normal();
    }
  });
}

} // namespace attn::data
