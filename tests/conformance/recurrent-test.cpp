// Fused against unfused recurrent layers: each model is compiled twice from the same spec,
// once with attn-fuse-recurrence before attn-autodiff (scans over cells become attn.rnn /
// gru / lstm, differentiated by oneDNN's backward) and once without (generic scans,
// back-propagation through time in attn ops), and @loss and every gradient of @loss_grad must
// agree to 1e-4 relative on the same parameters and inputs. Cases cover each fused cell, a
// 2-layer stack, reversed scans (bidirectional layers), per-step outputs (the char LM) and
// masked layers over padded batches (taggers, a classifier, a seq2seq encoder), and LSTM
// projections with a bias (oneDNN's LSTMP on the shifted state).
// Models whose cells oneDNN lacks (seed GRU, full peepholes) must stay unfused.
//
// The scan rewrites against plain scans: models whose layers stay generic scans, compiled as
// `attnc train` compiles them (attn-hoist-scan-projections, attn-autodiff,
// attn-store-scan-residuals, and attn-batch-scan-gradients in the lowering) and with
// --no-fuse (whole bodies, the backward recomputing each step), agree the same way.
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Driver/Session.h"
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"
#include "frontends/yaml/Importer.h"

#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/Random.h"
#include "attn/cpu/Recurrent.h"
#include "attn/data/Text.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

constexpr double kRelTol = 1e-4;

struct Case {
  const char *name;
  const char *model; // in models/
  std::vector<::attn::yaml::Override> overrides;
  int fusedOps; // sequence ops the fused module must have
  // The sequence length's key: data.window for the sine and character models, data.max_len
  // for the masked (padded-batch) ones.
  const char *lengthKey = "data.window";
};

// A masked model's case: padded batches of at most 7 tokens.
Case masked(const char *name, const char *model, std::vector<::attn::yaml::Override> overrides,
            int fusedOps) {
  return {name, model, std::move(overrides), fusedOps, "data.max_len"};
}

