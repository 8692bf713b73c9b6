// Regressors and forecasters (task: regress): the error of their @forward predictions
// (x f32 [B, N] or [B, N, 1]) -> y f32 [B, M] per predicted step, against a baseline.
#ifndef ATTN_TASK_REGRESSION_H
#define ATTN_TASK_REGRESSION_H

#include "attn/Program.h"
#include "attn/data/Sine.h"

#include <cstdint>
#include <vector>

namespace attn::task {

/// Per horizon step k (of M): the mean squared error of @forward's y[:, k], and those of two
/// naive predictions: the window's last value (for a forecast), and 0 (the mean of a wave),
/// over every example.
struct HorizonErrors {
  std::vector<double> mse, lastValue, zero;
  int64_t count = 0;
};

/// Calls @forward on `examples` (x [count, N], y [count, M]) in batches of its compiled rows,
/// the last one zero-padded. Throws if the shapes do not match the program's.
HorizonErrors horizonErrors(const Program &program, const std::vector<Tensor> &params,
                            const data::Examples &examples);

} // namespace attn::task

#endif
