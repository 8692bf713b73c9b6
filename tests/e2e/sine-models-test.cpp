// The sine models of models/, compiled ahead of time (rnn_sine.o, mlp_sine.o and their
// headers, made by `attnc compile`) and in-process (`attnc run --output`), against plain C++
// loops over the same parameters and data.
#include "mlp_sine.h"
#include "mlp_sine_spr.h"
#include "rnn_sine.h"

#include "attn/Cpu.h"
#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/data/Sine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

// models/*-sine.yaml: data {window: 16, seed: 7}, train {batch_size: 32, seed: 1}. `attnc run`
// feeds the validation split, seeded data.seed + 1, and initialises parameters from train.seed.
constexpr int64_t kWindow = 16, kBatch = 32;
constexpr uint64_t kValidSeed = 8, kParamSeed = 1;
constexpr float kTolerance = 1e-5f;

using Params = std::map<std::string, const attn::Tensor *>;

Params byName(const attn_program_info &info, const std::vector<attn::Tensor> &params) {
  Params out;
  for (int i = 0; i < info.num_params; ++i)
    out[info.params[i].name] = &params[i];
  return out;
}

// y[b] = x[b] w + bias, row-major: x [rows, k], w [k, n].
std::vector<float> dense(const std::vector<float> &x, int64_t rows, const attn::Tensor &w,
                         const attn::Tensor &bias) {
  int64_t k = w.shape()[0], n = w.shape()[1];
  std::vector<float> y(rows * n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias.data<float>()[j];
      for (int64_t i = 0; i < k; ++i)
        acc += (double)x[r * k + i] * w.data<float>()[i * n + j];
      y[r * n + j] = (float)acc;
    }
  return y;
}

// The seed's cell over the window from the state h [kBatch, H] (updated in place),
// a<t> = tanh(W_ax x<t> + W_aa a<t-1> + b_a).
void rnnSteps(const Params &p, const attn::Tensor &x, std::vector<float> &h) {
  const attn::Tensor &wax = *p.at("rnn.layer0.w_ax"), &waa = *p.at("rnn.layer0.w_aa"),
                     &ba = *p.at("rnn.layer0.b_a");
  int64_t hidden = waa.shape()[0];
  for (int64_t t = 0; t < kWindow; ++t) {
    std::vector<float> next(kBatch * hidden);
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t j = 0; j < hidden; ++j) {
        double acc = ba.data<float>()[j] + (double)x.data<float>()[b * kWindow + t] * wax.data<float>()[j];
        for (int64_t i = 0; i < hidden; ++i)
          acc += (double)h[b * hidden + i] * waa.data<float>()[i * hidden + j];
        next[b * hidden + j] = (float)std::tanh(acc);
      }
    h = next;
  }
}

// The cell over the window from zero states, then the head.
std::vector<float> rnnReference(const Params &p, const attn::Tensor &x) {
  std::vector<float> h(kBatch * p.at("rnn.layer0.w_aa")->shape()[0], 0.0f);
  rnnSteps(p, x, h);
  return dense(h, kBatch, *p.at("output.weight"), *p.at("output.bias"));
}

std::vector<float> mlpReference(const Params &p, const attn::Tensor &x) {
  std::vector<float> a(x.data<float>(), x.data<float>() + x.numel());
  for (const char *layer : {"mlp.layer0", "mlp.layer1"}) {
    a = dense(a, kBatch, *p.at(std::string(layer) + ".weight"), *p.at(std::string(layer) + ".bias"));
    for (float &v : a)
      v = std::tanh(v);
  }
  return dense(a, kBatch, *p.at("output.weight"), *p.at("output.bias"));
}

std::vector<float> readColumn(const std::string &path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "missing " << path << " (written by the e2e-*-jit-run test)";
  std::vector<float> v;
  for (float f; in >> f;)
    v.push_back(f);
  return v;
}

void expectClose(const std::vector<float> &actual, const std::vector<float> &expected,
                 const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], kTolerance) << what << " example " << i;
}

struct Case {
  const attn_program_info *info;
  std::vector<float> (*reference)(const Params &, const attn::Tensor &);
  std::vector<int64_t> inputShape;
  std::string jitOutput;
};

void checkModel(const Case &c) {
  attn::Program program(c.info);
  auto params = attn::initParams(*c.info, kParamSeed);
  auto examples = attn::data::makeSine(kWindow, kBatch, kValidSeed);
  attn::Tensor x(ATTN_F32, c.inputShape);
  std::copy(examples.x.data<float>(), examples.x.data<float>() + examples.x.numel(),
            x.data<float>());
  auto expected = c.reference(byName(*c.info, params), examples.x);

  auto outputs = program.call("forward", params, {x});
  const float *y = outputs[0].data<float>();
  expectClose(std::vector<float>(y, y + outputs[0].numel()), expected, "AOT");
  expectClose(readColumn(std::string(ATTN_E2E_DIR) + "/" + c.jitOutput), expected, "JIT");

  // Not a vacuous comparison: the untrained outputs differ between examples.
  EXPECT_GT(std::fabs(expected[0] - expected[1]), 1e-4);
}

TEST(SineModels, RnnMatchesReferenceThroughAotAndJit) {
  checkModel({&attn_rnn_sine_program, rnnReference, {kBatch, kWindow, 1}, "rnn_sine-jit.txt"});
}

TEST(SineModels, MlpMatchesReferenceThroughAotAndJit) {
  checkModel({&attn_mlp_sine_program, mlpReference, {kBatch, kWindow}, "mlp_sine-jit.txt"});
}