const std::vector<Case> &cases() {
  static const std::vector<Case> all = {
      {"rnn", "rnn-sine", {{"model.rnn.hidden", "12"}}, 1},
      {"gru", "rnn-sine", {{"model.rnn.cell", "gru"}, {"model.rnn.hidden", "12"}}, 1},
      {"lstm", "rnn-sine", {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "12"}}, 1},
      {"lstm_2_layers",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "10"}, {"model.rnn.layers", "2"}},
       2},
      {"gru_2_layers",
       "rnn-sine",
       {{"model.rnn.cell", "gru"}, {"model.rnn.hidden", "10"}, {"model.rnn.layers", "2"}},
       2},
      {"gru_bidirectional_2_layers",
       "rnn-sine",
       {{"model.rnn.cell", "gru"},
        {"model.rnn.hidden", "8"},
        {"model.rnn.layers", "2"},
        {"model.rnn.bidirectional", "true"}},
       4},
      {"lstm_bidirectional_sum",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"},
        {"model.rnn.hidden", "8"},
        {"model.rnn.bidirectional", "true"},
        {"model.rnn.merge", "sum"}},
       2},
      {"rnn_bidirectional",
       "rnn-sine",
       {{"model.rnn.hidden", "8"}, {"model.rnn.bidirectional", "true"}},
       2},
      {"lstm_peephole",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "12"}, {"model.rnn.peephole", "true"}},
       1},
      {"lstm_peephole_bidirectional_2_layers",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"},
        {"model.rnn.hidden", "8"},
        {"model.rnn.layers", "2"},
        {"model.rnn.peephole", "true"},
        {"model.rnn.bidirectional", "true"}},
       4},
      {"char_lstm",
       "char-rnn",
       {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "16"}, {"model.embedding.dim", "6"}},
       1},
      {"char_gru",
       "char-rnn",
       {{"model.rnn.cell", "gru"}, {"model.rnn.hidden", "16"}, {"model.embedding.dim", "6"}},
       1},
      // lstm-sine: two layers with peepholes and a projection (with its bias), P = 5 < H = 8;
      // and a bidirectional stack whose projection is wider than the cell.
      {"lstm_peephole_projection",
       "lstm-sine",
       {{"model.rnn.hidden", "8"}, {"model.rnn.projection", "5"}},
       2},
      {"lstm_projection_bidirectional",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"},
        {"model.rnn.hidden", "4"},
        {"model.rnn.projection", "6"},
        {"model.rnn.layers", "2"},
        {"model.rnn.bidirectional", "true"}},
       4},
      // Cells oneDNN has no primitive for stay generic scans.
      {"gru_seed_unfused",
       "rnn-sine",
       {{"model.rnn.cell", "gru"}, {"model.rnn.gru_form", "seed"}, {"model.rnn.hidden", "8"}},
       0},
      {"lstm_full_peephole_unfused",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "8"}, {"model.rnn.peephole", "full"}},
       0},
      // Masked layers over padded batches (randomInputs: full rows, short rows, a row with
      // gaps, a row of one token), fused as masked attn.rnn / gru / lstm.
      masked("tagger_gru_2_layers", "pos-tagger",
             {{"model.rnn.hidden", "8"}, {"model.rnn.layers", "2"}}, 4),
      masked("tagger_lstm", "pos-tagger", {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "8"}},
             2),
      masked(
          "tagger_lstm_peephole", "pos-tagger",
          {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "6"}, {"model.rnn.peephole", "true"}},
          2),
      masked("tagger_rnn", "pos-tagger", {{"model.rnn.cell", "rnn"}, {"model.rnn.hidden", "8"}}, 2),
      masked("tagger_lstm_projection", "pos-tagger",
             {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "8"}, {"model.rnn.projection", "5"}},
             2),
      masked("classifier_gru", "majority-classifier", {{"model.rnn.hidden", "8"}}, 1),
      // The encoder's final states (an LSTM's h and c) start the decoder.
      masked("seq2seq_lstm_encoder", "dates-seq2seq", {{"model.rnn.hidden", "8"}}, 1),
  };
  return all;
}

mlir::DialectRegistry registry() {
  mlir::DialectRegistry r;
  ::attn::pipelines::registerDialects(r);
  return r;
}

double relativeError(const float *a, const float *b, int64_t n) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs((double)a[i] - (double)b[i]));
    scale = std::max(scale, std::fabs((double)b[i]));
  }
  return diff / std::max(scale, 1e-6);
}

int countSequenceOps(mlir::ModuleOp m) {
  int n = 0;
  m.walk([&](mlir::Operation *op) {
    n += mlir::isa<mlir::attn::RnnOp, mlir::attn::GruOp, mlir::attn::LstmOp>(op);
  });
  return n;
}

int countGradOps(mlir::ModuleOp m) {
  int n = 0;
  m.walk([&](mlir::Operation *op) {
    n += mlir::isa<mlir::attn::RnnGradOp, mlir::attn::GruGradOp, mlir::attn::LstmGradOp>(op);
  });
  return n;
}

// Row b of a mask [B, T]: by b mod 4 a full row, half a row (right padding), a row with gaps
// (the packing takes any 0/1 pattern, not only padding) and a row of one token.
float maskAt(int64_t b, int64_t t, int64_t T) {
  switch (b % 4) {
  case 0:
    return 1.0f;
  case 1:
    return t < (T + 1) / 2 ? 1.0f : 0.0f;
  case 2:
    return t % 3 == 1 ? 0.0f : 1.0f;
  default:
    return t == 0 ? 1.0f : 0.0f;
  }
}

