// The task library (runtime/task): data and vocabularies from a DataConfig, the checkpoint
// metadata format, the per-step inputs, checkpoint paths, stdin lines and decoding accuracy.
#include "attn/task/Data.h"
#include "attn/task/LineReader.h"
#include "attn/task/Metadata.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/StepInputs.h"

#include "attn/checkpoint/Checkpoint.h"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <cstdio>

#include <fstream>

#include <unistd.h>

#include <filesystem>
#include <set>

namespace {

using namespace attn::task;

DataConfig dates() {
  DataConfig c;
  c.task = Task::Seq2Seq;
  c.builtin = "dates";
  c.tokens = attn::data::Tokenize::Char;
  c.maxLen = 32;
  c.train = 200;
  c.valid = 20;
  c.seed = 3;
  return c;
}

TEST(TaskData, TaskNamesRoundTrip) {
  for (Task t : {Task::Regress, Task::Lm, Task::Seq2Seq, Task::Tag, Task::Classify})
    EXPECT_EQ(parseTask(taskName(t)), t);
  EXPECT_THROW(parseTask("translate"), std::runtime_error);
  EXPECT_TRUE(usesPairs(Task::Tag));
  EXPECT_FALSE(usesPairs(Task::Lm));
}

TEST(TaskData, PairsAreDeterministicAndValidationIsDrawnApart) {
  PairData a = buildPairs(dates()), b = buildPairs(dates());
  ASSERT_EQ(a.train.size(), 200u);
  ASSERT_EQ(a.valid.size(), 20u);
  EXPECT_EQ(a.train[7].source, b.train[7].source);
  EXPECT_EQ(a.source.serialize(), b.source.serialize());
  EXPECT_NE(a.train[0].source, a.valid[0].source); // the next seed
  EXPECT_EQ(a.sourceLength, 32);
  EXPECT_EQ(a.targetLength, 33); // room for eos
}

TEST(TaskData, SharedVocabularyCoversBothSides) {
  DataConfig c = dates();
  c.sharedVocab = true;
  PairData d = buildPairs(c);
  EXPECT_EQ(d.source.serialize(), d.target.serialize());
  PairData apart = buildPairs(dates());
  EXPECT_GE(d.source.size(), apart.source.size());
  EXPECT_GE(d.source.size(), apart.target.size());
}

TEST(TaskData, SplitsHaveTheLossInputs) {
  DataConfig c = dates();
  PairData d = buildPairs(c);
  attn::train::Split train = trainSplit(c, &d);
  ASSERT_EQ(train.size(), 4u); // src, src_mask, tgt_in, tgt_out
  EXPECT_EQ(train[0].shape(), (std::vector<int64_t>{200, 32}));
  EXPECT_EQ(train[2].shape(), (std::vector<int64_t>{200, 33}));
  EXPECT_THROW(trainSplit(c, nullptr), std::logic_error);

  DataConfig sine;
  sine.builtin = "sine";
  sine.window = 5;
  sine.train = 10;
  attn::train::Split s = trainSplit(sine);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].shape(), (std::vector<int64_t>{10, 5}));
}

