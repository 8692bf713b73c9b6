// Finite-difference gradient checks of every differentiable attn op, generated from the op
// registry: each op implementing DifferentiableOpInterface must have a case in
// gradcheck-cases.mlir (the `Coverage` test fails otherwise), and each case is compiled with
// attn-autodiff and the JIT and compared with central differences.
//
// Tolerance: |analytic - numeric| <= 2e-3 + 2e-2 |analytic|, with h = 5e-3 (float32
// evaluation of both losses; the loss weights are O(1), so round-off stays near 1e-4).
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Driver/Session.h"
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "attn/Cpu.h"
#include "attn/Init.h"
#include "attn/Names.h"
#include "attn/Program.h"
#include "attn/Random.h"
#include "attn/data/Text.h"
#include "frontends/yaml/Importer.h"
#include "tests/support/Models.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "tests/support/CpuFeatures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>

namespace {

constexpr float kStep = 5e-3f, kAbsTol = 2e-3f, kRelTol = 2e-2f;
// bf16 forms against f32 forms: max |bf16 - f32| <= kBf16Tol max |f32|, the largest f32
// gradient of the case.
constexpr double kBf16Tol = 2e-2;
constexpr int kMaxElementsPerParam = 24;

std::string casesPath() { return std::string(ATTN_CONFORMANCE_DIR) + "/gradcheck-cases.mlir"; }

// The case names, read without MLIR so that gtest can list them at registration time.
std::vector<std::string> caseNames() {
  std::ifstream in(casesPath());
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::regex func(R"(func\.func @(\w+))");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), func); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

mlir::DialectRegistry registry() {
  mlir::DialectRegistry r;
  attn::pipelines::registerDialects(r);
  return r;
}

