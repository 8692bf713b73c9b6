// A spec, as the runtime's task library and the pipelines take it: the one place where spec
// sections become runtime configurations (attn/task, attn/train) and pipeline options.
#pragma once

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "attn/app/Config.h"
#include "attn/task/Data.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/StepInputs.h"

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
/// Everything a compiled model's verbs read at run time (attn/app): the sections above,
/// `sample:`, `train:` and the spec itself.
app::ModelConfig modelConfig(const yaml::Spec &spec);
/// What the importer needs to know of a pair task's data.
yaml::ImportOptions importOptions(const task::PairData &data);

} // namespace attn::driver
