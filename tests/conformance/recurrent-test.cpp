// Fused against unfused recurrent layers: each model is compiled twice from the same spec,
// once with attn-fuse-recurrence before attn-autodiff (scans over cells become attn.rnn /
// gru / lstm, differentiated by oneDNN's backward) and once without (generic scans,
// back-propagation through time in attn ops), and @loss and every gradient of @loss_grad must
// agree to 1e-4 relative on the same parameters and inputs. Cases cover each fused cell, a
// 2-layer stack, reversed scans (bidirectional layers) and per-step outputs (the char LM).
// Models whose cells oneDNN lacks (seed GRU, projection LSTM) must stay unfused.
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
};

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
      // Cells oneDNN has no primitive for stay generic scans (lstm-sine has a projection).
      {"gru_seed_unfused",
       "rnn-sine",
       {{"model.rnn.cell", "gru"}, {"model.rnn.gru_form", "seed"}, {"model.rnn.hidden", "8"}},
       0},
      {"lstm_peephole_projection_unfused",
       "lstm-sine",
       {{"model.rnn.hidden", "8"}, {"model.rnn.projection", "5"}},
       0},
      {"lstm_full_peephole_unfused",
       "rnn-sine",
       {{"model.rnn.cell", "lstm"}, {"model.rnn.hidden", "8"}, {"model.rnn.peephole", "full"}},
       0},
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

// Inputs for `loss`: ids below `vocab` (at least 1), floats in [-1, 1).
std::vector<::attn::Tensor> randomInputs(const attn_entry_info &loss, int64_t vocab) {
  ::attn::Rng rng(17);
  std::vector<::attn::Tensor> inputs;
  for (int i = 0; i < loss.num_inputs; ++i) {
    ::attn::Tensor t = ::attn::makeTensor(loss.inputs[i]);
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (t.dtype() == ATTN_I32)
        t.data<int32_t>()[k] = (int32_t)(rng.next() % (uint64_t)std::max<int64_t>(1, vocab));
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
  overrides.push_back({"train.batch_size", "3"});
  overrides.push_back({"data.window", "7"});
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
  std::vector<::attn::Tensor> inputs = randomInputs(unfused.entry("loss"), options.vocabSize);
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
      {"lstm_peephole_projection",
       "lstm-sine",
       {{"model.rnn.hidden", "8"}, {"model.rnn.projection", "5"}},
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
