// attnc run: the forward pass in-process (a regressor's outputs, a language model's samples;
// seq2seq and labelling models in Translate.cpp and Labelling.cpp), printed by attn::app.
#include "Verbs.h"

#include "compiler/Driver/TaskConfig.h"

#include "attn/app/Verbs.h"

namespace attnc {

// The forward pass over `x` [n, window] in batches of the compiled batch size, or, for a
// language model, sampling.
int run(attn::driver::Session &session, const Common &c, const RunOptions &o) {
  // The checkpoint is checked against the spec before anything is compiled.
  if (!o.ckpt.empty() && !session.openCheckpoint(o.ckpt, c.overrides))
    return 1;
  const auto &s = session.spec();
  if (s.task == attn::yaml::Task::Seq2seq)
    return runSeq2Seq(session, o);
  if (s.task == attn::yaml::Task::Tag || s.task == attn::yaml::Task::Classify)
    return runLabeller(session, o);
  std::unique_ptr<attn::driver::Model> model = session.loadModel(o.seed);
  if (!model)
    return 1;
  attn::app::ModelConfig config = attn::driver::modelConfig(s);
  attn::app::Model m{*model->program, model->params, model->origin};
  if (s.task == attn::yaml::Task::Lm) {
    attn::decode::SampleOptions &so = config.sample.options;
    so.length = o.count.value_or(so.length);
    so.temperature = o.temperature.value_or(so.temperature);
    so.seed = o.sampleSeed.value_or(so.seed);
    config.sample.prime = o.prime.value_or(config.sample.prime);
    return attn::app::generate(
        config, m, attn::task::usesText(config.data) ? &session.compiledData() : nullptr);
  }
  return attn::app::runRegressor(config, m, o.input, o.output, o.count);
}

} // namespace attnc
