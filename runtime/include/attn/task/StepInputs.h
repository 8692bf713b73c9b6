// The loss's inputs that are drawn at every training step rather than read from the data
// (see attn::train::BatchHook), by name:
//   teacher [B, T]        scheduled sampling's coins: 1 reads the true previous token, with
//                         probability p(step) (train.teacher_forcing); always 1 at t = 0
//   forecast_teacher [B, M]  a forecaster's: drawn like teacher
//   dropout<k> [B, T, W]  dropout keep masks: 0, or 1 / (1 - p)
//   hard_noise [B, T, S]  hard attention's Gumbel noise -log(-log u), u ~ U(0, 1)
//   hard_soft [B, T]      its coins: 1 (read the soft expectation) with probability q
// Validation (step 0) gets all ones, the model without its training noise, except
// forecast_teacher, all zeros: a forecaster is validated on its own forecast (teacher
// forcing would hide how its errors compound); and hard_noise and hard_soft, zeros: hard
// attention reads its most likely positions. Drawn from Rng(seed, step, input), so a
// resumed run repeats them.
#ifndef ATTN_TASK_STEPINPUTS_H
#define ATTN_TASK_STEPINPUTS_H

#include "attn/train/Schedule.h"
#include "attn/Names.h"
#include "attn/train/Trainer.h"

namespace attn::task {

/// The names of the per-step inputs, as the importer writes them and the hook reads them.
inline constexpr const char *kTeacherInput = names::kTeacher;
inline constexpr const char *kForecastTeacherInput = names::kForecastTeacher;
inline constexpr const char *kDropoutPrefix = names::kDropoutPrefix;
inline constexpr const char *kHardNoiseInput = names::kHardNoise;
inline constexpr const char *kHardSoftInput = names::kHardSoft;

struct StepInputConfig {
  train::TeacherForcingSpec teacherForcing;
  double dropout = 0.0;
  double softProbability = 0.0; // model.attention.soft_probability (hard attention)
  uint64_t seed = 1; // train.seed
};

/// Throws on a schedule that cannot be evaluated (before training starts).
train::BatchHook perStepInputs(const StepInputConfig &config);

} // namespace attn::task

#endif
