#include "attn/data/Sine.h"

#include "attn/Random.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn::data {

Examples makeSine(int64_t window, int64_t count, uint64_t seed) {
  if (window < 1 || count < 0)
    throw std::runtime_error("attn: makeSine: need window >= 1 and count >= 0, got window " +
                             std::to_string(window) + ", count " + std::to_string(count));
  Examples ex{Tensor(ATTN_F32, {count, window}), Tensor(ATTN_F32, {count, 1})};
  float *x = ex.x.data<float>();
  float *y = ex.y.data<float>();
  Rng rng(seed);
  const double step = 0.1;
  for (int64_t i = 0; i < count; ++i) {
    double phi = 2.0 * M_PI * rng.nextDouble();
    for (int64_t t = 0; t < window; ++t)
      x[i * window + t] = static_cast<float>(std::sin(phi + step * static_cast<double>(t)));
    y[i] = static_cast<float>(std::sin(phi + step * static_cast<double>(window)));
  }
  return ex;
}

} // namespace attn::data