// A series file: every window of N + M values; the last data.valid windows validate, and the
// training windows end before the first of them starts.
TEST(TaskData, SeriesFileSplitsIntoWindowsWithoutOverlap) {
  std::string path = ::testing::TempDir() + "attn_series.csv";
  {
    std::ofstream out(path);
    out << "value\n";
    for (int i = 0; i < 20; ++i)
      out << i << "\n";
  }
  DataConfig c;
  c.task = Task::Regress;
  c.path = path;
  c.window = 3;
  c.horizon = 2;
  c.valid = 4;
  attn::data::Examples train = seriesSplit(c, true), valid = seriesSplit(c, false);
  // 16 windows (offsets 0..15); validation: offsets 12..15; training: offsets 0..7 (the
  // window at 7 ends at value 11, before value 12).
  ASSERT_EQ(valid.x.shape(), (std::vector<int64_t>{4, 3}));
  ASSERT_EQ(train.x.shape(), (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(valid.x.data<float>()[0], 12.0f);
  EXPECT_EQ(valid.y.data<float>()[7], 19.0f);
  EXPECT_EQ(train.x.data<float>()[7 * 3], 7.0f);
  EXPECT_EQ(train.y.data<float>()[7 * 2 + 1], 11.0f);
  EXPECT_EQ(trainSplit(c)[1].shape(), (std::vector<int64_t>{8, 2}));
  c.valid = 0; // nothing validates: training takes every window
  EXPECT_EQ(seriesSplit(c, true).x.shape()[0], 16);
  EXPECT_EQ(seriesSplit(c, false).x.shape()[0], 0);
  c.valid = 13;
  try {
    seriesSplit(c, true);
    ADD_FAILURE() << "a series too short for its splits was accepted";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("20 values hold 16 windows"), std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

// A tagger's or classifier's file whose labels do not fit its sources: the file and line,
// in the validation pairs too (the tail of the training file here).
TEST(TaskData, LabelCountErrorsNameTheLine) {
  std::string path = ::testing::TempDir() + "attn_labels.tsv";
  auto errorOf = [&](Task task, const std::string &contents) {
    std::ofstream(path) << contents;
    DataConfig c;
    c.task = task;
    c.path = path;
    c.maxLen = 8;
    c.valid = 1;
    try {
      buildPairs(c);
    } catch (const std::runtime_error &e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(errorOf(Task::Tag, "a b\tX Y\n\nb c d\tX Y\n"),
            path + ":3: error: the source has 3 tokens but the line gives 2 tags (one per token)");
  EXPECT_EQ(errorOf(Task::Classify, "a b\tpos neg\nc\tneg\n"),
            path + ":1: error: a classifier's line must give one label, got 'pos neg'");
  EXPECT_EQ(errorOf(Task::Classify, "a b\tpos\nc\tneg\n"), "<no error>");
  std::remove(path.c_str());
}

// The case a new user met: "nine -> 9 9" against "9" was counted right at every reference
// token (token accuracy 100%) while the exact match said otherwise.
TEST(TaskAccuracy, ExtraAndMissingTokensAreMisses) {
  Accuracy a = scoreOutputs({{9, 9}, {1, 2, 3}, {5}, {4, 4}}, {{9}, {1, 2, 3}, {5, 6}, {4, 7}});
  EXPECT_EQ(a.count, 4);
  EXPECT_DOUBLE_EQ(a.exactMatch, 0.25);
  // Positions over the longer side: 2 + 3 + 2 + 2 = 9; right: 1 + 3 + 1 + 1 = 6.
  EXPECT_DOUBLE_EQ(a.tokenAccuracy, 6.0 / 9.0);
  EXPECT_DOUBLE_EQ(a.lengthMismatch, 0.5);

  Accuracy all = scoreOutputs({{1, 2}, {3}}, {{1, 2}, {3}});
  EXPECT_DOUBLE_EQ(all.exactMatch, 1.0);
  EXPECT_DOUBLE_EQ(all.tokenAccuracy, 1.0);
  EXPECT_DOUBLE_EQ(all.lengthMismatch, 0.0);
  EXPECT_EQ(scoreOutputs({}, {}).count, 0);
}

TEST(TaskMetadata, RoundTripsVocabulariesAndLengths) {
  PairData d = buildPairs(dates());
  Metadata m = pairMetadata(d);
  PairData back =
      pairDataFromMetadata(Task::Seq2Seq, attn::data::Tokenize::Char, false, m, "x.safetensors");
  EXPECT_EQ(back.source.serialize(), d.source.serialize());
  EXPECT_EQ(back.target.serialize(), d.target.serialize());
  EXPECT_EQ(back.sourceLength, 32);
  EXPECT_EQ(back.targetLength, 33);
  EXPECT_TRUE(back.train.empty());
  EXPECT_EQ(m.at("data_fingerprint"), dataFingerprint(d.train));
}

// Subword models are trained on the training side, one per side or one shared, and travel in
// the metadata: a checkpoint splits text as training did, and a reused tokenizer is not
// trained again.
TEST(TaskMetadata, SubwordModelsTravelWithTheVocabularies) {
  DataConfig c = dates();
  c.tokens = attn::data::Tokenize::Bpe;
  c.vocabSize = 60;
  c.train = 300;
  c.valid = 20;
  PairData d = buildPairs(c);
  EXPECT_EQ(d.sourceTokens.kind(), attn::data::Tokenize::Bpe);
  EXPECT_NE(d.sourceTokens, d.targetTokens); // one model per side
  Metadata m = pairMetadata(d);
  ASSERT_TRUE(m.count(kSourceTokenizerKey) && m.count(kTargetTokenizerKey));
  PairData back =
      pairDataFromMetadata(Task::Seq2Seq, attn::data::Tokenize::Bpe, false, m, "x.safetensors");
  EXPECT_EQ(back.sourceTokens, d.sourceTokens);
  EXPECT_EQ(back.targetTokens, d.targetTokens);
  EXPECT_EQ(back.source.serialize(), d.source.serialize());
  const std::string line = "Tuesday, September 26, 2017";
  EXPECT_EQ(back.sourceTokens.tokenize(line), d.sourceTokens.tokenize(line));
  EXPECT_EQ(back.sourceTokens.detokenize(back.sourceTokens.tokenize(line)), line);
  // Rebuilt with the checkpoint's tokenizers: the same vocabularies.
  PairData again = buildPairs(c, &back);
  EXPECT_EQ(again.source.serialize(), d.source.serialize());
  EXPECT_EQ(again.target.serialize(), d.target.serialize());

  c.sharedVocab = true;
  PairData shared = buildPairs(c);
  EXPECT_EQ(shared.sourceTokens, shared.targetTokens);
  EXPECT_EQ(shared.source.serialize(), shared.target.serialize());

  // A subword model whose checkpoint lost its tokenizer is refused, not split by words.
  m.erase(kSourceTokenizerKey);
  m.erase(kTargetTokenizerKey);
  EXPECT_THROW(pairDataFromMetadata(Task::Seq2Seq, attn::data::Tokenize::Bpe, false, m, "x"),
               std::runtime_error);
}

TEST(TaskMetadata, DamagedOrMissingKeysAreNamed) {
  Metadata m = pairMetadata(buildPairs(dates()));
  Metadata noVocab = m;
  noVocab.erase("source_vocab");
  try {
    pairDataFromMetadata(Task::Seq2Seq, attn::data::Tokenize::Char, false, noVocab, "f.st");
    FAIL() << "a missing vocabulary was accepted";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("f.st: a seq2seq checkpoint needs 'source_vocab'"),
              std::string::npos)
        << e.what();
  }
  Metadata zero = m;
  zero["target_length"] = "0";
  EXPECT_THROW(pairDataFromMetadata(Task::Seq2Seq, attn::data::Tokenize::Char, false, zero, "f"),
               std::runtime_error);
  // A checkpoint written before the fingerprint existed still loads.
  Metadata old = m;
  old.erase("data_fingerprint");
  EXPECT_NO_THROW(
      pairDataFromMetadata(Task::Seq2Seq, attn::data::Tokenize::Char, false, old, "f"));
}

TEST(TaskMetadata, FingerprintTellsDataApart) {
  std::vector<attn::data::Pair> a = {{"ab", "c"}}, b = {{"a", "bc"}};
  EXPECT_NE(dataFingerprint(a), dataFingerprint(b));
  EXPECT_EQ(dataFingerprint(a), dataFingerprint(a));
  EXPECT_EQ(dataFingerprint(a).size(), 16u);
}

TEST(TaskMetadata, CheckpointFileOfADirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "attn_task_ckpt";
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_THROW(checkpointFile(dir.string()), std::runtime_error);
  attn::checkpoint::Checkpoint c;
  c.metadata = {{kSpecKey, "one"}};
  attn::checkpoint::save((dir / "last.safetensors").string(), c);
  EXPECT_EQ(checkpointFile(dir.string()), (dir / "last.safetensors").string());
  attn::checkpoint::save((dir / "best.safetensors").string(), c);
  EXPECT_EQ(checkpointFile(dir.string()), (dir / "best.safetensors").string());
  // A best.safetensors of another run (another spec) is not this run's best.
  c.metadata = {{kSpecKey, "two"}};
  attn::checkpoint::save((dir / "best.safetensors").string(), c);
  std::string warning;
  EXPECT_EQ(checkpointFile(dir.string(), &warning), (dir / "last.safetensors").string());
  EXPECT_NE(warning.find("another spec"), std::string::npos) << warning;
  EXPECT_EQ(checkpointFile("x.safetensors"), "x.safetensors");
}

TEST(TaskStepInputs, ValidationSeesNoNoiseAndTrainingIsRepeatable) {
  StepInputConfig c;
  c.teacherForcing.ratio = 0.5;
  c.dropout = 0.25;
  c.seed = 9;
  attn::train::BatchHook hook = perStepInputs(c);
  attn::Tensor teacher(ATTN_F32, {4, 10}), mask(ATTN_F32, {4, 10, 3});
  hook(0, kTeacherInput, teacher);
  for (int64_t i = 0; i < teacher.numel(); ++i)
    EXPECT_EQ(teacher.data<float>()[i], 1.0f);
  hook(5, kTeacherInput, teacher);
  std::set<float> seen;
  for (int64_t i = 0; i < teacher.numel(); ++i) {
    if (i % 10 == 0)
      EXPECT_EQ(teacher.data<float>()[i], 1.0f) << "t = 0 always reads the true token";
    seen.insert(teacher.data<float>()[i]);
  }
  EXPECT_EQ(seen, (std::set<float>{0.0f, 1.0f}));
  attn::Tensor again(ATTN_F32, {4, 10});
  hook(5, kTeacherInput, again);
  EXPECT_EQ(std::vector<float>(teacher.data<float>(), teacher.data<float>() + 40),
            std::vector<float>(again.data<float>(), again.data<float>() + 40));
  hook(5, std::string(kDropoutPrefix) + "0", mask);
  for (int64_t i = 0; i < mask.numel(); ++i) {
    float v = mask.data<float>()[i];
    EXPECT_TRUE(v == 0.0f || std::abs(v - 1.0f / 0.75f) < 1e-6f) << v;
  }
  EXPECT_THROW(hook(5, "noise", mask), std::runtime_error);
  StepInputConfig bad;
  bad.teacherForcing.schedule = "inverse_sigmoid";
  bad.teacherForcing.k = 0.5;
  EXPECT_THROW(perStepInputs(bad), std::exception);
}

TEST(TaskLineReader, LinesOfAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const char text[] = "one\r\ntwo\n\nlast";
  ASSERT_EQ(write(fds[1], text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fds[1]);
  LineReader in(fds[0]);
  std::vector<std::string> lines;
  std::string line;
  while (in.next(line))
    lines.push_back(line);
  close(fds[0]);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "", "last"}));
  EXPECT_FALSE(in.failed());
  EXPECT_TRUE(in.waiting()); // at the end: nothing to wait for
}

// A line over the limit ends the reading (/dev/zero has no newline at all): the lines before
// it, then overlong(), with the buffer bounded.
TEST(TaskLineReader, AnOverlongLineEndsTheReading) {
  int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  LineReader zeros(fd, 4096);
  std::string line;
  EXPECT_FALSE(zeros.next(line));
  EXPECT_TRUE(zeros.overlong());
  EXPECT_FALSE(zeros.next(line));
  close(fd);

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string text = "short\n" + std::string(300, 'x') + "\nnever\n";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), (ssize_t)text.size());
  close(fds[1]);
  LineReader in(fds[0], 100);
  ASSERT_TRUE(in.next(line));
  EXPECT_EQ(line, "short");
  EXPECT_FALSE(in.next(line));
  EXPECT_TRUE(in.overlong());
  EXPECT_FALSE(in.failed());
  close(fds[0]);
}

} // namespace