// Inputs for `loss`: ids below `vocab` (at least 1), floats in [-1, 1), masks of 0 and 1.
std::vector<::attn::Tensor> randomInputs(const attn_entry_info &loss, int64_t vocab) {
  ::attn::Rng rng(17);
  std::vector<::attn::Tensor> inputs;
  for (int i = 0; i < loss.num_inputs; ++i) {
    ::attn::Tensor t = ::attn::makeTensor(loss.inputs[i]);
    bool mask = std::strstr(loss.inputs[i].name, "mask") && t.shape().size() == 2;
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (t.dtype() == ATTN_I32)
        t.data<int32_t>()[k] = (int32_t)(rng.next() % (uint64_t)std::max<int64_t>(1, vocab));
      else if (mask)
        t.data<float>()[k] = maskAt(k / t.shape()[1], k % t.shape()[1], t.shape()[1]);
      else
        t.data<float>()[k] = (float)(2 * rng.nextDouble() - 1);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// @loss and every output of @loss_grad of `a` against the reference `b`, to kRelTol.
void expectSameLossAndGradients(const char *name, const ::attn::Program &a,
                                const ::attn::Program &b, const std::vector<::attn::Tensor> &params,
                                const std::vector<::attn::Tensor> &inputs) {
  for (const char *entry : {"loss", "loss_grad"}) {
    std::vector<::attn::Tensor> x = a.call(entry, params, inputs);
    std::vector<::attn::Tensor> y = b.call(entry, params, inputs);
    const attn_entry_info &info = b.entry(entry);
    ASSERT_EQ(x.size(), y.size());
    for (size_t o = 0; o < x.size(); ++o) {
      double err = relativeError(x[o].data<float>(), y[o].data<float>(), y[o].numel());
      EXPECT_LT(err, kRelTol) << name << " @" << entry << " " << info.outputs[o].name
                              << "\n  got       " << x[o].str(12) << "\n  reference "
                              << y[o].str(12);
    }
  }
}

class FusedRecurrence : public ::testing::TestWithParam<Case> {};

TEST_P(FusedRecurrence, MatchesUnfusedLossAndGradients) {
  const Case &c = GetParam();
  std::string path = std::string(ATTN_SOURCE_DIR) + "/models/" + c.model + ".yaml";
  std::vector<::attn::yaml::Override> overrides = c.overrides;
  overrides.push_back({"train.batch_size", "5"});
  overrides.push_back({c.lengthKey, "7"});
  std::vector<::attn::yaml::Diagnostic> diags;
  auto spec = ::attn::yaml::parseSpecFile(path, overrides, diags);
  ASSERT_TRUE(spec) << (diags.empty() ? "" : diags.back().str());
  ::attn::yaml::ImportOptions options;
  if (spec->task == ::attn::yaml::Task::Lm)
    options.vocabSize = ::attn::data::CharVocab(::attn::data::builtinText()).size();

  std::unique_ptr<::attn::driver::Model> models[2];
  for (int fused = 0; fused < 2; ++fused) {
    ::attn::driver::SessionOptions so;
    so.fuse = fused != 0;
    ::attn::driver::Session session(so);
    ASSERT_TRUE(session.loadSpec(path, overrides));
    if (spec->task == ::attn::yaml::Task::Lm) // others: the session reads the data's sizes
      session.setImportOptions(options);
    ASSERT_TRUE(session.runTo(::attn::driver::Stage::Attn));
    mlir::ModuleOp module = session.module();
    mlir::PassManager pm(&session.context());
    if (fused)
      ::attn::pipelines::buildFusion(pm);
    pm.addPass(mlir::attn::createAttnAutodiff());
    ASSERT_TRUE(mlir::succeeded(pm.run(module)));
    if (fused) {
      // @loss's and @loss_grad's layers (@forward's too, fused later in attn-lower).
      auto loss = module.lookupSymbol<mlir::func::FuncOp>("loss");
      int inLoss = 0;
      loss.walk([&](mlir::Operation *op) {
        inLoss += mlir::isa<mlir::attn::RnnOp, mlir::attn::GruOp, mlir::attn::LstmOp>(op);
      });
      EXPECT_EQ(inLoss, c.fusedOps) << "sequence ops in @loss";
      EXPECT_EQ(countGradOps(module), c.fusedOps) << "backward ops in @loss_grad";
    } else {
      EXPECT_EQ(countSequenceOps(module), 0);
    }
    models[fused] = session.loadModel();
    ASSERT_TRUE(models[fused]);
  }
  const ::attn::Program &unfused = *models[0]->program, &fused = *models[1]->program;
  std::vector<::attn::Tensor> params = ::attn::initParams(unfused.info(), /*seed=*/13);
  // Masked models: ids below every vocabulary (their importer sized them from the data).
  int64_t vocab = c.lengthKey == std::string("data.max_len") ? 5 : options.vocabSize;
  std::vector<::attn::Tensor> inputs = randomInputs(unfused.entry("loss"), vocab);
  size_t hits = ::attn::cpu::recurrentWorkspaceHits();
  size_t misses = ::attn::cpu::recurrentWorkspaceMisses();
  expectSameLossAndGradients(c.name, fused, unfused, params, inputs);
  // The backward used the workspace its training forward kept: no forward was recomputed.
  EXPECT_EQ(::attn::cpu::recurrentWorkspaceHits() - hits, (size_t)c.fusedOps);
  EXPECT_EQ(::attn::cpu::recurrentWorkspaceMisses(), misses);
}

INSTANTIATE_TEST_SUITE_P(Models, FusedRecurrence, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return std::string(info.param.name); });

// Models whose layers stay generic scans: cells oneDNN lacks.
const std::vector<Case> &genericCases() {
  static const std::vector<Case> all = {
      {"gru_seed_bidirectional_2_layers",
       "rnn-sine",
       {{"model.rnn.cell", "gru"},
        {"model.rnn.gru_form", "seed"},
        {"model.rnn.hidden", "8"},
        {"model.rnn.layers", "2"},
        {"model.rnn.bidirectional", "true"}},
       0},
      {"lstm_full_peephole",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "8"}, {"model.rnn.peephole", "full"}},
       0},
      {"seed_lstm_2_layers",
       "seed-lstm-sine",
       {{"model.rnn.hidden", "8"}, {"model.rnn.projection", "5"}},
       0},
  };
  return all;
}

