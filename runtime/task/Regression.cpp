#include "attn/task/Regression.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attn::task {

HorizonErrors horizonErrors(const Program &program, const std::vector<Tensor> &params,
                            const data::Examples &examples) {
  const attn_entry_info &forward = program.entry("forward");
  std::vector<int64_t> xShape(forward.inputs[0].shape,
                              forward.inputs[0].shape + forward.inputs[0].rank);
  int64_t rows = xShape[0], window = examples.x.shape()[1]; // (the input vector's width)
  int64_t n = examples.x.shape()[0], horizon = examples.y.shape()[1];
  if (xShape[1] != window || examples.y.shape()[0] != n || forward.outputs[0].rank != 2 ||
      forward.outputs[0].shape[1] != horizon)
    throw std::runtime_error("attn: horizonErrors: @forward reads windows of " +
                             std::to_string(xShape[1]) + " and predicts " +
                             std::to_string(forward.outputs[0].shape[1]) +
                             " values, but the examples have " + std::to_string(window) + " and " +
                             std::to_string(horizon));
  HorizonErrors e;
  e.mse.assign(horizon, 0.0);
  e.lastValue.assign(horizon, 0.0);
  e.zero.assign(horizon, 0.0);
  e.count = n;
  const float *x = examples.x.data<float>(), *y = examples.y.data<float>();
  for (int64_t start = 0; start < n; start += rows) {
    int64_t count = std::min(rows, n - start);
    Tensor xb(ATTN_F32, xShape); // rows past `count` stay zero
    std::copy(x + start * window, x + (start + count) * window, xb.data<float>());
    std::vector<Tensor> outputs = program.call("forward", params, {xb});
    const float *p = outputs[0].data<float>();
    for (int64_t r = 0; r < count; ++r) {
      float last = x[(start + r) * window + window - 1];
      for (int64_t k = 0; k < horizon; ++k) {
        double want = y[(start + r) * horizon + k];
        e.mse[k] += (p[r * horizon + k] - want) * (p[r * horizon + k] - want);
        e.lastValue[k] += (last - want) * (last - want);
        e.zero[k] += want * want;
      }
    }
  }
  for (int64_t k = 0; k < horizon && n > 0; ++k) {
    e.mse[k] /= (double)n;
    e.lastValue[k] /= (double)n;
    e.zero[k] /= (double)n;
  }
  return e;
}

} // namespace attn::task
