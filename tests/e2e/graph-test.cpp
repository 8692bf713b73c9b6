// The graph form from the CLI (docs/graph.md): models/mlp-sine.yaml written as model.graph
// nodes and as a hand-written attn module (model.mlir) trains to the family model's losses
// step for step; a model no family has (self-attention pooling over the majority task)
// learns its task; a language model and an encoder-decoder of nodes learn, sample and
// translate; the module compiles to a standalone executable.
#include "AttncProcess.h"

#include "attn/train/MetricsLog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace {

const std::string kModels = std::string(ATTN_SOURCE_DIR) + "/models/";
using e2e::attnc;

std::string scratch(const std::string &name) { return e2e::scratch("graph", name); }

std::vector<attn::train::Record> train(const std::string &model, const std::string &dir,
                                       const std::string &flags) {
  std::string out;
  EXPECT_EQ(attnc("train " + kModels + model + ".yaml --out " + dir + " " + flags, &out), 0) << out;
  return attn::train::readMetrics(dir + "/metrics.jsonl");
}

// The same parameters (names, shapes, initialisers) and the same ops: the same losses from
// the same seed, step for step, and the same validation losses.
TEST(Graph, ReproducesTheMlpModelStepForStep) {
  const std::string flags = "--steps 300 --set train.eval_every=100";
  std::vector<attn::train::Record> family = train("mlp-sine", scratch("family"), flags);
  ASSERT_GE(family.size(), 300u);
  for (const char *form : {"mlp-sine-graph", "mlp-sine-mlir"}) {
    std::vector<attn::train::Record> other = train(form, scratch(form), flags);
    ASSERT_EQ(other.size(), family.size()) << form;
    for (size_t i = 0; i < family.size(); ++i) {
      ASSERT_EQ(other[i].step, family[i].step) << form;
      double a = family[i].loss, b = other[i].loss;
      EXPECT_LE(std::fabs(a - b), 1e-6 * std::max(1.0, std::fabs(a)))
          << form << " step " << family[i].step << ": " << a << " vs " << b;
      double va = family[i].get("valid_loss"), vb = other[i].get("valid_loss");
      if (!std::isnan(va))
        EXPECT_LE(std::fabs(va - vb), 1e-6 * std::max(1.0, std::fabs(va)))
            << form << " validation at step " << family[i].step;
    }
  }
  // Something to reproduce: the loss fell by two orders of magnitude.
  EXPECT_LT(family.back().loss, family.front().loss / 100);
}

TEST(Graph, SelfAttentionPoolingLearnsTheMajority) {
  std::string dir = scratch("majority"), out;
  std::string spec = kModels + "majority-attention-graph.yaml";
  ASSERT_EQ(attnc("train " + spec + " --out " + dir, &out), 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("validation accuracy ([0-9.]+)%"))) << out;
  EXPECT_GE(std::stod(m[1]), 95.0) << out;
  // The attention was fused like a Transformer's.
  out.clear();
  ASSERT_EQ(attnc("emit " + spec + " --stage=fused", &out), 0) << out;
  EXPECT_NE(out.find("attn.fused_attention"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(attnc("run " + spec + " --ckpt " + dir, &out), 0) << out;
  EXPECT_NE(out.find("(right)"), std::string::npos) << out;
}

// task lm in the graph form: a causal ALiBi attention block as nodes learns the text, samples
// past its window through its cached @step, and its executable samples the same characters;
// within the window the cached step draws what the network over the whole prefix draws
// (@step_full, --no-cache), character for character (temperature 1, every character a
// candidate: a key written at the wrong position, or an i off by one in ALiBi, fails it).
TEST(Graph, LanguageModelLearnsAndSamplesPastItsWindow) {
  std::string dir = scratch("lm"), out;
  ASSERT_EQ(attnc("train " + kModels + "char-alibi-graph.yaml --out " + dir, &out), 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("best validation loss ([0-9.]+)"))) << out;
  EXPECT_LT(std::stod(m[1]), 2.4) << out; // (2.19; a character's unigram entropy is about 3)
  std::string sampled;
  const std::string flags = " --count 150 --temperature 0.5";
  ASSERT_EQ(attnc("run --ckpt " + dir + flags, &sampled), 0) << sampled;
  std::string text = sampled.substr(sampled.find('\n') + 1);
  EXPECT_GE(text.size(), 150u + 4u) << sampled; // the prime, then 150 characters: past 64
  ASSERT_EQ(attnc("compile --ckpt " + dir + " --exe -o " + dir + "/lm", &out), 0) << out;
  std::string exe;
  ASSERT_EQ(e2e::shell(dir + "/lm run" + flags, &exe), 0) << exe;
  EXPECT_EQ(exe.substr(exe.find('\n') + 1), text);
  std::string cached, full;
  const std::string window = " --count 59 --temperature 1 --top-k 0 --sample-seed 7";
  ASSERT_EQ(attnc("run --ckpt " + dir + window, &cached), 0) << cached;
  ASSERT_EQ(attnc("run --ckpt " + dir + window + " --no-cache", &full), 0) << full;
  EXPECT_EQ(cached, full);
}