// loss = sum_i sum(result_i * W_i), W_i fixed random in [-1, 1]: every output element
// reaches the loss with its own weight.
mlir::OwningOpRef<mlir::ModuleOp> lossModule(mlir::func::FuncOp testCase, uint64_t seed) {
  using namespace mlir;
  OpBuilder b(testCase.getContext());
  Location loc = testCase.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  auto loss = b.create<func::FuncOp>(loc, "loss", b.getFunctionType({}, {scalar}));
  IRMapping map;
  testCase.getBody().cloneInto(&loss.getBody(), map);
  Block &body = loss.front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  ::attn::Rng rng(seed);
  Value total = b.create<mlir::attn::ConstantOp>(loc, DenseElementsAttr::get(scalar, 0.0f));
  for (Value r : ret.getOperands()) {
    auto type = cast<RankedTensorType>(r.getType());
    std::vector<float> w(type.getNumElements());
    for (float &v : w)
      v = (float)(2.0 * rng.nextDouble() - 1.0);
    Value weights = b.create<mlir::attn::ConstantOp>(loc, DenseElementsAttr::get(type, ArrayRef<float>(w)));
    Value term = b.create<mlir::attn::MulOp>(loc, r, weights);
    if (type.getRank() > 0) {
      SmallVector<int64_t> all(type.getRank());
      std::iota(all.begin(), all.end(), 0);
      term = b.create<mlir::attn::ReduceSumOp>(loc, term, b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
    }
    total = b.create<mlir::attn::AddOp>(loc, total, term);
  }
  b.create<func::ReturnOp>(loc, total);
  ret.erase();
  return module;
}

// Compares every gradient `loss_grad` returns with central differences of `loss`; a
// parameter named "blocked" reaches the loss only through attn.stop_gradient, so its
// gradient must be exactly zero instead.
void checkGradients(const ::attn::Program &program, std::vector<::attn::Tensor> &params,
                    const std::vector<::attn::Tensor> &inputs, const std::string &label) {
  const attn_program_info &info = program.info();
  auto lossAt = [&]() { return program.call("loss", params, inputs)[0].data<float>()[0]; };
  std::vector<::attn::Tensor> grads = program.call("loss_grad", params, inputs);
  const attn_entry_info &gradEntry = program.entry("loss_grad");
  EXPECT_NEAR(grads[0].data<float>()[0], lossAt(), 1e-5f * std::max(1.0f, std::fabs(lossAt())))
      << label << ": loss_grad's loss differs from loss";

  int checked = 0;
  for (int o = 1; o < gradEntry.num_outputs; ++o) {
    std::string param = std::string(gradEntry.outputs[o].name).substr(strlen("grad:"));
    int index = -1;
    for (int p = 0; p < info.num_params; ++p)
      if (param == info.params[p].name)
        index = p;
    ASSERT_GE(index, 0) << "no parameter " << param;
    ::attn::Tensor &value = params[index];
    const float *analytic = grads[o].data<float>();
    int64_t n = value.numel();
    if (param == "blocked") {
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(analytic[i], 0.0f) << label << ": a gradient passed attn.stop_gradient";
      continue;
    }
    int64_t stride = std::max<int64_t>(1, n / kMaxElementsPerParam);
    for (int64_t i = 0; i < n; i += stride) {
      float saved = value.data<float>()[i];
      value.data<float>()[i] = saved + kStep;
      float up = lossAt();
      value.data<float>()[i] = saved - kStep;
      float down = lossAt();
      value.data<float>()[i] = saved;
      float numeric = (up - down) / (2 * kStep);
      EXPECT_NEAR(analytic[i], numeric, kAbsTol + kRelTol * std::fabs(analytic[i]))
          << label << " d loss / d " << param << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << label << " has no parameter to check";
}

TEST(Gradcheck, EveryDifferentiableOpHasACase) {
  mlir::MLIRContext context(registry());
  context.loadAllAvailableDialects();
  auto names = caseNames();
  std::set<std::string> covered;
  for (const std::string &n : names)
    covered.insert(n);
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != "attn" || !op.hasInterface<mlir::attn::DifferentiableOpInterface>())
      continue;
    std::string mnemonic = op.getStringRef().drop_front(strlen("attn.")).str();
    EXPECT_TRUE(covered.count(mnemonic))
        << "'" << op.getStringRef().str() << "' has a gradient rule but no @" << mnemonic
        << " case in tests/conformance/gradcheck-cases.mlir";
  }
}

class Gradcheck : public ::testing::TestWithParam<std::string> {};

TEST_P(Gradcheck, MatchesFiniteDifferences) {
  const std::string name = GetParam();
  attn::driver::Session session;
  mlir::MLIRContext &context = session.context();
  auto cases = mlir::parseSourceFile<mlir::ModuleOp>(casesPath(), &context);
  ASSERT_TRUE(cases) << "cannot parse " << casesPath();
  auto testCase = cases->lookupSymbol<mlir::func::FuncOp>(name);
  ASSERT_TRUE(testCase);

  auto module = lossModule(testCase, attn::fnv1a64(name));
  mlir::PassManager pm(&context);
  pm.addPass(mlir::attn::createAttnAutodiff());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module))) << "attn-autodiff failed on @" << name;
  session.setModule(std::move(module), "gradcheck_" + name);
  std::unique_ptr<attn::driver::Model> model = session.loadModel(/*seed=*/7);
  ASSERT_TRUE(model) << "@" << name << " does not compile";
  const ::attn::Program &program = *model->program;
  std::vector<attn::Tensor> params = model->params;
  checkGradients(program, params, {}, "@" + name);
}

