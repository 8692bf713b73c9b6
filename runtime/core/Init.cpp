#include "attn/Init.h"

#include "attn/Program.h"
#include "attn/Random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace attn {

Tensor initParam(const attn_tensor_info &param, uint64_t seed) {
  const std::string name = param.name ? param.name : "";
  Tensor t = makeTensor(param);
  if (!param.init)
    throw std::runtime_error("attn: parameter '" + name + "' has no init");
  const std::string init = param.init;
  const int64_t n = t.numel();

  if (init == "zeros")
    return t; // tensors are zero-filled on allocation
  if (init == "ones") {
    if (t.dtype() == ATTN_I32)
      std::fill_n(t.data<int32_t>(), n, 1);
    else
      std::fill_n(t.data<float>(), n, 1.0f);
    return t;
  }
  if (init != "uniform" && init != "normal" && init != "constant" && init != "alibi")
    throw std::runtime_error("attn: parameter '" + name + "': unknown init '" + init +
                             "' (expected zeros, ones, uniform, normal, constant or alibi)");
  if (t.dtype() != ATTN_F32)
    throw std::runtime_error("attn: parameter '" + name + "': init '" + init +
                             "' needs an f32 tensor, got " + dtypeName(t.dtype()));

  Rng rng(seed ^ fnv1a64(name));
  float *x = t.data<float>();
  const double scale = param.scale;
  if (init == "constant") {
    std::fill_n(x, n, static_cast<float>(scale));
    return t;
  }
  if (init == "alibi") {
    for (int64_t k = 0; k < n; ++k)
      x[k] = static_cast<float>(std::exp2(-8.0 * (double)(k + 1) / (double)n));
    return t;
  }
  if (init == "uniform") {
    for (int64_t i = 0; i < n; ++i)
      x[i] = static_cast<float>((2.0 * rng.nextDouble() - 1.0) * scale);
    return t;
  }
  const double twoPi = 2.0 * M_PI;
  for (int64_t i = 0; i < n; i += 2) {
    double u1 = rng.nextDouble();
    double u2 = rng.nextDouble();
    double r = std::sqrt(-2.0 * std::log(1.0 - u1));
    x[i] = static_cast<float>(scale * r * std::cos(twoPi * u2));
    if (i + 1 < n)
      x[i + 1] = static_cast<float>(scale * r * std::sin(twoPi * u2));
  }
  return t;
}

std::vector<Tensor> initParams(const attn_program_info &info, uint64_t seed) {
  std::vector<Tensor> params;
  params.reserve(info.num_params);
  for (int32_t i = 0; i < info.num_params; ++i)
    params.push_back(initParam(info.params[i], seed));
  return params;
}

} // namespace attn
