// Encoder-decoder models end to end, as a user runs them (attnc subprocesses):
// models/reverse-seq2seq.yaml learns to reverse sequences (> 95% exact match, greedy);
// beam search never scores below greedy on the model's own log-probability; n-best lists;
// a TSV-trained model with the context at every step and scheduled sampling; bad input.
#include "AttncProcess.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

namespace {

using e2e::attnc;
using e2e::exactMatch;

const std::string kReverse = std::string(ATTN_SOURCE_DIR) + "/models/reverse-seq2seq.yaml";

// `INDEX ||| OUTPUT ||| log_prob=L score=S` lines -> (index, output, L) in order.
struct Scored {
  int index;
  std::string output;
  double logProb;
};
std::vector<Scored> scored(const std::string &out) {
  std::vector<Scored> lines;
  std::regex re("^([0-9]+) \\|\\|\\| (.*) \\|\\|\\| log_prob=(\\S+) score=\\S+$");
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, re))
      lines.push_back({std::stoi(m[1]), m[2], std::stod(m[3])});
  }
  return lines;
}

// The reverse model, trained once for the tests that decode with it: by the ctest fixture
// e2e-seq2seq-reverse-train (tests/e2e/CMakeLists.txt), or here when the binary runs alone.
// The tests only read it, so they may run at once.
class Reverse : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir = std::string(ATTN_E2E_DIR) + "/seq2seq/reverse";
    if (std::ifstream(dir + "/best.safetensors").good())
      status = 0;
    else
      status = attnc("train " + kReverse + " --out " + e2e::scratch("seq2seq", "reverse"), &log);
  }
  static std::string dir, log;
  static int status;
};
std::string Reverse::dir, Reverse::log;
int Reverse::status = -1;

TEST_F(Reverse, LearnsToReverseWithGreedyDecoding) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_GT(exactMatch(out), 95.0) << out;

  out.clear();
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir, "1 2 3 4 5 6\n", dir, &out), 0)
      << out;
  EXPECT_EQ(out, "6 5 4 3 2 1\n");
}

TEST_F(Reverse, BeamSearchNeverScoresBelowGreedy) {
  ASSERT_EQ(status, 0) << log;
  // Random sources of the model's symbols and lengths.
  std::string input = e2e::scratch("seq2seq", "beam") + "/sources.txt";
  std::ofstream file(input);
  std::mt19937 rng(7);
  const int kLines = 150;
  for (int i = 0; i < kLines; ++i) {
    int n = 3 + (int)(rng() % 8);
    for (int k = 0; k < n; ++k)
      file << (k ? " " : "") << rng() % 10;
    file << "\n";
  }
  file.close();
  std::string greedyOut, beamOut;
  ASSERT_EQ(attnc("translate --ckpt " + dir + " --beam 1 --scores < " + input, &greedyOut), 0)
      << greedyOut;
  ASSERT_EQ(attnc("translate --ckpt " + dir + " --beam 5 --scores < " + input, &beamOut), 0)
      << beamOut;
  std::vector<Scored> greedy = scored(greedyOut), beam = scored(beamOut);
  ASSERT_EQ(greedy.size(), (size_t)kLines) << greedyOut;
  ASSERT_EQ(beam.size(), (size_t)kLines) << beamOut;
  int better = 0;
  for (int i = 0; i < kLines; ++i) {
    ASSERT_EQ(beam[i].index, i);
    // Both log-probabilities come from the same compiled decoder step, summed in the same
    // order; only the batch rows differ.
    EXPECT_GE(beam[i].logProb, greedy[i].logProb - 1e-4)
        << "line " << i << ": beam '" << beam[i].output << "' vs greedy '" << greedy[i].output
        << "'";
    better += beam[i].logProb > greedy[i].logProb + 1e-4;
  }
  std::cout << "beam 5 found a likelier output than greedy on " << better << " of " << kLines
            << " sources\n";
}

