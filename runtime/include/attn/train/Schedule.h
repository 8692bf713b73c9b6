// Learning-rate schedules for the training loop.
//
// `learningRate(spec, step)` is a pure function of the spec and the 1-based step number, so a
// resumed run gets exactly the rate it would have had without the interruption. With
// W = warmup, L = lr, t = step (t >= 1):
//
//   warm-up (shared by inverse_sqrt, cosine, linear_warmup): for t <= W,  L * t / W
//     (so the rate reaches L exactly at t = W; W = 0 means no warm-up)
//
//   constant       L
//   linear_warmup  warm-up, then L
//   inverse_sqrt   warm-up, then L * sqrt(W / t)           ("Attention Is All You Need", with the
//                  peak normalised to L); W = 0 behaves as W = 1: L / sqrt(t)
//   cosine         warm-up, then with T = totalSteps, p = min(1, (t - W) / (T - W)):
//                  minLr + (L - minLr) * (1 + cos(pi * p)) / 2
//                  (L right after warm-up, minLr from t = T on; requires T > W)
//   step           L * gamma^floor(t / stepSize)            (no warm-up; requires stepSize >= 1)
//
// `decaySteps` is not used by any of these types; it is kept so that specs which set it parse.
#ifndef ATTN_TRAIN_SCHEDULE_H
#define ATTN_TRAIN_SCHEDULE_H

#include <cstdint>
#include <string>

namespace attn::train {

struct ScheduleSpec {
  std::string type = "constant";
  double lr = 1e-3;
  int64_t warmup = 0;
  int64_t decaySteps = 0;
  double gamma = 0.1;
  int64_t stepSize = 1000;
  double minLr = 0;
  int64_t totalSteps = 0;
};

// The valid values of ScheduleSpec::type, comma-separated, for messages and --help texts:
// "constant, inverse_sqrt, cosine, step, linear_warmup".
const char *scheduleTypes();

// The learning rate for 1-based `step` (see the formulas above). Throws std::invalid_argument for
// an unknown type (the message lists the valid ones), step < 1, warmup < 0, stepSize < 1 (step)
// or totalSteps <= warmup (cosine).
double learningRate(const ScheduleSpec &spec, int64_t step);

// Scheduled sampling (Bengio et al., 2015): the probability that a seq2seq decoder reads the
// true previous token at 1-based step i, floored at `min`:
//   constant         ratio
//   linear           max(min, 1 - slope * i)
//   exponential      max(min, k^i)                      (0 < k < 1)
//   inverse_sigmoid  max(min, k / (k + exp(i / k)))     (k >= 1)
struct TeacherForcingSpec {
  std::string schedule = "constant";
  double ratio = 1.0, slope = 1e-4, k = 0.999, min = 0.0;
};
// Throws std::invalid_argument for an unknown schedule or a k outside its range.
double teacherForcingProbability(const TeacherForcingSpec &spec, int64_t step);

} // namespace attn::train

#endif // ATTN_TRAIN_SCHEDULE_H