// @forward_state (Keras's initial_state / return_state): from zero states it is @forward, and
// fed its own final state it continues the series: two windows in two calls give what the
// cell gives over both windows in one run.
TEST(SineModels, StatefulForwardContinuesTheSeries) {
  attn::Program program(&attn_rnn_sine_program);
  auto params = attn::initParams(attn_rnn_sine_program, kParamSeed);
  Params p = byName(attn_rnn_sine_program, params);
  auto first = attn::data::makeSine(kWindow, kBatch, kValidSeed);
  auto second = attn::data::makeSine(kWindow, kBatch, kValidSeed + 1);
  auto asInput = [](const attn::Tensor &rows) {
    attn::Tensor x(ATTN_F32, {kBatch, kWindow, 1});
    std::copy(rows.data<float>(), rows.data<float>() + rows.numel(), x.data<float>());
    return x;
  };
  int64_t hidden = p.at("rnn.layer0.w_aa")->shape()[0];
  attn::Tensor zero(ATTN_F32, {kBatch, hidden});
  auto a = program.call("forward_state", params, {asInput(first.x), zero});
  auto plain = program.call("forward", params, {asInput(first.x)});
  ASSERT_EQ(a.size(), 2u);
  expectClose(std::vector<float>(a[0].data<float>(), a[0].data<float>() + a[0].numel()),
              std::vector<float>(plain[0].data<float>(), plain[0].data<float>() + kBatch),
              "zero state");
  auto b = program.call("forward_state", params, {asInput(second.x), a[1]});
  std::vector<float> h(kBatch * hidden, 0.0f);
  rnnSteps(p, first.x, h);
  std::vector<float> afterFirst = h;
  rnnSteps(p, second.x, h);
  expectClose(std::vector<float>(a[1].data<float>(), a[1].data<float>() + a[1].numel()), afterFirst,
              "state after the first window");
  expectClose(std::vector<float>(b[0].data<float>(), b[0].data<float>() + kBatch),
              dense(h, kBatch, *p.at("output.weight"), *p.at("output.bias")),
              "the second window from the first's state");
}

TEST(SineModels, HeaderDescribesTheProgram) {
  const attn_program_info &info = attn_rnn_sine_program;
  EXPECT_STREQ(info.name, "rnn-sine");
  ASSERT_EQ(info.num_entries, 3); // forward, loss, forward_state
  EXPECT_STREQ(info.entries[0].name, "forward");
  EXPECT_STREQ(info.entries[1].name, "loss");
  ASSERT_EQ(info.entries[1].num_inputs, 2);
  EXPECT_STREQ(info.entries[1].inputs[1].name, "target");
  EXPECT_EQ(info.entries[0].fn, &attn_rnn_sine_forward);
  ASSERT_EQ(info.entries[0].num_inputs, 1);
  EXPECT_STREQ(info.entries[0].inputs[0].name, "x");
  EXPECT_EQ(info.entries[0].inputs[0].rank, 3);
  EXPECT_EQ(info.num_params, 5);
  EXPECT_STREQ(info.params[0].init, "uniform");
  EXPECT_FLOAT_EQ(info.params[0].scale, 1.0f / std::sqrt(32.0f));
  // Compiled for this machine (--cpu native): its features, which this CPU has.
  ASSERT_NE(info.cpu, nullptr);
  ASSERT_NE(info.cpu_features, nullptr);
  EXPECT_NE(std::string(info.cpu_features).find("sse4.2"), std::string::npos) << info.cpu_features;
  EXPECT_TRUE(attn::missingCpuFeatures(info.cpu_features).empty());
}

// The flags the kernel reports for this CPU (/proc/cpuinfo): an account of the CPU's features
// that is not attn::cpuHas's.
bool kernelReports(const std::string &flag) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;)
        if (w == flag)
          return true;
      return false;
    }
  return false;
}

// mlp_sine_spr.o is the MLP compiled with --cpu sapphirerapids: its code may use AVX512-FP16
// and AMX. Where the CPU has them it runs; elsewhere attn::Program refuses it, naming what
// is missing, before any of its code runs (no SIGILL).
TEST(SineModels, CodeForAnotherCpuRunsOnlyWhereItsFeaturesAre) {
  const attn_program_info &info = attn_mlp_sine_spr_program;
  EXPECT_STREQ(info.cpu, "sapphirerapids");
  std::string features = info.cpu_features;
  for (const char *f : {"avx512f", "avx512fp16", "amx-tile"})
    EXPECT_NE(features.find(f), std::string::npos) << f << " not in " << features;
  std::vector<std::string> missing = attn::missingCpuFeatures(features);
  auto lacks = [&](const std::string &f) {
    return std::find(missing.begin(), missing.end(), f) != missing.end();
  };
  EXPECT_EQ(lacks("avx512f"), !kernelReports("avx512f"));
  EXPECT_EQ(lacks("avx512fp16"), !kernelReports("avx512_fp16"));
  EXPECT_EQ(lacks("amx-tile"), !kernelReports("amx_tile"));
  if (missing.empty()) {
    attn::Program program(&info);
    checkModel({&info, mlpReference, {kBatch, kWindow}, "mlp_sine-jit.txt"});
    return;
  }
  try {
    attn::Program program(&info);
    FAIL() << "code for sapphirerapids was accepted on a CPU without " << missing[0];
  } catch (const std::runtime_error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("compiled for the CPU 'sapphirerapids'"), std::string::npos) << what;
    EXPECT_NE(what.find(missing[0]), std::string::npos) << what;
    EXPECT_NE(what.find("--cpu native"), std::string::npos) << what;
  }
}

} // namespace