// The case as `attnc train --precision bf16` compiles it (attn-precision before attn-autodiff,
// and again in the lowering): its gradients against the f32 form's, which the test above
// holds to finite differences. A bf16 function is a staircase at bfloat16's resolution, so
// differences of it say nothing; its gradients must be the f32 ones to bfloat16's precision
// (8 significant bits; a gradient goes through a few rounded products), and not exactly them.
// Cases whose products have no bf16 form (or, attention, too small a one) are skipped.
TEST_P(Gradcheck, Bf16FormMatchesTheF32Form) {
  const std::string name = GetParam();
  ATTN_SKIP_WITHOUT_BF16();
  auto compile = [&](const std::string &precision, attn::driver::Session &session) {
    mlir::MLIRContext &context = session.context();
    auto cases = mlir::parseSourceFile<mlir::ModuleOp>(casesPath(), &context);
    auto module = lossModule(cases->lookupSymbol<mlir::func::FuncOp>(name), attn::fnv1a64(name));
    mlir::PassManager pm(&context);
    pm.addPass(mlir::attn::createAttnPrecision({precision, false}));
    pm.addPass(mlir::attn::createAttnAutodiff());
    EXPECT_TRUE(mlir::succeeded(pm.run(*module))) << "@" << name;
    session.setModule(std::move(module), "gradcheck_" + name + "_" + precision);
    return session.loadModel(/*seed=*/7);
  };
  attn::driver::SessionOptions f32Options, bf16Options;
  bf16Options.precision = "bf16";
  attn::driver::Session f32Session(f32Options), bf16Session(bf16Options);
  auto f32 = compile("f32", f32Session);
  auto bf16 = compile("bf16", bf16Session);
  ASSERT_TRUE(f32 && bf16) << "@" << name << " does not compile";
  std::string code;
  llvm::raw_string_ostream os(code);
  bf16Session.module().print(os);
  if (!std::regex_search(code, std::regex("attn_rt_[a-z_]*_bf16")))
    GTEST_SKIP() << "@" << name << " has no product that computes in bf16";

  std::vector<attn::Tensor> g32 = f32->program->call("loss_grad", f32->params, {});
  std::vector<attn::Tensor> g16 = bf16->program->call("loss_grad", bf16->params, {});
  ASSERT_EQ(g32.size(), g16.size());
  // Relative to the case's largest gradient: one that cancels to about 0 (a key bias under
  // the softmax, exactly 0 in exact arithmetic) keeps bf16's errors at the scale of its terms.
  double scale = 0, apart = 0;
  for (size_t o = 0; o < g32.size(); ++o)
    for (int64_t i = 0; i < g32[o].numel(); ++i)
      scale = std::max(scale, (double)std::fabs(g32[o].data<float>()[i]));
  for (size_t o = 0; o < g32.size(); ++o) {
    const float *a = g32[o].data<float>(), *b = g16[o].data<float>();
    double diff = 0;
    for (int64_t i = 0; i < g32[o].numel(); ++i)
      diff = std::max(diff, (double)std::fabs(a[i] - b[i]));
    EXPECT_LE(diff, kBf16Tol * scale)
        << "@" << name << " " << bf16->program->entry("loss_grad").outputs[o].name;
    apart = std::max(apart, diff);
  }
  EXPECT_GT(apart, 0.0) << "@" << name << ": the bf16 form computed the f32 one exactly";
}

INSTANTIATE_TEST_SUITE_P(Ops, Gradcheck, ::testing::ValuesIn(caseNames()),
                         [](const auto &info) { return info.param; });

// Every model of models/, shrunk so that finite differences stay cheap: its @loss through
// the importer, attn-autodiff and the JIT, on random data.
// A model of models/, shrunk, its @loss and @loss_grad (and, training, @train_step) compiled,
// and random inputs of @loss.
struct ShrunkModel {
  std::unique_ptr<attn::driver::Model> model;
  std::vector<::attn::Tensor> inputs;
};