// task seq2seq in the graph form: an encoder and a decoder layer as nodes learn to reverse;
// translate decodes through the cached @encode / @decode_step greedily and with a beam, as
// the uncached @decode_full (--no-cache) does: the same outputs, the same n-best lists with
// log-probabilities within 1e-5 (the sums run in another order); the executable does as attnc
// does.
TEST(Graph, EncoderDecoderLearnsAndTranslates) {
  std::string dir = scratch("seq2seq"), out;
  ASSERT_EQ(attnc("train " + kModels + "reverse-graph.yaml --out " + dir, &out), 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("exact match ([0-9.]+)%"))) << out;
  EXPECT_GE(std::stod(m[1]), 90.0) << out; // (98%)
  const std::string inputs = "1 2 3 4 5\n3 1 4 1 5 9 2\n7 7 1\n";
  std::string greedy, beam;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir, inputs, dir, &greedy), 0) << greedy;
  EXPECT_EQ(greedy, "5 4 3 2 1\n2 9 5 1 4 1 3\n1 7 7\n");
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --beam 4", inputs, dir, &beam), 0)
      << beam;
  EXPECT_EQ(beam, greedy); // (each output is far likelier than any other)
  std::string uncached;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --no-cache", inputs, dir, &uncached),
            0)
      << uncached;
  EXPECT_EQ(uncached, greedy);
  // "i ||| tokens ||| log_prob=X score=Y" per hypothesis: tokens equal, X within 1e-5.
  auto nbest = [&](const std::string &flags) {
    std::string out;
    EXPECT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --beam 4 --nbest 3" + flags, inputs,
                                  dir, &out),
              0)
        << out;
    std::vector<std::pair<std::string, double>> lines;
    std::regex line("(.*) \\|\\|\\| log_prob=([-0-9.e]+) .*");
    std::istringstream in(out);
    std::smatch m;
    for (std::string l; std::getline(in, l);)
      if (std::regex_match(l, m, line))
        lines.push_back({m[1], std::stod(m[2])});
    return lines;
  };
  auto cachedList = nbest(""), uncachedList = nbest(" --no-cache");
  ASSERT_EQ(cachedList.size(), 9u);
  ASSERT_EQ(uncachedList.size(), cachedList.size());
  for (size_t i = 0; i < cachedList.size(); ++i) {
    EXPECT_EQ(cachedList[i].first, uncachedList[i].first);
    EXPECT_NEAR(cachedList[i].second, uncachedList[i].second, 1e-5);
  }
  ASSERT_EQ(attnc("compile --ckpt " + dir + " --exe -o " + dir + "/reverse", &out), 0) << out;
  std::ofstream(dir + "/inputs.txt") << inputs;
  std::string exe;
  ASSERT_EQ(e2e::shell(dir + "/reverse translate < " + dir + "/inputs.txt", &exe), 0) << exe;
  EXPECT_EQ(exe, greedy);
}

// A hand-written module, trained, then compiled ahead of time with its weights.
TEST(Graph, HandWrittenModuleBecomesAnExecutable) {
  std::string dir = scratch("module"), out;
  std::string spec = kModels + "mlp-sine-mlir.yaml";
  ASSERT_EQ(attnc("train " + spec + " --steps 200 --out " + dir, &out), 0) << out;
  ASSERT_EQ(attnc("compile " + spec + " --ckpt " + dir + " --exe -o " + dir + "/mlp", &out), 0)
      << out;
  out.clear();
  FILE *pipe = popen((dir + "/mlp eval 2>&1").c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe))
    out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("mlp-sine-mlir: validation loss"), std::string::npos) << out;
}

} // namespace
