// Token-count batches (train.batch_tokens) change the shapes a step runs in, not its numbers:
// a bucket's @train_step (attnc's Session::loadTrainingBucket: shorter sources and targets)
// over pairs that fit it gives the loss, gradient norm and updated parameters of the
// full-length program over the same pairs padded to data.max_len, for a Transformer, a
// recurrent encoder-decoder and a bidirectional tagger. A model whose padding leaked into its
// results (an unmasked position, a backward scan starting in the padding) would fail here.
#include "compiler/Driver/Session.h"
#include "compiler/Driver/TaskConfig.h"

#include "attn/Program.h"
#include "attn/task/Data.h"
#include "attn/task/TokenBatches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace {

using namespace attn;

class BucketStep : public ::testing::TestWithParam<const char *> {};

TEST_P(BucketStep, EqualsTheFullLengthStepOnTheSamePairs) {
  driver::Session session;
  // SGD: Adam's first step is lr * sign(gradient), which would turn the rounding noise of a
  // gradient that is 0 in exact arithmetic (a key's bias, which softmax cancels) into +-lr.
  ASSERT_TRUE(session.loadSpec(std::string(ATTN_SOURCE_DIR) + "/models/" + GetParam() + ".yaml",
                               {{"train.optimizer", "{type: sgd, lr: 0.1}"}}));
  ASSERT_TRUE(session.runTo(driver::Stage::Grad));
  std::unique_ptr<driver::Model> full = session.loadModel(/*seed=*/5);
  ASSERT_TRUE(full);
  task::DataConfig config = session.dataConfig();
  train::Split split = task::trainSplit(config, &session.trainingData());
  // The shortest of 3 shapes, compiled for the full program's rows so that both steps take
  // the same pairs.
  task::TokenPlan plan = task::planTokenBatches(config.task, split, 256, 3, 1);
  const task::TokenBucket &shortest = plan.buckets.front();
  const attn_entry_info &step = full->program->entry("train_step");
  int64_t rows = step.inputs[0].shape[0];
  std::unique_ptr<driver::Model> bucket =
      session.loadTrainingBucket({shortest.sourceLength, shortest.targetLength, 0, rows});
  ASSERT_TRUE(bucket);
  const attn_entry_info &bucketStep = bucket->program->entry("train_step");
  ASSERT_LT(bucketStep.inputs[0].shape[1], step.inputs[0].shape[1]) << "the bucket is shorter";

  std::vector<int64_t> pairs;
  std::vector<std::pair<int64_t, int64_t>> lengths = task::splitLengths(config.task, split);
  for (int64_t i = 0; i < (int64_t)lengths.size() && (int64_t)pairs.size() < rows; ++i)
    if (plan.bucketOf(lengths[i].first, lengths[i].second) == 0)
      pairs.push_back(i);
  ASSERT_EQ((int64_t)pairs.size(), rows);
  auto run = [&](const driver::Model &m, const attn_entry_info &entry) {
    std::vector<Tensor> inputs = train::gatherRows(split, pairs, entry);
    inputs.push_back(Tensor::f32({}, {0.1f})); // lr
    inputs.push_back(Tensor::f32({}, {1.0f})); // step
    return m.program->call("train_step", full->params, inputs);
  };
  std::vector<Tensor> a = run(*full, step), b = run(*bucket, bucketStep);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape()) << step.outputs[i].name;
    const float *x = a[i].data<float>(), *y = b[i].data<float>();
    double worst = 0;
    for (int64_t k = 0; k < a[i].numel(); ++k)
      worst = std::max(worst, std::fabs((double)x[k] - y[k]) / (1e-3 + std::fabs((double)x[k])));
    EXPECT_LT(worst, 2e-5) << step.outputs[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BucketStep,
                         ::testing::Values("reverse-transformer", "reverse-seq2seq", "pos-tagger"),
                         [](const auto &info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

} // namespace