// models/NAME.yaml shrunk, compiled for `device`, into `out` (a void function: gtest's ASSERTs).
// `training`: through the training pipeline, as `attnc train` compiles it (the spec's optimizer
// and clipping in @train_step); else attn-autodiff alone.
void loadShrunkModel(const std::string &name, attn::pipelines::Device device, ShrunkModel &out,
                     bool training = false) {
  std::string path = std::string(ATTN_SOURCE_DIR) + "/models/" + name + ".yaml";
  std::vector<::attn::yaml::Diagnostic> diags;
  auto plain = ::attn::yaml::parseSpecFile(path, {}, diags);
  ASSERT_TRUE(plain) << (diags.empty() ? "" : diags[0].str());
  // (A wave's input is one vector: its length to shorten is the generated one.)
  std::vector<::attn::yaml::Override> small = {
      {"train.batch_size", "2"},
      {plain->data.builtin == "wave" ? "data.horizon" : "data.window", "4"}};
  // (A module of attn IR is written for its sizes: it runs as it is.)
  if (!plain->model.mlir.empty())
    small.clear();
  if (plain->model.rnn)
    small.push_back({"model.rnn.hidden", "5"});
  // Stacks also get dropout between their layers (the keep masks are inputs, random here).
  if (plain->model.rnn && plain->model.rnn->layers > 1)
    small.push_back({"model.rnn.dropout", "0.1"});
  if (plain->model.mlp)
    small.push_back({"model.mlp.hidden", "[5, 4]"});
  if (plain->model.transformer) {
    small.push_back({"model.transformer.d_model", "8"});
    small.push_back({"model.transformer.heads", "2"});
    small.push_back({"model.transformer.ffn", "6"});
  }
  // (Hard attention's entropy bonus has a gradient but no value, like its estimator.)
  if (plain->model.attention && plain->model.attention->type == ::attn::yaml::AttentionType::Hard)
    small.push_back({"model.attention.entropy", "0"});
  if (plain->model.conv) {
    small.push_back({"model.conv.channels", "4"});
    small.push_back({"model.conv.embedding", "3"});
  }
  // (A Transformer's embeddings are d_model wide, a convolutional model's conv.embedding, a
  // graph's a parameter of its own: model.embedding does not apply to them.)
  if (!plain->model.transformer && !plain->model.conv && !plain->model.graph &&
      (plain->task == ::attn::yaml::Task::Lm || plain->task == ::attn::yaml::Task::Seq2seq ||
       plain->task == ::attn::yaml::Task::Tag || plain->task == ::attn::yaml::Task::Classify))
    small.push_back({"model.embedding.dim", "3"});
  if (plain->task == ::attn::yaml::Task::Seq2seq)
    small.push_back({"decode.batch", "2"});
  auto spec = ::attn::yaml::parseSpecFile(path, small, diags);
  ASSERT_TRUE(spec) << (diags.empty() ? "" : diags.back().str());

  attn::driver::SessionOptions sessionOptions;
  sessionOptions.device = device;
  attn::driver::Session session(sessionOptions);
  mlir::MLIRContext &context = session.context();
  ::attn::yaml::ImportOptions options;
  if (spec->task == ::attn::yaml::Task::Lm)
    options.vocabSize = ::attn::data::CharVocab(::attn::data::builtinText()).size();
  if (spec->task == ::attn::yaml::Task::Seq2seq || spec->task == ::attn::yaml::Task::Tag ||
      spec->task == ::attn::yaml::Task::Classify) {
    options.vocabSize = options.sourceVocab = options.targetVocab = 7;
    options.sourceLength = 4;
    options.targetLength = 5;
  }
  ASSERT_TRUE(session.loadSpec(path, small));
  session.setImportOptions(options);
  ASSERT_TRUE(session.runTo(training ? attn::driver::Stage::Grad : attn::driver::Stage::Attn));
  if (!training) {
    mlir::PassManager pm(&context);
    pm.addPass(mlir::attn::createAttnAutodiff());
    ASSERT_TRUE(mlir::succeeded(pm.run(session.module())));
  }
  out.model = session.loadModel(/*seed=*/11);
  ASSERT_TRUE(out.model);

  // Random inputs of the loss: values in [-1, 1], ids within the vocabulary.
  const attn_entry_info &loss = out.model->program->entry("loss");
  ::attn::Rng rng(5);
  std::vector<::attn::Tensor> &inputs = out.inputs;
  for (int i = 0; i < loss.num_inputs; ++i) {
    ::attn::Tensor t = ::attn::makeTensor(loss.inputs[i]);
    std::string name = loss.inputs[i].name;
    for (int64_t k = 0; k < t.numel(); ++k) {
      // seq2seq: masks and scheduled sampling's coins are 0 or 1 (the first column 1).
      if (name == "src_mask" || name == "teacher" || name == "forecast_teacher")
        t.data<float>()[k] = k % t.shape()[1] == 0 || rng.next() % 3 != 0 ? 1.0f : 0.0f;
      // Hard attention's steps all read the expectation: its score-function estimator is by
      // design not the derivative of the loss's value (the statistical test in
      // tests/reference checks it), while the soft path is.
      else if (name == "hard_soft")
        t.data<float>()[k] = 1.0f;
      // Dropout's keep masks are 0 or 1 / (1 - p), as the trainer draws them (p = 0.2 here).
      else if (name.rfind("dropout.", 0) == 0)
        t.data<float>()[k] = rng.next() % 5 == 0 ? 0.0f : 1.25f;
      else if (t.dtype() == ATTN_I32)
        t.data<int32_t>()[k] = (int32_t)(rng.next() % (uint64_t)std::max<int64_t>(1, options.vocabSize));
      else
        t.data<float>()[k] = (float)(2 * rng.nextDouble() - 1);
    }
    inputs.push_back(std::move(t));
  }
}

class ModelGradcheck : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelGradcheck, MatchesFiniteDifferences) {
  ShrunkModel m;
  ASSERT_NO_FATAL_FAILURE(loadShrunkModel(GetParam(), attn::pipelines::Device::CPU, m));
  checkGradients(*m.model->program, m.model->params, m.inputs, "models/" + GetParam() + ".yaml");
}

