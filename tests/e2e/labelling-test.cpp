// The seed's equal-length (input N, output N) and many-to-one (input N, output 1) task shapes
// end to end, as a user runs them: models/pos-tagger.yaml tags parts of speech that depend
// on the context; models/majority-classifier.yaml counts. (One-to-many generation is
// models/char-rnn.yaml in training-test.cpp; many-to-many seq2seq is seq2seq-test.cpp.)
#include "AttncProcess.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>

namespace {

using e2e::attnc;

// "validation accuracy 99.5%" in attnc's report -> 99.5 (NaN when absent).
double accuracy(const std::string &out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("validation accuracy ([0-9.]+)%")))
    return NAN;
  return std::stod(m[1]);
}

std::string model(const std::string &name) {
  return std::string(ATTN_SOURCE_DIR) + "/models/" + name + ".yaml";
}

TEST(Labelling, BidirectionalTaggerLearnsPartsOfSpeechFromContext) {
  std::string dir = e2e::scratch("labelling", "pos"), out;
  ASSERT_EQ(attnc("train " + model("pos-tagger") + " --out " + dir, &out), 0) << out;
  EXPECT_GT(accuracy(out), 98.0) << out;
  out.clear();
  ASSERT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_GT(accuracy(out), 98.0) << out;
  out.clear();
  ASSERT_EQ(attnc("run " + model("pos-tagger") + " --ckpt " + dir + " --count 20", &out), 0)
      << out;
  EXPECT_NE(out.find("->  DET"), std::string::npos) << out;
}

TEST(Labelling, ClassifierLearnsTheMajoritySymbol) {
  std::string dir = e2e::scratch("labelling", "majority"), out;
  ASSERT_EQ(attnc("train " + model("majority-classifier") + " --out " + dir, &out), 0) << out;
  EXPECT_GT(accuracy(out), 95.0) << out;
}

TEST(Labelling, TagCountMismatchInTsvIsReported) {
  std::string dir = e2e::scratch("labelling", "bad"), out;
  std::ofstream(dir + "/tags.tsv") << "a b\tX Y\na b c\tX Y\n";
  std::ofstream(dir + "/bad.yaml") << "name: bad\ntask: tag\ndata: {path: " << dir
                                   << "/tags.tsv, valid: 0}\nmodel: {rnn: {}}\n";
  EXPECT_EQ(attnc("train " + dir + "/bad.yaml --out " + dir + "/run", &out), 1);
  EXPECT_NE(out.find(dir + "/tags.tsv:2: error: the source has 3 tokens but the line gives 2 tags"),
            std::string::npos)
      << out;
}

} // namespace
