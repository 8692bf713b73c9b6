#include "attn/app/Bundle.h"

#include "attn/Init.h"
#include "attn/task/Metadata.h"
#include "attn/train/Trainer.h"

#include <cstring>

extern "C" {
extern const attn_program_info *const attn_bundle_program;
extern const attn_program_info *const attn_bundle_buckets[];
extern const char *const attn_bundle_weights_file;
extern const unsigned char attn_bundle_config[], attn_bundle_weights[];
extern const uint64_t attn_bundle_config_size, attn_bundle_weights_size;
}

namespace attn::app {

ModelConfig bundledConfig() {
  return fromJson(
      std::string(reinterpret_cast<const char *>(attn_bundle_config), attn_bundle_config_size),
      "the embedded configuration");
}

const attn_program_info *bundledProgram() { return attn_bundle_program; }

std::vector<const attn_program_info *> bundledBuckets() {
  std::vector<const attn_program_info *> out;
  for (const attn_program_info *const *p = attn_bundle_buckets; *p; ++p)
    out.push_back(*p);
  return out;
}

std::string bundledWeightsFile() {
  return attn_bundle_weights_file ? attn_bundle_weights_file : "";
}

namespace {
// A checkpoint given to the executable (beside it or with --ckpt) is of its model: the same
// name and, where the checkpoint records them, the same equations.
void checkModel(const Weights &w, const ModelConfig &config) {
  auto model = w.ckpt.metadata.find(task::kModelKey);
  if (model != w.ckpt.metadata.end() && model->second != config.name)
    throw std::runtime_error(w.name + ": a checkpoint of the model '" + model->second +
                             "', not of '" + config.name + "'");
  checkEquations(config, w.ckpt.metadata, w.name);
}
} // namespace

Weights bundledWeights(const std::string &dir) {
  Weights w;
  if (attn_bundle_weights_file) {
    w.name = dir + "/" + attn_bundle_weights_file;
    w.ckpt = checkpoint::load(w.name);
    checkModel(w, bundledConfig());
  } else {
    w.name = "the embedded weights";
    w.ckpt = checkpoint::parse(attn_bundle_weights, attn_bundle_weights_size, w.name);
  }
  return w;
}

Weights checkpointWeights(const std::string &path, const ModelConfig &config,
                          std::string *warning) {
  Weights w;
  w.name = task::checkpointFile(path, warning);
  w.ckpt = checkpoint::load(w.name);
  checkModel(w, config);
  return w;
}

void checkVocabularies(const ModelConfig &c, const task::PairData &data,
                       const task::PairData &compiled) {
  if (data.source.serialize() != compiled.source.serialize() ||
      data.target.serialize() != compiled.target.serialize() ||
      data.sourceTokens != compiled.sourceTokens || data.targetTokens != compiled.targetTokens)
    throw std::runtime_error(
        "the training data gives other vocabularies (" + std::to_string(data.source.size()) +
        " and " + std::to_string(data.target.size()) + " tokens) than " + c.name +
        " was compiled for (" + std::to_string(compiled.source.size()) + " and " +
        std::to_string(compiled.target.size()) + "); compile it again for this data");
}

task::PairData pairData(const ModelConfig &c, const Weights &w) {
  return task::pairDataFromMetadata(c.data.task, c.data.tokens, c.data.reverseSource,
                                    w.ckpt.metadata, w.name);
}

Loaded load(const Weights *w, uint64_t seed) {
  Loaded l;
  l.program = std::make_unique<Program>(attn_bundle_program);
  for (const attn_program_info *bucket : bundledBuckets())
    l.buckets.push_back(std::make_unique<Program>(bucket));
  l.params = initParams(l.program->info(), seed);
  l.origin = "initialised from seed " + std::to_string(seed);
  if (w) {
    train::loadParams(w->ckpt, w->name, l.program->info(), l.params, /*statesOptional=*/true);
    l.origin = "from " + w->name + " (step " + task::stepOf(w->ckpt.metadata) + ")";
  }
  return l;
}

void restartOptimizer(Loaded &l, uint64_t seed) {
  const attn_program_info &info = l.program->info();
  for (int i = 0; i < info.num_params; ++i)
    if (std::strchr(info.params[i].name, '/'))
      l.params[i] = initParam(info.params[i], seed);
}

} // namespace attn::app