// Each output of `entry` in `b` equals the one in `a` within 1e-5 relative (absolute below 1).
void expectSameOutputs(const std::vector<::attn::Tensor> &a, const std::vector<::attn::Tensor> &b,
                       const attn_entry_info &entry, const std::string &label) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].numel(), b[o].numel());
    for (int64_t i = 0; i < a[o].numel(); ++i) {
      float x = a[o].data<float>()[i], y = b[o].data<float>()[i];
      ASSERT_NEAR(y, x, 1e-5f * std::max(1.0f, std::fabs(x)))
          << label << ": " << entry.outputs[o].name << "[" << i << "]";
    }
  }
}

// The compiler's generated GPU kernels (attn-linalg-to-gpu), run on the CPU from the same
// gpu-dialect code (`--device cuda-on-cpu`), compute the CPU program: the loss and every
// gradient of @loss_grad, then the loss and gradient norm of three steps of @train_step (the
// spec's optimizer and clipping, each program carrying its own updates). So the kernels'
// indexing is checked on machines with no GPU. Each thread sums its reductions in the CPU
// loops' order; the CPU's vectorised loops may reassociate (the reductions allow it), so
// the two agree to f32 rounding, not always bit for bit.
TEST_P(ModelGradcheck, GeneratedGpuKernelsComputeTheCpuProgram) {
  ShrunkModel cpu, gpu;
  ASSERT_NO_FATAL_FAILURE(loadShrunkModel(GetParam(), attn::pipelines::Device::CPU, cpu, true));
  ASSERT_NO_FATAL_FAILURE(
      loadShrunkModel(GetParam(), attn::pipelines::Device::CUDAOnCPU, gpu, true));
  const std::string label = "models/" + GetParam() + ".yaml";
  const ::attn::Program &program = *cpu.model->program;
  ASSERT_NO_FATAL_FAILURE(
      expectSameOutputs(program.call("loss_grad", cpu.model->params, cpu.inputs),
                        gpu.model->program->call("loss_grad", gpu.model->params, gpu.inputs),
                        program.entry("loss_grad"), label + " @loss_grad"));

  // train_step's inputs: the loss's, then lr and step; its `update:NAME` outputs replace the
  // parameter (or optimizer state) NAME.
  const attn_entry_info &step = program.entry("train_step");
  const attn_program_info &info = program.info();
  std::vector<int> target(step.num_outputs, -1);
  const std::string prefix = ::attn::names::kUpdatePrefix;
  for (int o = 0; o < step.num_outputs; ++o)
    for (int p = 0; p < info.num_params; ++p)
      if (step.outputs[o].name == prefix + info.params[p].name)
        target[o] = p;
  ASSERT_GT(std::count_if(target.begin(), target.end(), [](int t) { return t >= 0; }), 0);
  for (int s = 1; s <= 3; ++s) {
    std::vector<std::vector<::attn::Tensor>> outputs;
    for (ShrunkModel *m : {&cpu, &gpu}) {
      std::vector<::attn::Tensor> inputs = m->inputs;
      inputs.push_back(::attn::Tensor::f32({}, {1e-2f}));
      inputs.push_back(::attn::Tensor::f32({}, {(float)s}));
      outputs.push_back(m->model->program->call("train_step", m->model->params, inputs));
    }
    // The loss and the gradient norm. Not each updated parameter: Adam divides a gradient by
    // its own magnitude, so where one is near 0 (1e-8) its last bits, which reassociated sums
    // may change, decide the step; the next steps' losses see the parameters.
    for (int o : {0, 1}) {
      float x = outputs[0][o].data<float>()[0], y = outputs[1][o].data<float>()[0];
      EXPECT_NEAR(y, x, 1e-5f * std::max(1.0f, std::fabs(x)))
          << label << " @train_step, step " << s << ": " << step.outputs[o].name;
    }
    for (int o = 0; o < step.num_outputs; ++o)
      if (target[o] >= 0) {
        cpu.model->params[target[o]] = outputs[0][o];
        gpu.model->params[target[o]] = outputs[1][o];
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelGradcheck, ::testing::ValuesIn(attn::testing::modelNames()),
                         [](const auto &info) { return attn::testing::testName(info.param); });

} // namespace
