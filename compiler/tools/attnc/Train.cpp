// attnc train / eval: the training loop (runtime/train) over the compiled @train_step, and
// evaluation of a checkpoint; what they print is attn::app's, as a standalone executable's.
#include "Verbs.h"

#include "compiler/Driver/Checkpoint.h"
#include "compiler/Driver/TaskConfig.h"

#include "attn/app/Verbs.h"
#include "attn/plot/Plot.h"
#include "attn/task/Metadata.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace attnc {
namespace {

// The app's view of a compiled model, with its decode.buckets programs (they stay owned by
// `buckets`).
attn::app::Model withBuckets(attn::driver::Model &model,
                             const std::vector<std::unique_ptr<attn::driver::Model>> &buckets) {
  attn::app::Model m{*model.program, model.params, model.origin};
  for (const auto &bucket : buckets)
    m.buckets.push_back(bucket->program.get());
  return m;
}

} // namespace

int train(attn::driver::Session &session, const Common &, const TrainOptions &o) {
  const attn::yaml::Spec &s = session.spec();
  attn::app::ModelConfig config = attn::driver::modelConfig(s);
  bool pairs = attn::task::hasVocabularies(session.dataConfig());
  int ranks = o.comm ? o.comm->size() : 1;
  std::string dir = attn::app::runDirectory(config, o.out);
  session.setDataCacheDir(dir + "/data"); // a streamed corpus's index, reused by later runs
  const attn::task::PairData *data = pairs ? &session.trainingData() : nullptr;
  std::string last = dir + "/last.safetensors";
  if (o.resume && std::filesystem::exists(last))
    for (const std::string &line : attn::driver::checkResumable(
             s, attn::train::readCheckpointMetadata(last), last, o.acceptChanges,
             data ? attn::task::dataFingerprint(*data) : ""))
      std::cout << s.name << ": " << line << std::endl;
  if (!session.runTo(attn::driver::Stage::Grad))
    return 1;
  // One process calls @train_step, never @loss_grad (a data-parallel rank's gradients): not
  // compiling it saves about a third of the program's code.
  if (ranks == 1 &&
      !session.removeEntries([](llvm::StringRef name) { return name == "loss_grad"; }))
    return 1;
  std::unique_ptr<attn::driver::Model> model =
      ranks > 1 ? session.loadModelOnce(*o.comm, std::max(o.rankTimeout, 1800.0), s.train.seed)
                : session.loadModel(s.train.seed);
  if (!model)
    return 1;
  attn::app::TrainRun run;
  run.steps = o.steps;
  run.out = o.out;
  run.resume = o.resume;
  run.overwrite = o.overwrite;
  run.comm = o.comm;
  run.plotLoss = attn::plot::writeLossPlot;
  // (Multi-rank runs report quality on rank 0 with the full-length program alone: the buckets
  // would be compiled on every rank for one report.)
  std::optional<std::vector<std::unique_ptr<attn::driver::Model>>> buckets =
      ranks > 1 ? std::make_optional(std::vector<std::unique_ptr<attn::driver::Model>>())
                : session.loadBuckets();
  if (!buckets)
    return 1;
  // train.batch_tokens: the training step once per batch shape (kept here, used by the run).
  std::vector<std::unique_ptr<attn::driver::Model>> shapes;
  run.compileBuckets = [&](const std::vector<attn::task::TokenBucket> &plan) {
    std::vector<const attn::Program *> programs;
    for (const attn::task::TokenBucket &b : plan) {
      shapes.push_back(session.loadTrainingBucket({b.sourceLength, b.targetLength, 0, b.rows},
                                                  o.comm, std::max(o.rankTimeout, 1800.0)));
      if (!shapes.back())
        return std::vector<const attn::Program *>();
      programs.push_back(shapes.back()->program.get());
    }
    return programs;
  };
  return attn::app::train("attnc", config, withBuckets(*model, *buckets), data, run);
}

int eval(attn::driver::Session &session, const Common &c, const std::string &ckpt,
         const EvalOptions &o) {
  if (!o.hyp.empty()) { // another system's translations: scored, no model
    if (o.pairs.empty() || !ckpt.empty())
      return usageError("--hyp FILE is scored against the targets of --pairs FILE.tsv, "
                        "without --ckpt");
    return attn::app::scoreTranslations(o.pairs, o.hyp);
  }
  if (ckpt.empty())
    return usageError("eval needs --ckpt DIR|FILE");
  if (int rc = load(session, c, ckpt))
    return rc;
  attn::app::ModelConfig config = attn::driver::modelConfig(session.spec());
  // The vocabularies are the checkpoint's; the validation pairs come from the spec's data.
  const attn::task::PairData *data =
      attn::task::hasVocabularies(session.dataConfig()) ? &session.compiledData(true) : nullptr;
  if (o.bleu && config.data.task != attn::task::Task::Seq2Seq)
    return usageError("--bleu scores a seq2seq model's translations; " + config.name +
                      " is task '" + attn::task::taskName(config.data.task) + "'");
  if (!o.pairs.empty() && !data)
    return usageError("--pairs gives text pairs; " + config.name + " is task '" +
                      attn::task::taskName(config.data.task) + "'");
  attn::task::PairData test;
  if (!o.pairs.empty()) {
    test = *data;
    test.valid = attn::data::readTsv(o.pairs);
    data = &test;
  }
  std::unique_ptr<attn::driver::Model> model = session.loadModel();
  if (!model)
    return 1;
  std::optional<std::vector<std::unique_ptr<attn::driver::Model>>> buckets = session.loadBuckets();
  if (!buckets)
    return 1;
  return attn::app::evaluate(config, withBuckets(*model, *buckets), data, session.checkpointPath(),
                             attn::task::stepOf(session.checkpointMetadata()), o.bleu);
}

} // namespace attnc
