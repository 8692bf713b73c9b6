#include "attn/task/StepInputs.h"

#include "attn/Random.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attn::task {

train::BatchHook perStepInputs(const StepInputConfig &config) {
  train::teacherForcingProbability(config.teacherForcing, 1); // reports a bad k up front
  return [config](int64_t step, const std::string &name, Tensor &t) {
    float *v = t.data<float>();
    if (step == 0) {
      bool zeros =
          name == kForecastTeacherInput || name == kHardNoiseInput || name == kHardSoftInput;
      std::fill(v, v + t.numel(), zeros ? 0.0f : 1.0f);
      return;
    }
    Rng rng(fnv1a64(name) ^ (config.seed * 1000003ull + (uint64_t)step));
    if (name == kTeacherInput || name == kForecastTeacherInput) {
      double p = train::teacherForcingProbability(config.teacherForcing, step);
      int64_t steps = t.shape()[1];
      for (int64_t k = 0; k < t.numel(); ++k)
        v[k] = k % steps == 0 || rng.nextDouble() < p ? 1.0f : 0.0f;
      return;
    }
    if (name == kHardNoiseInput) {
      // Gumbel(0, 1); u kept inside (0, 1) so that the noise stays finite.
      for (int64_t k = 0; k < t.numel(); ++k) {
        double u = std::clamp(rng.nextDouble(), 1e-12, 1.0 - 1e-12);
        v[k] = (float)-std::log(-std::log(u));
      }
      return;
    }
    if (name == kHardSoftInput) {
      for (int64_t k = 0; k < t.numel(); ++k)
        v[k] = rng.nextDouble() < config.softProbability ? 1.0f : 0.0f;
      return;
    }
    if (name.rfind(kDropoutPrefix, 0) == 0) {
      float keep = (float)(1.0 / (1.0 - config.dropout));
      for (int64_t k = 0; k < t.numel(); ++k)
        v[k] = rng.nextDouble() < config.dropout ? 0.0f : keep;
      return;
    }
    throw std::runtime_error("attn: no per-step rule for the input '" + name + "'");
  };
}

} // namespace attn::task
