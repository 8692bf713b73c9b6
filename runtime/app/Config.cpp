#include "attn/app/Config.h"

#include "attn/task/Metadata.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

// Every member by name: a configuration missing one, or holding one of another kind, is
// refused (nlohmann's *_WITH_DEFAULT would silently take the default instead).
// Enumerations by name; an unknown name is an error (NLOHMANN_JSON_SERIALIZE_ENUM would map it
// to the first value without a word).
namespace attn::data {
static void to_json(nlohmann::json &j, Tokenize t) { j = tokenizeName(t); }
static void from_json(const nlohmann::json &j, Tokenize &t) {
  t = parseTokenize(j.get<std::string>());
}
} // namespace attn::data

namespace attn::task {
static void to_json(nlohmann::json &j, Task t) { j = taskName(t); }
static void from_json(const nlohmann::json &j, Task &t) { t = parseTask(j.get<std::string>()); }
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DataConfig, task, builtin, path, validPath, window, horizon,
                                   features, minLen, maxLen, symbols, tokens, vocabSize, spmModel,
                                   minCount, maxVocab, train, valid, seed, sharedVocab,
                                   reverseSource, skipBadLines, stream, streamBuffer)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecodeConfig, beam, lengthPenalty, maxLength, nbest, sample,
                                   temperature, topK, seed)
} // namespace attn::task

namespace attn::train {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TeacherForcingSpec, schedule, ratio, slope, k, min)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ScheduleSpec, type, lr, warmup, decaySteps, gamma, stepSize,
                                   minLr, totalSteps)
} // namespace attn::train

namespace attn::task {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepInputConfig, teacherForcing, dropout, softProbability, seed)
} // namespace attn::task

namespace attn::decode {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SampleOptions, length, temperature, topK, seed)
} // namespace attn::decode

namespace attn::app {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SampleConfig, options, prime)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TrainConfig, steps, batchSize, batchTokens, lengthBuckets,
                                   optimizer, schedule, seed, evalEvery, evalBleu, logEvery,
                                   checkpointEvery, patience, minDelta, checkpointDir)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ModelConfig, name, data, decode, sample, stepInputs, train, spec,
                                   equations)

std::string toJson(const ModelConfig &config) { return nlohmann::json(config).dump(1); }

ModelConfig fromJson(const std::string &text, const std::string &what) {
  try {
    return nlohmann::json::parse(text).get<ModelConfig>();
  } catch (const std::exception &e) { // nlohmann's, or an unknown task or tokenization
    throw std::runtime_error(what + ": not a model configuration this runtime reads (" +
                             std::string(e.what()) + ")");
  }
}

std::string runDirectory(const ModelConfig &c, const std::string &out) {
  return !out.empty()                     ? out
         : !c.train.checkpointDir.empty() ? c.train.checkpointDir
                                          : "runs/" + c.name;
}

task::Metadata checkpointMetadata(const ModelConfig &c) {
  return {{task::kModelKey, c.name},
          {task::kSpecKey, c.spec},
          {task::kEquationsKey, nlohmann::json(c.equations).dump()}};
}

void checkEquations(const ModelConfig &c, const task::Metadata &meta, const std::string &file) {
  auto it = meta.find(task::kEquationsKey);
  if (it == meta.end())
    return;
  std::map<std::string, std::string> stored;
  try {
    stored = nlohmann::json::parse(it->second).get<std::map<std::string, std::string>>();
  } catch (const std::exception &e) {
    throw std::runtime_error(file +
                             ": the checkpoint's metadata is damaged: its equations are "
                             "not a JSON object of strings (" +
                             std::string(e.what()) + ")");
  }
  // Keys on one side only are another attnc version's (a key added since, with its default),
  // not another model: the keys both record must agree.
  std::string differences;
  for (const auto &[key, ours] : c.equations) {
    auto theirs = stored.find(key);
    if (theirs != stored.end() && theirs->second != ours)
      differences +=
          "\n  " + key + ": " + theirs->second + " in the checkpoint, " + ours + " in this model";
  }
  if (!differences.empty())
    throw std::runtime_error(file + ": the checkpoint was trained as another model:" + differences +
                             "\n  hint: give a checkpoint trained from the spec " + c.name +
                             " was compiled from");
}

train::TrainOptions trainOptions(const ModelConfig &c, const std::string &dir) {
  train::TrainOptions t;
  t.steps = c.train.steps;
  t.schedule = c.train.schedule;
  t.seed = c.train.seed;
  t.evalEvery = c.train.evalEvery;
  t.logEvery = c.train.logEvery;
  t.checkpointEvery = c.train.checkpointEvery;
  t.patience = c.train.patience;
  t.minDelta = c.train.minDelta;
  t.dir = dir;
  t.metadata = checkpointMetadata(c);
  t.perStepInput = task::perStepInputs(c.stepInputs);
  return t;
}

} // namespace attn::app
