// attnc train / eval: the training loop (runtime/train) over the compiled @train_step, and
// evaluation of a checkpoint.
#include "Verbs.h"

#include "compiler/Driver/Checkpoint.h"
#include "compiler/Driver/TaskConfig.h"

#include "attn/Program.h"
#include "attn/plot/Plot.h"
#include "attn/task/Labelling.h"
#include "attn/task/Metadata.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/train/Trainer.h"

#include <algorithm>
#include <chrono>
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
void reportQuality(const attn::driver::Model &m, const attn::yaml::Spec &s,
                   const attn::task::PairData &data) {
  attn::task::Task task = attn::task::parseTask(attn::yaml::nameOf(s.task));
  if (task != attn::task::Task::Seq2Seq) {
    double accuracy = attn::task::labelAccuracy(*m.program, m.params,
                                                attn::task::pairSplit(task, data, data.valid));
    std::cout << s.name << ": validation accuracy " << std::setprecision(4) << 100.0 * accuracy
              << "% (" << (s.task == attn::yaml::Task::Tag ? "tokens" : "sequences") << ")"
              << std::endl;
    return;
  }
  attn::task::Accuracy a =
      attn::task::Seq2SeqDecoder(*m.program, m.params, data, attn::driver::decodeConfig(s))
          .accuracy(data.valid);
  std::cout << s.name << ": " << (s.decode.beam > 1 ? "beam " + std::to_string(s.decode.beam)
                                                    : std::string("greedy"))
            << " decoding of " << a.count << " validation pairs: exact match "
            << std::setprecision(4) << 100.0 * a.exactMatch << "%, token accuracy "
            << 100.0 * a.tokenAccuracy << "%" << std::endl;
}

// "N training (D longer than data.max_len = M dropped) and ... validation pairs, ..."
void reportPairs(const attn::yaml::Spec &s, const attn::task::PairData &data,
                 const attn::train::Split &train, const attn::train::Split &valid) {
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

} // namespace

int train(attn::driver::Session &session, const Common &, const TrainOptions &o) {
  const attn::yaml::Spec &s = session.spec();
  attn::task::DataConfig dataConfig = session.dataConfig();
  bool pairs = attn::task::usesPairs(dataConfig.task);
  attn::train::TrainOptions t =
      attn::driver::trainOptions(s, attn::driver::runDirectory(s, o.out));
  t.steps = o.steps.value_or(s.train.steps);
  t.resume = o.resume;
  t.overwrite = o.overwrite;
  t.plotLoss = attn::plot::writeLossPlot;
  t.comm = o.comm;
  int ranks = o.comm ? o.comm->size() : 1;
  bool rank0 = !o.comm || o.comm->rank() == 0;
  const attn::task::PairData *data = pairs ? &session.trainingData() : nullptr;
  std::string last = t.dir + "/last.safetensors";
  if (o.resume && std::filesystem::exists(last))
    for (const std::string &line : attn::driver::checkResumable(
             s, attn::train::readCheckpointMetadata(last), last, o.acceptChanges,
             data ? attn::task::dataFingerprint(data->train) : ""))
      std::cout << s.name << ": " << line << std::endl;
  if (!session.runTo(attn::driver::Stage::Grad))
    return 1;
  std::unique_ptr<attn::driver::Model> model =
      ranks > 1 ? session.loadModelOnce(*o.comm, std::max(o.rankTimeout, 1800.0), s.train.seed)
                : session.loadModel(s.train.seed);
  if (!model)
    return 1;
  attn::train::Split train = attn::task::trainSplit(dataConfig, data),
                     valid = attn::task::validSplit(dataConfig, data);
  if (data) {
    for (auto &[key, value] : attn::task::pairMetadata(*data))
      t.metadata[key] = value;
    reportPairs(s, *data, train, valid);
  }

  std::cout << s.name << ": training " << countWeights(model->program->info()) << " weights for "
            << t.steps << " steps (" << attn::yaml::nameOf(s.train.optimizer.type) << ", lr "
            << s.train.optimizer.lr << ", " << attn::yaml::nameOf(s.train.schedule.type)
            << " schedule, batch " << s.train.batchSize
            << (ranks > 1 ? " over " + std::to_string(ranks) + " ranks (" +
                                std::to_string(s.train.batchSize / ranks) + " each)"
                          : std::string())
            << ") into " << t.dir << std::endl;
  auto started = std::chrono::steady_clock::now();
  auto result = attn::train::train(*model->program, model->params, train, valid, t);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
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
  if (ranks > 1) {
    int64_t steps = result.lastStep - result.firstStep + 1;
    std::cout << s.name << ": " << ranks << " ranks, " << std::setprecision(4)
              << (double)steps / seconds << " steps/s; the gradients' all-reduce took "
              << 1e3 * result.allReduceSeconds << " ms per step (median)" << std::endl;
  }
  if (data && rank0) {
    // The model as the run leaves it in best.safetensors (early stopping restores it too).
    std::string best = t.dir + "/best.safetensors";
    if (std::filesystem::exists(best))
      attn::train::loadCheckpoint(best, model->program->info(), model->params);
    reportQuality(*model, s, *data);
  }
  return 0;
}

int eval(attn::driver::Session &session, const Common &c, const std::string &ckpt) {
  if (ckpt.empty())
    return usageError("eval needs --ckpt DIR|FILE");
  if (int rc = load(session, c, ckpt))
    return rc;
  const attn::yaml::Spec &s = session.spec();
  attn::task::DataConfig dataConfig = session.dataConfig();
  // The vocabularies are the checkpoint's; the validation pairs come from the spec's data.
  const attn::task::PairData *data =
      attn::task::usesPairs(dataConfig.task) ? &session.compiledData(true) : nullptr;
  std::unique_ptr<attn::driver::Model> model = session.loadModel();
  if (!model)
    return 1;
  double loss = attn::train::evaluate(
      *model->program, model->params,
      data ? attn::task::pairSplit(dataConfig.task, *data, data->valid)
           : attn::task::validSplit(dataConfig),
      attn::task::perStepInputs(attn::driver::stepInputConfig(s)));
  std::cout << s.name << ": validation loss " << loss << " (" << session.checkpointPath()
            << ", step " << attn::task::stepOf(session.checkpointMetadata()) << ")" << std::endl;
  if (data)
    reportQuality(*model, s, *data);
  return 0;
}

} // namespace attnc