class ScanRewrites : public ::testing::TestWithParam<Case> {};

TEST_P(ScanRewrites, MatchPlainScans) {
  const Case &c = GetParam();
  std::string path = std::string(ATTN_SOURCE_DIR) + "/models/" + c.model + ".yaml";
  std::vector<::attn::yaml::Override> overrides = c.overrides;
  overrides.push_back({"train.batch_size", "3"});
  overrides.push_back({"data.window", "7"});

  std::unique_ptr<::attn::driver::Model> models[2];
  int64_t savedResults[2] = {0, 0}; // results of the forward scans autodiff prepared
  for (int rewritten = 0; rewritten < 2; ++rewritten) {
    ::attn::driver::SessionOptions so;
    so.fuse = rewritten != 0;
    ::attn::driver::Session session(so);
    ASSERT_TRUE(session.loadSpec(path, overrides));
    ASSERT_TRUE(session.runTo(::attn::driver::Stage::Grad));
    session.module().walk([&](mlir::attn::ScanOp scan) {
      if (scan->hasAttr("attn.saved_carries"))
        savedResults[rewritten] += scan.getNumResults();
    });
    EXPECT_EQ(countSequenceOps(session.module()), 0);
    models[rewritten] = session.loadModel();
    ASSERT_TRUE(models[rewritten]);
  }
  // Rewritten, the forward scans also yield the residuals their backward reads.
  EXPECT_GT(savedResults[1], savedResults[0]);
  const ::attn::Program &plain = *models[0]->program, &rewritten = *models[1]->program;
  std::vector<::attn::Tensor> params = ::attn::initParams(plain.info(), /*seed=*/13);
  expectSameLossAndGradients(c.name, rewritten, plain, params,
                             randomInputs(plain.entry("loss"), 1));
}

INSTANTIATE_TEST_SUITE_P(Models, ScanRewrites, ::testing::ValuesIn(genericCases()),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