TEST_F(Reverse, NBestListsAreOrderedAndDistinct) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + " --beam 4 --nbest 3",
                                "3 1 4 1 5\n9 2 6\n", dir, &out),
            0)
      << out;
  std::vector<Scored> lines = scored(out);
  ASSERT_EQ(lines.size(), 6u) << out;
  for (int sentence = 0; sentence < 2; ++sentence) {
    const Scored *h = &lines[sentence * 3];
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(h[k].index, sentence);
    EXPECT_GE(h[0].logProb, h[1].logProb);
    EXPECT_GE(h[1].logProb, h[2].logProb);
    EXPECT_NE(h[0].output, h[1].output);
    EXPECT_NE(h[1].output, h[2].output);
  }
  EXPECT_EQ(lines[0].output, "5 1 4 1 3");
  EXPECT_EQ(lines[3].output, "6 2 9");
}

TEST_F(Reverse, TooLongInputGetsAnEmptyLineAndAnError) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  EXPECT_EQ(e2e::attncWithInput("translate --ckpt " + dir,
                                "1 2\n1 2 3 4 5 6 7 8 9 0 1\n3 4\n", dir, &out),
            1);
  EXPECT_NE(out.find("stdin:2: "), std::string::npos) << out;
  EXPECT_NE(out.find("at most 10"), std::string::npos) << out;
  EXPECT_NE(out.find("2 1\n\n4 3\n"), std::string::npos) << out;
}

// Pairs from a TSV file: each word of a small vocabulary translated to its own "foreign"
// word, in reverse order. An LSTM with the context at every step (Cho et al.) and scheduled
// sampling (linear decay of teacher forcing) learns it.
TEST(Seq2SeqTsv, ContextEveryStepWithScheduledSampling) {
  std::string dir = e2e::scratch("seq2seq", "tsv");
  const char *words[] = {"red", "green", "blue", "cat", "dog", "sun", "moon", "tree"};
  const char *foreign[] = {"rouge", "vert", "bleu", "chat", "chien", "soleil", "lune", "arbre"};
  std::mt19937 rng(3);
  std::ofstream tsv(dir + "/pairs.tsv");
  for (int i = 0; i < 3000; ++i) {
    int n = 2 + (int)(rng() % 4);
    std::vector<int> ids(n);
    for (int &id : ids)
      id = (int)(rng() % 8);
    for (int k = 0; k < n; ++k)
      tsv << (k ? " " : "") << words[ids[k]];
    tsv << "\t";
    for (int k = n - 1; k >= 0; --k)
      tsv << foreign[ids[k]] << (k ? " " : "");
    tsv << "\n";
  }
  tsv.close();
  std::ofstream spec(dir + "/words.yaml");
  spec << "name: words\ntask: seq2seq\n"
       << "data: {path: " << dir << "/pairs.tsv, valid: 200, max_len: 6}\n"
       << "model:\n  embedding: {dim: 16}\n  rnn: {cell: lstm, hidden: 64}\n"
       << "  seq2seq: {context: every_step}\n"
       << "train:\n  batch_size: 32\n  steps: 2500\n  optimizer: {lr: 0.01}\n"
       << "  schedule: {type: cosine, warmup: 100, min_lr: 0.0005}\n"
       << "  clip_norm: 1.0\n  eval_every: 200\n"
       << "  teacher_forcing: {schedule: linear, slope: 0.001, min: 0.5}\n";
  spec.close();
  std::string out;
  ASSERT_EQ(attnc("train " + dir + "/words.yaml --out " + dir + "/run", &out), 0) << out;
  EXPECT_NE(out.find("2800 training and 200 validation pairs, vocabularies of 12 and 12"),
            std::string::npos)
      << out;
  EXPECT_GT(exactMatch(out), 90.0) << out;
  out.clear();
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + "/run", "cat sun tree\n", dir, &out), 0) << out;
  EXPECT_EQ(out, "arbre soleil chat\n");
}

TEST(Seq2SeqTsv, MalformedLineIsReportedWithItsLine) {
  std::string dir = e2e::scratch("seq2seq", "bad-tsv");
  std::ofstream(dir + "/pairs.tsv") << "a b\tb a\nno tab here\n";
  std::ofstream(dir + "/bad.yaml") << "name: bad\ntask: seq2seq\ndata: {path: " << dir
                                   << "/pairs.tsv, valid: 0}\nmodel: {rnn: {}}\n";
  std::string out;
  EXPECT_EQ(attnc("train " + dir + "/bad.yaml --out " + dir + "/run", &out), 1);
  EXPECT_NE(out.find(dir + "/pairs.tsv:2"), std::string::npos) << out;
}

} // namespace
