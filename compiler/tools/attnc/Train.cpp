// attnc train / eval: the training loop (runtime/train) over the compiled @train_step, and
// evaluation of a checkpoint.
#include "Data.h"
#include "Labelling.h"
#include "Translate.h"
#include "Verbs.h"


#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/train/Trainer.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>

namespace attnc {
namespace {

int64_t countWeights(const attn_program_info &info) {
  int64_t n = 0;
  for (int i = 0; i < info.num_params; ++i)
    if (!std::strchr(info.params[i].name, '/')) // optimizer state is not a weight
      n += attn::shapeNumel(attn::infoShape(info.params[i]));
  return n;
}

// What a pair model gets right on the validation pairs: a seq2seq model's decoded outputs,
// a tagger's tags or a classifier's labels.
void reportQuality(const attn::Program &program, const std::vector<attn::Tensor> &params,
                   const attn::yaml::Spec &s, const PairData &data) {
  if (s.task != "seq2seq") {
    double accuracy = labelAccuracy(program, params, pairSplit(s, data, data.valid));
    std::cout << s.name << ": validation accuracy " << std::setprecision(4) << 100.0 * accuracy
              << "% (" << (s.task == "tag" ? "tokens" : "sequences") << ")" << std::endl;
    return;
  }
  Accuracy a = Seq2SeqDecoder(program, params, s, data).accuracy(data.valid);
  std::cout << s.name << ": " << (s.decode.beam > 1 ? "beam " + std::to_string(s.decode.beam)
                                                    : std::string("greedy"))
            << " decoding of " << a.count << " validation pairs: exact match "
            << std::setprecision(4) << 100.0 * a.exactMatch << "%, token accuracy "
            << 100.0 * a.tokenAccuracy << "%" << std::endl;
}

// --resume continues a run only under the spec it was trained with: a changed learning rate or
// optimizer used to be taken silently (and a switch to sgd dropped Adam's moments). Changes to
// how long it trains and how often it validates, logs and saves are the point of resuming;
// other training changes need --accept-changes (and are listed); a different model never.
void checkResumable(const attn::yaml::Spec &s, const std::string &last, bool acceptChanges) {
  auto meta = attn::train::readCheckpointMetadata(last);
  checkCheckpointSpec(s, meta, last, attn::yaml::changesEquations,
                      "--resume continues a run of another model",
                      "train into another --out, or resume with the spec the run was trained with");
  auto changed = [](const std::string &k) { return !attn::yaml::resumable(k); };
  if (acceptChanges) { // listed, not refused
    for (const auto &d : checkpointDifferences(s, meta, last, changed))
      std::cout << s.name << ": resuming with " << d.key << " changed from " << d.stored
                << " to " << d.given << std::endl;
    return;
  }
  checkCheckpointSpec(s, meta, last, changed,
                      "--resume would continue the run with other training settings",
                      "restore them, add --accept-changes to resume with them anyway, or train "
                      "into another --out");
}

} // namespace

int train(Compiler &c, const Options &o) {
  const attn::yaml::Spec &s = c.spec();
  if (!c.import() || !c.addTraining() || !c.lower() || !c.lowerToLLVM())
    return 1;
  auto compiled = c.jit();
  if (!compiled)
    return 1;
  attn::Program program(compiled->info());
  std::vector<attn::Tensor> params = attn::initParams(program.info(), s.train.seed);

  attn::train::TrainOptions t;
  t.steps = o.steps.value_or(s.train.steps);
  t.schedule.type = s.train.schedule.type;
  t.schedule.lr = s.train.optimizer.lr;
  t.schedule.warmup = s.train.schedule.warmup;
  t.schedule.stepSize = s.train.schedule.stepSize;
  t.schedule.gamma = s.train.schedule.gamma;
  t.schedule.minLr = s.train.schedule.minLr;
  // The schedule spans the spec's steps: --steps N only stops early (and --resume goes on).
  t.schedule.totalSteps = s.train.steps;
  t.seed = s.train.seed;
  t.evalEvery = s.train.evalEvery;
  t.logEvery = s.train.logEvery;
  t.checkpointEvery = s.train.checkpointEvery;
  t.patience = s.train.patience;
  t.minDelta = s.train.minDelta;
  t.dir = !o.out.empty() ? o.out
          : !s.train.checkpointDir.empty() ? s.train.checkpointDir
                                           : "runs/" + s.name;
  t.resume = o.resume;
  t.overwrite = o.overwrite;
  if (o.resume && std::filesystem::exists(t.dir + "/last.safetensors"))
    checkResumable(s, t.dir + "/last.safetensors", o.acceptChanges);
  t.metadata = {{"model", s.name}, {"spec", attn::yaml::specToYaml(s)}};
  t.perStepInput = perStepInputs(s);
  attn::train::Split train = trainSplit(s), valid = validSplit(s);
  if (usesPairs(s)) {
    const PairData &data = pairData(s);
    for (auto &[key, value] : pairMetadata(data))
      t.metadata[key] = value;
    // The counts the model trains on: pairs longer than data.max_len are dropped, and said so.
    auto kept = [](const attn::train::Split &split) { return split[0].shape()[0]; };
    auto dropped = [&](const std::vector<attn::data::Pair> &pairs, int64_t n) {
      int64_t d = (int64_t)pairs.size() - n;
      return d > 0 ? " (" + std::to_string(d) + " longer than data.max_len = " +
                         std::to_string(s.data.maxLen) + " dropped)"
                   : std::string();
    };
    std::cout << s.name << ": " << kept(train) << " training" << dropped(data.train, kept(train))
              << " and " << kept(valid) << " validation pairs" << dropped(data.valid, kept(valid))
              << ", vocabularies of " << data.source.size() << " and " << data.target.size()
              << " tokens" << std::endl;
  }

  std::cout << s.name << ": training " << countWeights(program.info()) << " weights for "
            << t.steps << " steps (" << s.train.optimizer.type << ", lr "
            << s.train.optimizer.lr << ", " << s.train.schedule.type << " schedule, batch "
            << s.train.batchSize << ") into " << t.dir << std::endl;
  auto result = attn::train::train(program, params, train, valid, t);
  if (!result.error.empty()) {
    std::cerr << "attnc: error: " << result.error << "\n";
    return 1;
  }
  if (result.nothingToDo) {
    std::cout << s.name << ": nothing to train: the run in " << t.dir << " "
              << (result.stoppedEarly ? "stopped early" : "is") << " at step " << result.lastStep
              << (result.stoppedEarly ? "" : " and --steps is " + std::to_string(t.steps))
              << "; nothing was written" << std::endl;
    return 0;
  }
  std::cout << "done at step " << result.lastStep << (result.stoppedEarly ? " (early stop)" : "")
            << ": loss " << result.lastLoss;
  if (!std::isnan(result.bestValid))
    std::cout << ", best validation loss " << result.bestValid;
  std::cout << "\nwrote " << t.dir << "/"
            << (result.wroteBest ? "{last,best}.safetensors" : "last.safetensors")
            << ", metrics.jsonl, loss.png" << std::endl;
  if (usesPairs(s)) {
    // The model as the run leaves it in best.safetensors (early stopping restores it too).
    const PairData &data = pairData(s);
    std::string best = t.dir + "/best.safetensors";
    if (std::filesystem::exists(best))
      attn::train::loadCheckpoint(best, program.info(), params);
    reportQuality(program, params, s, data);
  }
  return 0;
}

int eval(Compiler &c, const Options &o) {
  std::string file;
  std::map<std::string, std::string> stored;
  if (int rc = loadForCheckpoint(c, o, file, stored))
    return rc;
  const attn::yaml::Spec &s = c.spec();
  std::optional<PairData> data;
  if (usesPairs(s)) {
    // The vocabularies are the checkpoint's; the validation pairs come from the spec's data.
    data = pairDataFromMetadata(s, stored, file);
    const PairData &fromSpec = pairData(s);
    data->valid = fromSpec.valid;
    c.setImportOptions(pairImportOptions(*data));
  }
  if (!c.import() || !c.lower() || !c.lowerToLLVM())
    return 1;
  auto compiled = c.jit();
  if (!compiled)
    return 1;
  attn::Program program(compiled->info());
  std::vector<attn::Tensor> params = attn::initParams(program.info(), s.train.seed);
  auto meta = attn::train::loadCheckpoint(file, program.info(), params, /*statesOptional=*/true);
  double loss = attn::train::evaluate(
      program, params, data ? pairSplit(s, *data, data->valid) : validSplit(s),
      perStepInputs(s));
  std::cout << s.name << ": validation loss " << loss << " (" << file << ", step "
            << (meta.count("step") ? meta.at("step") : "?") << ")" << std::endl;
  if (data)
    reportQuality(program, params, s, *data);
  return 0;
}

} // namespace attnc
