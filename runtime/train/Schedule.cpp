#include "attn/train/Schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attn::train {

namespace {

constexpr double kPi = 3.14159265358979323846;

[[noreturn]] void invalid(const std::string &msg) {
  throw std::invalid_argument("learning-rate schedule: " + msg);
}

bool inWarmup(const ScheduleSpec &s, int64_t step) { return s.warmup > 0 && step <= s.warmup; }

// Linear ramp that reaches lr exactly at step == warmup.
double warmupRate(const ScheduleSpec &s, int64_t step) {
  return s.lr * static_cast<double>(step) / static_cast<double>(s.warmup);
}

double inverseSqrt(const ScheduleSpec &s, int64_t step) {
  if (inWarmup(s, step))
    return warmupRate(s, step);
  // Without warm-up the decay starts at step 1 (as if warmup were 1), rather than being 0.
  double w = static_cast<double>(s.warmup > 0 ? s.warmup : 1);
  return s.lr * std::sqrt(w / static_cast<double>(step));
}

double cosine(const ScheduleSpec &s, int64_t step) {
  if (s.totalSteps <= s.warmup)
    invalid("cosine needs totalSteps > warmup, got totalSteps " + std::to_string(s.totalSteps) +
            " and warmup " + std::to_string(s.warmup));
  if (inWarmup(s, step))
    return warmupRate(s, step);
  double p = static_cast<double>(step - s.warmup) / static_cast<double>(s.totalSteps - s.warmup);
  p = std::min(p, 1.0); // hold minLr after totalSteps instead of climbing back up
  return s.minLr + (s.lr - s.minLr) * 0.5 * (1.0 + std::cos(kPi * p));
}

double stepDecay(const ScheduleSpec &s, int64_t step) {
  if (s.stepSize < 1)
    invalid("step needs stepSize >= 1, got " + std::to_string(s.stepSize));
  return s.lr * std::pow(s.gamma, static_cast<double>(step / s.stepSize));
}

} // namespace

const char *scheduleTypes() { return "constant, inverse_sqrt, cosine, step, linear_warmup"; }

double learningRate(const ScheduleSpec &spec, int64_t step) {
  if (step < 1)
    invalid("steps count from 1, got " + std::to_string(step));
  if (spec.warmup < 0)
    invalid("warmup must be >= 0, got " + std::to_string(spec.warmup));
  if (spec.type == "constant")
    return spec.lr;
  if (spec.type == "linear_warmup")
    return inWarmup(spec, step) ? warmupRate(spec, step) : spec.lr;
  if (spec.type == "inverse_sqrt")
    return inverseSqrt(spec, step);
  if (spec.type == "cosine")
    return cosine(spec, step);
  if (spec.type == "step")
    return stepDecay(spec, step);
  invalid("unknown type '" + spec.type + "' (valid: " + scheduleTypes() + ")");
}

double teacherForcingProbability(const TeacherForcingSpec &s, int64_t step) {
  double i = static_cast<double>(step), p;
  if (s.schedule == "constant") {
    p = s.ratio;
  } else if (s.schedule == "linear") {
    p = 1.0 - s.slope * i;
  } else if (s.schedule == "exponential") {
    if (!(s.k > 0.0 && s.k < 1.0))
      throw std::invalid_argument("teacher forcing: exponential decay needs 0 < k < 1");
    p = std::pow(s.k, i);
  } else if (s.schedule == "inverse_sigmoid") {
    if (!(s.k >= 1.0))
      throw std::invalid_argument("teacher forcing: inverse_sigmoid decay needs k >= 1");
    p = s.k / (s.k + std::exp(i / s.k));
  } else {
    throw std::invalid_argument("teacher forcing: unknown schedule '" + s.schedule +
                                "' (constant, linear, exponential, inverse_sigmoid)");
  }
  return std::clamp(std::max(p, s.min), 0.0, 1.0);
}

} // namespace attn::train
