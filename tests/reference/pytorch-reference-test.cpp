// attnc's gradients of models/rnn-sine.yaml against PyTorch.
//
// rnn-sine-reference.safetensors (written by make-rnn-sine-reference.py, see README.md here)
// holds, for each configuration CFG (batch, window, hidden and layers in its metadata), the
// parameters, inputs and targets, and the loss and every gradient computed by
// torch.nn.RNN + nn.Linear in float64. This test builds the model the way attnc does (the YAML
// file through the real frontend with --set style overrides, attn-autodiff, the JIT), runs
// @loss_grad on the same parameters and inputs, and compares.
//
// Measure, per tensor (the loss and each grad:<param>), with a = attnc (float32) and
// b = PyTorch (float64, stored rounded to float32):
//
//     relative error = max_i |a_i - b_i| / max(max_i |b_i|, 1e-6)  <  1e-4
//
// Python is not needed here: only to regenerate the reference file.
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Jit.h"
#include "compiler/Transforms/Passes.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "attn/Program.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr double kRelTol = 1e-4;

std::string referencePath() {
  return std::string(ATTN_SOURCE_DIR) + "/tests/reference/rnn-sine-reference.safetensors";
}
std::string modelPath() { return std::string(ATTN_SOURCE_DIR) + "/models/rnn-sine.yaml"; }

const ::attn::checkpoint::Checkpoint &reference() {
  static const ::attn::checkpoint::Checkpoint ckpt = ::attn::checkpoint::load(referencePath());
  return ckpt;
}

// The configurations named in the file's metadata ("configs": "layers1,layers2"), read at
// registration time. An unreadable file yields one case that reports why.
std::vector<std::string> configNames() {
  std::vector<std::string> names;
  try {
    std::stringstream list(reference().metadata.at("configs"));
    for (std::string name; std::getline(list, name, ',');)
      names.push_back(name);
  } catch (const std::exception &) {
    names.push_back("unreadable");
  }
  return names;
}

// max|a - b| / max(max|b|, 1e-6) over all elements.
double relativeError(const float *a, const float *b, int64_t n) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs((double)a[i] - (double)b[i]));
    scale = std::max(scale, std::fabs((double)b[i]));
  }
  return diff / std::max(scale, 1e-6);
}

mlir::DialectRegistry registry() {
  mlir::DialectRegistry r;
  ::attn::pipelines::registerDialects(r);
  return r;
}

class PyTorchReference : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchReference, LossGradMatchesFloat64) {
  const std::string cfg = GetParam();
  const ::attn::checkpoint::Checkpoint *ref = nullptr;
  try {
    ref = &reference();
  } catch (const std::exception &e) {
    FAIL() << e.what() << "\n  hint: regenerate it with "
           << "/usr/bin/python3 tests/reference/make-rnn-sine-reference.py";
  }
  auto meta = [&](const std::string &key) -> std::string {
    auto it = ref->metadata.find(cfg + "." + key);
    return it == ref->metadata.end() ? std::string() : it->second;
  };
  auto tensor = [&](const std::string &name) -> const ::attn::Tensor & {
    const ::attn::Tensor *t = ref->find(cfg + "/" + name);
    if (!t)
      throw std::runtime_error(referencePath() + ": no tensor '" + cfg + "/" + name + "'");
    return *t;
  };
  ASSERT_FALSE(meta("batch").empty()) << "no metadata for configuration " << cfg;

  // The model through the real frontend, with the configuration as overrides.
  std::vector<::attn::yaml::Override> overrides = {
      {"train.batch_size", meta("batch")},
      {"data.window", meta("window")},
      {"model.rnn.hidden", meta("hidden")},
      {"model.rnn.layers", meta("layers")},
  };
  std::vector<::attn::yaml::Diagnostic> diags;
  auto spec = ::attn::yaml::parseSpecFile(modelPath(), overrides, diags);
  std::string problems;
  for (const auto &d : diags)
    problems += d.str() + "\n";
  ASSERT_TRUE(spec.has_value()) << problems;

  mlir::MLIRContext context(registry());
  context.loadAllAvailableDialects();
  auto module = ::attn::yaml::importSpec(*spec, context);
  ASSERT_TRUE(module && mlir::succeeded(mlir::verify(*module)));
  mlir::PassManager pm(&context);
  pm.addPass(mlir::attn::createAttnAutodiff());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module))) << "attn-autodiff failed";
  auto jit = ::attn::target::JitProgram::compile(*module, spec->name,
                                                 ::attn::yaml::cName(spec->name));
  ASSERT_TRUE(bool(jit)) << llvm::toString(jit.takeError());
  ::attn::Program program((*jit)->info());
  const attn_program_info &info = program.info();

  // Parameters in manifest order, matched by name.
  std::vector<::attn::Tensor> params;
  for (int i = 0; i < info.num_params; ++i)
    params.push_back(tensor(info.params[i].name));
  std::vector<::attn::Tensor> outputs =
      program.call("loss_grad", params, {tensor("x"), tensor("target")});
  const attn_entry_info &entry = program.entry("loss_grad");
  ASSERT_EQ(entry.num_outputs, 1 + info.num_params);

  int checked = 0;
  double worst = 0;
  std::string worstName;
  for (int o = 0; o < entry.num_outputs; ++o) {
    std::string name = entry.outputs[o].name; // "loss", then "grad:<param>"
    const ::attn::Tensor &expected = tensor(name);
    ASSERT_EQ(outputs[o].shape(), expected.shape()) << name;
    double err = relativeError(outputs[o].data<float>(), expected.data<float>(), expected.numel());
    EXPECT_LT(err, kRelTol) << cfg << ": " << name << ": attnc " << outputs[o].str(16)
                            << "\n  PyTorch float64 " << expected.str(16);
    if (err >= worst)
      worst = err, worstName = name;
    ++checked;
  }
  std::printf("%s (batch %s, window %s, hidden %s, layers %s): largest relative error %.3g "
              "(%s), tolerance %.0e\n",
              cfg.c_str(), meta("batch").c_str(), meta("window").c_str(),
              meta("hidden").c_str(), meta("layers").c_str(), worst, worstName.c_str(), kRelTol);
  // Every parameter has its gradient checked, and the file holds nothing the model lacks.
  EXPECT_EQ(checked, 1 + info.num_params);
  int inFile = 0;
  for (const auto &[name, t] : ref->tensors)
    inFile += name.rfind(cfg + "/grad:", 0) == 0;
  EXPECT_EQ(inFile, info.num_params) << "the reference has gradients for other parameters";
}

INSTANTIATE_TEST_SUITE_P(RnnSine, PyTorchReference, ::testing::ValuesIn(configNames()),
                         [](const auto &info) { return info.param; });

} // namespace
