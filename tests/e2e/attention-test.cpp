// Attention decoders end to end, as a user runs them (attnc subprocesses):
// - the default demo model, models/dates-bahdanau.yaml, reaches >= 95% exact match on its 500
//   held-out dates (greedy), translates the demo's inputs with greedy decoding and beam
//   search, and plots one alignment heatmap per input;
// - every Luong and local variant in models/ trains end to end (fewer steps than its spec)
//   to a stated exact-match rate.
#include "AttncProcess.h"
#include "tests/support/CpuFeatures.h"

#include <gtest/gtest.h>

#include <fstream>

namespace {

using e2e::attnc;
using e2e::exactMatch;

std::string model(const std::string &name) {
  return std::string(ATTN_SOURCE_DIR) + "/models/" + name + ".yaml";
}

// The demo model, trained once by the ctest fixture e2e-attention-bahdanau-train
// (tests/e2e/CMakeLists.txt), or here when the binary runs alone. The tests only read it.
class Bahdanau : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir = std::string(ATTN_E2E_DIR) + "/attention/bahdanau";
    if (std::ifstream(dir + "/best.safetensors").good())
      status = 0;
    else
      status = attnc("train " + model("dates-bahdanau") + " --out " +
                         e2e::scratch("attention", "bahdanau"),
                     &log);
  }
  static std::string dir, log;
  static int status;
};
std::string Bahdanau::dir, Bahdanau::log;
int Bahdanau::status = -1;

const char *kDemoInputs = "3 March 2021\n03/03/21\nWednesday, March 3rd 2021\n";
const char *kDemoOutputs = "2021-03-03\n2021-03-03\n2021-03-03\n";

TEST_F(Bahdanau, ReachesExactMatchOnHeldOutDates) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_NE(out.find("greedy decoding of 500 validation pairs"), std::string::npos) << out;
  EXPECT_GE(exactMatch(out), 95.0) << out;
}

TEST_F(Bahdanau, TranslatesTheDemoInputs) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir, kDemoInputs, dir, &out), 0) << out;
  EXPECT_EQ(out, kDemoOutputs);
}

TEST_F(Bahdanau, BeamSearchWithAttention) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --beam 4", kDemoInputs, dir, &out),
            0)
      << out;
  EXPECT_EQ(out, kDemoOutputs);
}

// The gate of int8 decoding (docs/precision.md), as for the dates Transformer: exact match
// within 1 point of f32's, the same tokens on >= 98% of 400 dates in every input format.
TEST_F(Bahdanau, Int8DecodingKeepsTheF32ExactMatchAndTokens) {
  ASSERT_EQ(status, 0) << log;
  e2e::Decodings d = e2e::decodeBothWays(dir, "int8", e2e::datesInputs(400));
  if (d.refused)
    GTEST_SKIP() << d.log;
  ASSERT_EQ(d.rc, 0) << d.log;
  e2e::expectTheF32Decoding(d);
}

// The gate of bf16 training (docs/precision.md) for a recurrent model: the same spec and steps
// in bf16, its GRU encoder on oneDNN's bf16 RNN primitives (forward and backward) and its
// products in bf16, reach the f32 run's exact match on the 500 held-out dates within 1 point
// (measured: 100% and 100%).
TEST_F(Bahdanau, Bf16TrainingReachesTheF32ExactMatch) {
  ATTN_SKIP_WITHOUT_BF16();
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(
      attnc("emit " + model("dates-bahdanau") + " --stage lowered --train --precision bf16", &out),
      0)
      << out;
  EXPECT_NE(out.find("call @attn_rt_rnn_forward_bf16("), std::string::npos);
  EXPECT_NE(out.find("call @attn_rt_rnn_backward_bf16("), std::string::npos);
  std::string bf16 = e2e::scratch("attention", "bahdanau-bf16"), f32Eval, bf16Eval;
  ASSERT_EQ(attnc("train " + model("dates-bahdanau") + " --precision bf16 --out " + bf16, &out), 0)
      << out;
  ASSERT_EQ(attnc("eval --ckpt " + dir, &f32Eval), 0) << f32Eval;
  ASSERT_EQ(attnc("eval --ckpt " + bf16, &bf16Eval), 0) << bf16Eval;
  EXPECT_NEAR(exactMatch(bf16Eval), exactMatch(f32Eval), 1.0) << f32Eval << bf16Eval;
}

// One PNG per input line, named by its index; a model without attention has nothing to plot.
TEST_F(Bahdanau, PlotsOneHeatmapPerInput) {
  ASSERT_EQ(status, 0) << log;
  std::string plots = e2e::scratch("attention", "plots");
  std::string out;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --plots " + plots, kDemoInputs,
                                plots, &out),
            0)
      << out;
  for (int i = 0; i < 3; ++i) {
    std::string path = plots + "/attention-" + std::to_string(i) + ".png";
    EXPECT_NE(out.find("wrote " + path), std::string::npos) << out;
    std::ifstream png(path, std::ios::binary);
    char signature[8] = {};
    png.read(signature, 8);
    EXPECT_EQ(std::string(signature, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  }
  EXPECT_FALSE(std::ifstream(plots + "/attention-3.png").good());
}

// Each variant with fewer steps than its spec (the rates are what these runs reach, with a
// margin; the full specs do better).
struct Variant {
  const char *name;
  int steps;
  double minExactMatch;
};

// ctest shows the parameter by its name, not as bytes.
void PrintTo(const Variant &v, std::ostream *os) { *os << v.name; }

class AttentionVariant : public ::testing::TestWithParam<Variant> {};

TEST_P(AttentionVariant, TrainsToExactMatch) {
  const Variant &v = GetParam();
  std::string out;
  std::string dir = e2e::scratch("attention", v.name);
  ASSERT_EQ(attnc("train " + model(std::string("dates-") + v.name) + " --steps " +
                      std::to_string(v.steps) + " --set train.eval_every=" +
                      std::to_string(v.steps) + " --out " + dir,
                  &out),
            0)
      << out;
  EXPECT_GE(exactMatch(out), v.minExactMatch) << out;
}

INSTANTIATE_TEST_SUITE_P(
    Dates, AttentionVariant,
    ::testing::Values(Variant{"luong-dot", 600, 90.0}, Variant{"luong-general", 600, 90.0},
                      Variant{"luong-concat", 600, 90.0}, Variant{"luong-cosine", 600, 90.0},
                      Variant{"local-monotonic", 600, 90.0}, Variant{"local-predictive", 600, 90.0},
                      // hard attention: the whole spec (it learns from
                      // sampled positions, more slowly; 97% here)
                      Variant{"hard", 2000, 90.0}),
    [](const auto &info) {
      std::string name = info.param.name;
      for (char &c : name)
        if (c == '-')
          c = '_';
      return name;
    });

} // namespace
