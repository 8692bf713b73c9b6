// Encoder-decoder models end to end, as a user runs them (attnc subprocesses):
// models/reverse-seq2seq.yaml learns to reverse sequences (> 95% exact match, greedy);
// beam search never scores below greedy on the model's own log-probability; n-best lists;
// a TSV-trained model with the context at every step and scheduled sampling (and BLEU at
// every validation pass, train.eval_bleu); subword tokens
// (SentencePiece BPE trained by attnc, and a user's model file), through attnc and through an
// executable; bad input.
#include "AttncProcess.h"

#include <gtest/gtest.h>

#include <cctype>
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

// sacreBLEU's number (attn/task/Bleu.h) in the report beside the exact match, and alone with
// --bleu on a test file of pairs (--pairs).
double metric(const std::string &out, const std::string &prefix) {
  std::smatch m;
  std::regex re(prefix + "([0-9.]+)");
  return std::regex_search(out, m, re) ? std::stod(m[1]) : NAN;
}

TEST_F(Reverse, LearnsToReverseWithGreedyDecoding) {
  ASSERT_EQ(status, 0) << log;
  std::string out;
  ASSERT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_GT(exactMatch(out), 95.0) << out;
  EXPECT_GT(metric(out, "BLEU = "), 95.0) << out;
  EXPECT_GT(metric(out, "chrF2 = "), 95.0) << out;

  // A test split of two pairs, the second's reference wrong on purpose.
  std::string tsv = dir + "/../reverse-test.tsv";
  std::ofstream(tsv) << "1 2 3 4 5\t5 4 3 2 1\n5 6 7 8 9\t1 1 1 1 1\n";
  out.clear();
  ASSERT_EQ(attnc("eval --ckpt " + dir + " --bleu --pairs " + tsv, &out), 0) << out;
  EXPECT_NE(out.find("BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x = "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.x = "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(": 2 pairs ("), std::string::npos) << out;
  // The first line's 5 + 4 + 3 + 2 n-grams match, none of the second's ("9 8 7 6 5" against
  // "1 1 1 1 1"): every precision is a half, the lengths are equal, BLEU = 50.
  EXPECT_NEAR(metric(out, "tok:13a\\|smooth:exp\\|version:2\\.x = "), 50.0, 0.005) << out;
  // Another system's translations (--hyp): the same lines score the same 50 with no model,
  // and a file of another length is refused with both counts.
  std::string hyp = dir + "/../reverse-test.hyp", scored;
  std::ofstream(hyp) << "5 4 3 2 1\n9 8 7 6 5\n";
  ASSERT_EQ(attnc("eval --hyp " + hyp + " --pairs " + tsv, &scored), 0) << scored;
  EXPECT_EQ(scored.substr(0, scored.find("\n", scored.find("chrF2"))),
            out.substr(0, out.find("\n", out.find("chrF2"))));
  std::ofstream(hyp) << "5 4 3 2 1\n";
  scored.clear();
  EXPECT_EQ(attnc("eval --hyp " + hyp + " --pairs " + tsv, &scored), 1);
  EXPECT_NE(scored.find("has 1 lines and " + tsv + " 2 pairs"), std::string::npos) << scored;
  out.clear();
  EXPECT_EQ(attnc("eval --ckpt " + dir + " --bleu --pairs " + dir + "/nothing.tsv", &out), 1);
  EXPECT_NE(out.find("nothing.tsv"), std::string::npos) << out;

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
       << "  clip_norm: 1.0\n  eval_every: 200\n  eval_bleu: true\n"
       << "  teacher_forcing: {schedule: linear, slope: 0.001, min: 0.5}\n";
  spec.close();
  std::string out;
  ASSERT_EQ(attnc("train " + dir + "/words.yaml --out " + dir + "/run", &out), 0) << out;
  EXPECT_NE(out.find("2800 training and 200 validation pairs, vocabularies of 12 and 12"),
            std::string::npos)
      << out;
  EXPECT_GT(exactMatch(out), 90.0) << out;
  // train.eval_bleu: every validation pass logs BLEU and chrF2; the last one is the BLEU that
  // attnc eval gives the last checkpoint.
  std::ifstream metrics(dir + "/run/metrics.jsonl");
  std::vector<std::string> passes;
  for (std::string line; std::getline(metrics, line);)
    if (line.find("\"valid_loss\"") != std::string::npos)
      passes.push_back(line);
  ASSERT_EQ(passes.size(), 13u);
  for (const std::string &pass : passes)
    EXPECT_NE(pass.find("\"valid_chrf\":"), std::string::npos) << pass;
  std::string evalOut;
  ASSERT_EQ(attnc("eval --ckpt " + dir + "/run/last.safetensors --bleu", &evalOut), 0) << evalOut;
  EXPECT_NEAR(metric(passes.back(), "\"valid_bleu\": "),
              metric(evalOut, "tok:13a\\|smooth:exp\\|version:2\\.x = "), 0.01)
      << passes.back() << "\n" << evalOut;
  EXPECT_NEAR(metric(passes.back(), "\"valid_chrf\": "),
              metric(evalOut, "space:no\\|version:2\\.x = "), 0.01)
      << passes.back() << "\n" << evalOut;
  EXPECT_GT(metric(passes.back(), "\"valid_bleu\": "), 50.0) << passes.back();
  out.clear();
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + "/run", "cat sun tree\n", dir, &out), 0) << out;
  EXPECT_EQ(out, "arbre soleil chat\n");
}

// Words built of shared stems and endings, translated to their reversed order in capitals
// (so that the two sides' texts differ): BPE pieces
// (trained on the training side, one model per side) make each word a few subwords. The
// checkpoint carries the models: attnc translate and an executable split and join the same
// way, the run directory holds them as .model files, and one of them trains again as a
// user's model (data.tokens: sentencepiece).
TEST(Seq2SeqTsv, SubwordsFromTrainingToAnExecutable) {
  std::string dir = e2e::scratch("seq2seq", "subwords");
  const char *stems[] = {"walk", "talk", "play", "jump", "look", "call"};
  const char *ends[] = {"", "s", "ed", "ing"};
  std::mt19937 rng(5);
  std::ofstream tsv(dir + "/pairs.tsv");
  for (int i = 0; i < 3000; ++i) {
    int n = 1 + (int)(rng() % 3);
    std::vector<std::string> w(n);
    for (std::string &word : w)
      word = std::string(stems[rng() % 6]) + ends[rng() % 4];
    for (int k = 0; k < n; ++k)
      tsv << (k ? " " : "") << w[k];
    tsv << "\t";
    for (int k = n - 1; k >= 0; --k) {
      std::string upper = w[k];
      for (char &ch : upper)
        ch = (char)std::toupper((unsigned char)ch);
      tsv << upper << (k ? " " : "");
    }
    tsv << "\n";
  }
  tsv.close();
  auto writeSpec = [&](const std::string &name, const std::string &tokens, int steps) {
    std::ofstream(dir + "/" + name + ".yaml")
        << "name: " << name << "\ntask: seq2seq\n"
        << "data: {path: pairs.tsv, valid: 200, max_len: 12, " << tokens << "}\n"
        << "model:\n  embedding: {dim: 32}\n  rnn: {cell: gru, hidden: 96}\n"
        << "  attention: {type: luong, score: general}\n"
        << "train:\n  batch_size: 32\n  steps: " << steps << "\n  optimizer: {lr: 0.005}\n"
        << "  clip_norm: 1.0\n  eval_every: 1000\n"
        << "decode: {batch: 16}\n";
  };
  writeSpec("bpe", "tokens: bpe, vocab_size: 40", 1500);
  std::string out;
  ASSERT_EQ(attnc("train " + dir + "/bpe.yaml --out " + dir + "/run", &out), 0) << out;
  EXPECT_NE(out.find("(bpe subwords)"), std::string::npos) << out;
  EXPECT_NE(out.find("source.spm.model, target.spm.model"), std::string::npos) << out;
  EXPECT_GT(exactMatch(out), 80.0) << out;
  const std::string lines = "walked playing\njumps calls looking\ntalk\n";
  std::string viaAttnc, viaExe;
  ASSERT_EQ(e2e::attncWithInput("translate --ckpt " + dir + "/run", lines, dir, &viaAttnc), 0)
      << viaAttnc;
  EXPECT_EQ(viaAttnc, "PLAYING WALKED\nLOOKING CALLS JUMPS\nTALK\n");
  ASSERT_EQ(attnc("compile " + dir + "/bpe.yaml --ckpt " + dir + "/run --exe -o " + dir +
                      "/bpe-exe",
                  &out),
            0)
      << out;
  std::ofstream(dir + "/in.txt") << lines;
  ASSERT_EQ(e2e::shell("cd " + dir + " && ./bpe-exe translate < in.txt", &viaExe), 0) << viaExe;
  EXPECT_EQ(viaExe, viaAttnc);

  // The run's source model as a user's SentencePiece model, for both sides.
  writeSpec("spm", "tokens: sentencepiece, spm_model: run/source.spm.model", 20);
  out.clear();
  ASSERT_EQ(attnc("train " + dir + "/spm.yaml --out " + dir + "/spm-run", &out), 0) << out;
  EXPECT_NE(out.find("(sentencepiece subwords, one model for both sides)"), std::string::npos)
      << out;
  EXPECT_NE(out.find(", spm.model"), std::string::npos) << out;

  // A model file that is not there: named where the spec names it.
  writeSpec("missing", "tokens: sentencepiece, spm_model: nothing.model", 20);
  out.clear();
  EXPECT_EQ(attnc("train " + dir + "/missing.yaml --out " + dir + "/x", &out), 1) << out;
  EXPECT_NE(out.find(dir + "/missing.yaml:3:"), std::string::npos) << out;
  EXPECT_NE(out.find("data.spm_model " + dir + "/nothing.model: cannot open file"),
            std::string::npos)
      << out;
}

// A tagger of subwords is the spec's error, reported as check reports it, before any data is
// read (it was an internal error from the vocabulary).
TEST(Seq2SeqTsv, ASubwordTaggerIsRefusedAtItsKey) {
  std::string dir = e2e::scratch("seq2seq", "subword-tagger");
  std::ofstream(dir + "/tags.tsv") << "the cat\tDET NOUN\na dog\tDET NOUN\nthe dog\tDET NOUN\n";
  std::ofstream(dir + "/t.yaml") << "name: t\ntask: tag\ndata: {path: tags.tsv, valid: 1, "
                                    "tokens: bpe, vocab_size: 20}\nmodel: {rnn: {hidden: 4}}\n";
  std::string out;
  EXPECT_EQ(attnc("train " + dir + "/t.yaml --out " + dir + "/run", &out), 1) << out;
  EXPECT_NE(out.find("t.yaml:3:"), std::string::npos) << out;
  EXPECT_NE(out.find("which task 'tag' cannot read"), std::string::npos) << out;
  EXPECT_EQ(out.find("data::Tokenizer"), std::string::npos) << out;
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

// An executable compiled from a data.stream spec streams its corpus when it trains, as attnc
// does, and says so (its configuration once lost data.stream and read the file whole).
TEST(Seq2SeqTsv, AnExecutableStreamsAStreamedSpec) {
  std::string dir = e2e::scratch("seq2seq", "exe-stream");
  {
    std::ofstream tsv(dir + "/pairs.tsv");
    for (int i = 0; i < 200; ++i)
      tsv << "a b " << i % 5 << "\t" << i % 5 << " b a\n";
  }
  std::ofstream(dir + "/st.yaml") << "name: st\ntask: seq2seq\n"
                                     "data: {path: pairs.tsv, valid: 4, stream: true, "
                                     "stream_buffer: 32}\n"
                                     "model: {embedding: {dim: 4}, rnn: {cell: gru, hidden: 4}}\n"
                                     "train: {steps: 2, batch_size: 4}\n";
  std::string out;
  ASSERT_EQ(attnc("compile " + dir + "/st.yaml --exe -o " + dir + "/st", &out), 0) << out;
  out.clear();
  ASSERT_EQ(e2e::shell("cd " + dir + " && ./st train --fresh --steps 2 --out run", &out), 0) << out;
  EXPECT_NE(out.find("st: streaming pairs.tsv in blocks of 32 pairs"), std::string::npos) << out;
}

// Every bad line of a corpus in one run: the first 20 with the count; data.skip_bad_lines
// trains without them and says how many it left out (in memory and streamed alike).
TEST(Seq2SeqTsv, EveryBadLineIsReportedOrSkippedWithACount) {
  std::string dir = e2e::scratch("seq2seq", "bad-lines");
  {
    std::ofstream tsv(dir + "/pairs.tsv");
    for (int i = 0; i < 60; ++i) {
      if (i % 2 == 1)
        tsv << "bad line " << i << "\n"; // 30 lines without a tab
      else if (i == 10)
        tsv << "caf\xe9\tcafe\n"; // Latin-1, not UTF-8
      else
        tsv << "a b " << i % 5 << "\t" << i % 5 << " b a\n";
    }
  }
  std::ofstream(dir + "/s.yaml") << "name: s\ntask: seq2seq\ndata: {path: pairs.tsv, valid: 4}\n"
                                    "model: {embedding: {dim: 4}, rnn: {cell: gru, hidden: 4}}\n"
                                    "train: {steps: 2, batch_size: 4}\n";
  std::string out;
  EXPECT_EQ(attnc("train " + dir + "/s.yaml --out " + dir + "/run", &out), 1);
  EXPECT_NE(out.find("pairs.tsv: error: 31 lines cannot be read:"), std::string::npos) << out;
  EXPECT_NE(out.find("pairs.tsv:2: error: expected one tab"), std::string::npos) << out;
  EXPECT_NE(out.find("pairs.tsv:11: error: the line is not UTF-8 text"), std::string::npos) << out;
  EXPECT_NE(out.find("... and 11 more"), std::string::npos) << out;
  EXPECT_NE(out.find("data.skip_bad_lines: true"), std::string::npos) << out;
  for (const char *stream : {"false", "true"}) {
    out.clear();
    EXPECT_EQ(attnc("train " + dir + "/s.yaml --set data.skip_bad_lines=true --set data.stream=" +
                        stream + " --out " + dir + "/run-" + stream,
                    &out),
              0)
        << out;
    EXPECT_NE(out.find("pairs.tsv: warning: left out 31 lines that cannot be read"),
              std::string::npos)
        << stream << ": " << out;
  }
}

} // namespace
