#include "compiler/Driver/TaskConfig.h"

#include "attn/task/Metadata.h"

namespace attn::driver {

task::DataConfig dataConfig(const yaml::Spec &s) {
  const yaml::DataSpec &d = s.data;
  task::DataConfig c;
  c.task = task::parseTask(yaml::nameOf(s.task));
  c.builtin = d.builtin;
  c.path = d.path;
  c.validPath = d.validPath;
  c.window = d.window;
  c.horizon = d.horizon;
  c.features = d.features;
  c.minLen = d.minLen;
  c.maxLen = d.maxLen;
  c.symbols = d.symbols;
  c.tokens = data::parseTokenize(yaml::nameOf(d.tokens));
  c.vocabSize = d.vocabSize;
  c.spmModel = d.spmModel;
  c.minCount = d.minCount;
  c.maxVocab = d.maxVocab;
  c.train = d.train;
  c.valid = d.valid;
  c.seed = d.seed;
  c.sharedVocab = d.sharedVocab || (s.model.transformer && s.model.transformer->shareEmbeddings);
  c.reverseSource = s.model.seq2seq.reverseSource;
  c.skipBadLines = d.skipBadLines;
  c.stream = d.stream;
  c.streamBuffer = d.streamBuffer;
  return c;
}

task::DecodeConfig decodeConfig(const yaml::Spec &s) {
  task::DecodeConfig c;
  c.beam = s.decode.beam;
  c.lengthPenalty = s.decode.lengthPenalty;
  c.maxLength = s.decode.maxLength;
  c.nbest = s.decode.nbest;
  c.sample = s.decode.sample;
  c.temperature = s.decode.temperature;
  c.topK = s.decode.topK;
  c.seed = s.decode.seed;
  return c;
}

task::StepInputConfig stepInputConfig(const yaml::Spec &s) {
  task::StepInputConfig c;
  const yaml::TeacherForcingSpec &tf = s.train.teacherForcing;
  c.teacherForcing.schedule = yaml::nameOf(tf.schedule);
  c.teacherForcing.ratio = tf.ratio;
  c.teacherForcing.slope = tf.slope;
  c.teacherForcing.k = tf.k;
  c.teacherForcing.min = tf.min;
  c.dropout = s.model.rnn           ? s.model.rnn->dropout
              : s.model.transformer ? s.model.transformer->dropout
              : s.model.conv        ? s.model.conv->dropout
                                    : 0.0;
  if (s.model.attention && s.model.attention->type == yaml::AttentionType::Hard)
    c.softProbability = s.model.attention->softProbability;
  c.seed = s.train.seed;
  return c;
}

pipelines::TrainingOptions trainingOptions(const yaml::TrainSpec &t) {
  pipelines::TrainingOptions o;
  o.optimizer = yaml::nameOf(t.optimizer.type);
  o.momentum = t.optimizer.momentum;
  o.beta1 = t.optimizer.beta1;
  o.beta2 = t.optimizer.beta2;
  o.epsilon = t.optimizer.epsilon;
  o.weightDecay = t.optimizer.weightDecay;
  o.clipNorm = t.clipNorm;
  o.scanMemoryMb = t.scanMemory;
  return o;
}

app::ModelConfig modelConfig(const yaml::Spec &s) {
  app::ModelConfig c;
  c.name = s.name;
  c.data = dataConfig(s);
  c.decode = decodeConfig(s);
  c.sample.options.length = s.sample.length;
  c.sample.options.temperature = s.sample.temperature;
  c.sample.options.topK = s.sample.topK;
  c.sample.options.seed = s.sample.seed;
  c.sample.prime = s.sample.prime;
  c.stepInputs = stepInputConfig(s);
  app::TrainConfig &t = c.train;
  t.steps = s.train.steps;
  t.batchSize = s.train.batchSize;
  t.batchTokens = s.train.batchTokens;
  t.lengthBuckets = s.train.lengthBuckets;
  t.optimizer = yaml::nameOf(s.train.optimizer.type);
  t.schedule.type = yaml::nameOf(s.train.schedule.type);
  t.schedule.lr = s.train.optimizer.lr;
  t.schedule.warmup = s.train.schedule.warmup;
  t.schedule.stepSize = s.train.schedule.stepSize;
  t.schedule.gamma = s.train.schedule.gamma;
  t.schedule.minLr = s.train.schedule.minLr;
  t.schedule.totalSteps = s.train.steps;
  t.seed = s.train.seed;
  t.evalEvery = s.train.evalEvery;
  t.evalBleu = s.train.evalBleu;
  t.logEvery = s.train.logEvery;
  t.checkpointEvery = s.train.checkpointEvery;
  t.patience = s.train.patience;
  t.minDelta = s.train.minDelta;
  t.checkpointDir = s.train.checkpointDir;
  c.spec = yaml::specToYaml(s);
  c.equations = yaml::equationValues(s);
  return c;
}

yaml::ImportOptions importOptions(const task::PairData &d) {
  yaml::ImportOptions o;
  o.sourceVocab = d.source.size();
  o.targetVocab = d.target.size();
  o.sourceLength = d.sourceLength;
  o.targetLength = d.targetLength;
  return o;
}

} // namespace attn::driver
