// A compiled model's configuration as its verbs (attn/app/Verbs.h) read it at run time: the
// runtime side of a spec, with no YAML and no compiler. attnc fills one from the spec
// (compiler/Driver/TaskConfig.h); a standalone executable (`attnc compile --exe`) carries one
// as JSON and reads it back.
#ifndef ATTN_APP_CONFIG_H
#define ATTN_APP_CONFIG_H

#include "attn/decode/Sample.h"
#include "attn/task/Data.h"
#include "attn/task/Metadata.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/StepInputs.h"
#include "attn/train/Trainer.h"

#include <map>
#include <string>

namespace attn::app {

/// `sample:`: how a language model generates.
struct SampleConfig {
  decode::SampleOptions options;
  std::string prime = "The ";
};

/// `train:`: the training loop's settings, and what a report says of the optimizer.
struct TrainConfig {
  int64_t steps = 1000, batchSize = 32;
  int64_t batchTokens = 0, lengthBuckets = 4; // token-count batches (task::planTokenBatches)
  std::string optimizer = "adam";
  train::ScheduleSpec schedule; // schedule.lr is the optimizer's learning rate
  uint64_t seed = 1;
  int64_t evalEvery = 100, logEvery = 50, checkpointEvery = 500, patience = 0;
  double minDelta = 0.0;
  bool evalBleu = false;     // seq2seq: BLEU and chrF2 of the validation pairs at each pass
  std::string checkpointDir; // train.checkpoint.dir; "": runs/<name>
};

struct ModelConfig {
  std::string name;
  task::DataConfig data; // data.task is the model's task
  task::DecodeConfig decode;
  SampleConfig sample;
  task::StepInputConfig stepInputs;
  TrainConfig train;
  std::string spec; // the spec with every default filled in (YAML), stored in checkpoints
  // The spec's keys that change the model's equations, with their values
  // (task::kEquationsKey): stored in checkpoints, and what a checkpoint given to an
  // executable must agree with.
  std::map<std::string, std::string> equations;
};

/// The metadata a run of `config` writes into its checkpoints: its name, spec and equations.
task::Metadata checkpointMetadata(const ModelConfig &config);
/// Throws when checkpoint `file`'s metadata records other values than `config` for keys that
/// change the equations, naming every such key with both values. Keys one side records and
/// the other not (another attnc version's) are not compared; a checkpoint that records none
/// (written before checkpoints did) passes: its name, tensors and shapes are what is checked.
void checkEquations(const ModelConfig &config, const task::Metadata &meta, const std::string &file);

/// As JSON text, and back: throws std::runtime_error naming `what` on text that is not a
/// configuration this runtime reads (a member missing or of the wrong kind).
std::string toJson(const ModelConfig &config);
ModelConfig fromJson(const std::string &text, const std::string &what);

/// The run directory: `out` if given, else train.checkpoint.dir, else runs/<name>.
std::string runDirectory(const ModelConfig &config, const std::string &out);
/// `train:` as the training loop's options, writing into `dir` (the schedule spans
/// train.steps, so a shorter --steps only stops early and --resume goes on).
train::TrainOptions trainOptions(const ModelConfig &config, const std::string &dir);

} // namespace attn::app

#endif
