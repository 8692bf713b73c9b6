// A spec, as the runtime's task library and the pipelines take it: the one place where spec
// sections become runtime configurations (attn/task, attn/train) and pipeline options.
#pragma once

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "attn/task/Data.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/StepInputs.h"
#include "attn/train/Trainer.h"

namespace attn::driver {

/// `task:` and `data:` (and the model keys that shape the data: shared embeddings, reversed
/// sources).
task::DataConfig dataConfig(const yaml::Spec &spec);
/// `decode:`.
task::DecodeConfig decodeConfig(const yaml::Spec &spec);
/// `train.teacher_forcing`, the model's dropout and `train.seed`.
task::StepInputConfig stepInputConfig(const yaml::Spec &spec);
/// `train:` as the training pipeline's options (optimizer, clipping).
pipelines::TrainingOptions trainingOptions(const yaml::TrainSpec &train);
/// `train:` as the training loop's options; `dir` is the run directory. The schedule spans
/// train.steps (so `--steps N` only stops early, and --resume goes on).
train::TrainOptions trainOptions(const yaml::Spec &spec, const std::string &dir);
/// The run directory: `out` if given, else train.checkpoint.dir, else runs/<name>.
std::string runDirectory(const yaml::Spec &spec, const std::string &out);
/// What the importer needs to know of a pair task's data.
yaml::ImportOptions importOptions(const task::PairData &data);

} // namespace attn::driver
