// The model linked into a standalone executable or library (`attnc compile --exe | --lib`):
// its program, configuration and weights, as symbols that attnc generates beside the model's
// object (compiler/Driver/Executable.cpp):
//   attn_bundle_program       the program's manifest (attn/abi.h)
//   attn_bundle_buckets       the manifests of its length buckets (decode.buckets), shortest
//                             first, ending in NULL
//   attn_bundle_config        its ModelConfig as JSON (attn_bundle_config_size bytes)
//   attn_bundle_weights       a safetensors image: the parameters and the metadata a
//                             checkpoint carries (spec, vocabularies, lengths);
//                             attn_bundle_weights_size bytes, 0 when they are in a file instead,
//   attn_bundle_weights_file  named by this (NULL when embedded).
// Only a program linked with those symbols may call these functions (attnc, which has none,
// never does; being in a static library, this file is then not linked at all).
#ifndef ATTN_APP_BUNDLE_H
#define ATTN_APP_BUNDLE_H

#include "attn/Program.h"
#include "attn/app/Config.h"
#include "attn/app/Verbs.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/task/Data.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::app {

/// The bundled configuration; throws when it does not parse.
ModelConfig bundledConfig();
const attn_program_info *bundledProgram();
/// The bundled length buckets (decode.buckets), shortest first; none without.
std::vector<const attn_program_info *> bundledBuckets();

/// Parameters with the metadata they carry, and what to call them in messages and reports.
struct Weights {
  checkpoint::Checkpoint ckpt;
  std::string name;
};
/// The bundled weights: embedded, or the weights file in `dir` (an executable's directory),
/// refused as checkpointWeights refuses another model's.
Weights bundledWeights(const std::string &dir);
/// A checkpoint's (FILE, or DIR meaning its best, else last; `warning` as
/// task::checkpointFile gives it). Refused (throws) when it is another model's: its stored
/// model name is not config.name, or the equations it records are not config's
/// (checkEquations).
Weights checkpointWeights(const std::string &path, const ModelConfig &config,
                          std::string *warning = nullptr);
/// Throws unless `data` (built from config.data to train on) has the vocabularies the model
/// was compiled for (`compiled`): the program's shapes and the ids' meaning are theirs.
void checkVocabularies(const ModelConfig &config, const task::PairData &data,
                       const task::PairData &compiled);
/// Whether the weights are in a file rather than embedded (its name, else "").
std::string bundledWeightsFile();

/// A pair task's vocabularies and compiled lengths, from the weights' metadata.
task::PairData pairData(const ModelConfig &config, const Weights &weights);

/// The bundled program with parameters: those of `weights`, or (null) freshly initialised
/// from `seed`.
struct Loaded {
  std::unique_ptr<Program> program;
  std::vector<std::unique_ptr<Program>> buckets; // bundledBuckets()
  std::vector<Tensor> params;
  std::string origin;
  Model model() {
    Model m{*program, params, origin};
    for (const auto &bucket : buckets)
      m.buckets.push_back(bucket.get());
    return m;
  }
};
Loaded load(const Weights *weights, uint64_t seed);
/// Keeps the weights and initialises the optimizer's state afresh (the parameters whose names
/// hold a '/': Adam's moments): training that continues from a checkpoint's weights is a new
/// run, and the moments belong to the checkpoint's own step count.
void restartOptimizer(Loaded &loaded, uint64_t seed);

} // namespace attn::app

#endif
