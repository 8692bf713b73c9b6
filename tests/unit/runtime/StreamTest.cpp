// Streamed corpora (data.stream): the index of a TSV file against readTsv and Vocab::build
// of the same file, its cache, its errors; StreamedPairs' batches (every kept pair once per
// epoch, the same batch for the same step in a new reader, ranks' rows making the batch).
#include "attn/data/PairIndex.h"
#include "attn/task/Data.h"
#include "attn/task/StreamedPairs.h"
#include "attn/task/TokenBatches.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace {

using attn::data::PairIndex;
using namespace attn::task;

std::string scratch(const std::string &name) {
  std::string dir = ::testing::TempDir() + "attn_stream_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// "w<i % 7> ... \t W<i % 5> ..." with 1..(i % 9 + 1) source words: some longer than max_len.
std::string corpus(int lines) {
  std::string text;
  for (int i = 0; i < lines; ++i) {
    for (int k = 0; k <= i % 9; ++k)
      text += (k ? " w" : "w") + std::to_string((i + k) % 7);
    text += "\tW" + std::to_string(i % 5) + " #" + std::to_string(i) + "\n";
  }
  return text;
}

PairIndex::Options options(int64_t holdOut, const std::string &cache = "") {
  PairIndex::Options o;
  o.holdOut = holdOut;
  o.cachePath = cache;
  return o;
}

TEST(PairIndex, HoldsWhatReadTsvReadsAndCountsTheTrainingTokens) {
  std::string dir = scratch("index"), path = dir + "/pairs.tsv";
  // CRLF lines, empty and blank lines, a last line without "\n": as readTsv takes them.
  std::ofstream(path, std::ios::binary) << "a b\tx\r\n\n  \t \r\nb c\ty z\r\n\nc\tz";
  std::vector<attn::data::Pair> held = attn::data::readTsv(path);
  PairIndex index = PairIndex::open(path, options(1));
  ASSERT_EQ(index.size(), 3);
  std::vector<attn::data::Pair> read = index.pairs(index.entries(0, 3));
  ASSERT_EQ(read.size(), held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(read[i].source, held[i].source);
    EXPECT_EQ(read[i].target, held[i].target);
    EXPECT_EQ(read[i].line, held[i].line);
  }
  EXPECT_EQ(index.entries(1, 1)[0].sourceTokens, 2);
  EXPECT_EQ(index.entries(1, 1)[0].targetTokens, 2);
  // The held-out last pair ("c", "z") is not counted.
  EXPECT_EQ(index.sourceCounts(), (attn::data::TokenCounts{{"a", 1}, {"b", 2}, {"c", 1}}));
  EXPECT_EQ(index.targetCounts(), (attn::data::TokenCounts{{"x", 1}, {"y", 1}, {"z", 1}}));
  EXPECT_FALSE(index.reused());
}

TEST(PairIndex, VocabulariesMatchTheInMemoryOnes) {
  std::string dir = scratch("vocab"), path = dir + "/pairs.tsv";
  std::ofstream(path) << corpus(500);
  DataConfig c;
  c.task = Task::Seq2Seq;
  c.path = path;
  c.valid = 40;
  c.maxLen = 6;
  c.minCount = 2;
  PairData held = buildPairs(c);
  c.stream = true;
  PairData streamed = buildPairs(c);
  EXPECT_TRUE(streamed.train.empty());
  EXPECT_EQ(streamed.streamTrain, 460);
  EXPECT_EQ(streamed.source, held.source);
  EXPECT_EQ(streamed.target, held.target);
  ASSERT_EQ(streamed.valid.size(), held.valid.size());
  for (size_t i = 0; i < held.valid.size(); ++i)
    EXPECT_EQ(streamed.valid[i].target, held.valid[i].target);
}

TEST(PairIndex, IsReusedUntilTheFileOrTheTokenizersChange) {
  std::string dir = scratch("cache"), path = dir + "/pairs.tsv", cache = dir + "/run/data/pairs";
  std::ofstream(path) << corpus(50);
  EXPECT_FALSE(PairIndex::open(path, options(5, cache)).reused());
  PairIndex again = PairIndex::open(path, options(5, cache));
  EXPECT_TRUE(again.reused());
  EXPECT_EQ(again.size(), 50);
  EXPECT_EQ(again.pairs(again.entries(49, 1))[0].target, "W4 #49");
  EXPECT_EQ(again.sourceCounts(), PairIndex::open(path, options(5)).sourceCounts());
  PairIndex::Options chars = options(5, cache);
  chars.source = attn::data::Tokenize::Char;
  EXPECT_FALSE(PairIndex::open(path, chars).reused());
  EXPECT_FALSE(PairIndex::open(path, options(6, cache)).reused());
  std::string before = PairIndex::open(path, options(6, cache)).fingerprint();
  std::ofstream(path, std::ios::app) << "new\tpair\n";
  PairIndex changed = PairIndex::open(path, options(6, cache));
  EXPECT_FALSE(changed.reused());
  EXPECT_EQ(changed.size(), 51);
  EXPECT_NE(changed.fingerprint(), before);
  // Nothing but the index, its description and its lock is left in the cache's folder.
  std::set<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(dir + "/run/data"))
    files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"pairs.idx", "pairs.lock", "pairs.meta"}));
}

// An index damaged on disk (random bytes, bad offsets) is said to be damaged and rebuilt; the
// corpus is not blamed.
TEST(PairIndex, ADamagedIndexIsRebuilt) {
  std::string dir = scratch("damaged"), path = dir + "/pairs.tsv", cache = dir + "/run/data/pairs";
  std::ofstream(path) << corpus(50);
  EXPECT_FALSE(PairIndex::open(path, options(5, cache)).reused());
  {
    std::fstream idx(cache + ".idx", std::ios::in | std::ios::out | std::ios::binary);
    idx.seekp(24 * 10);
    idx.write("\xff\xff\xff\xff\xff\xff\x0f\x00", 8); // entry 10's offset, far past the end
  }
  testing::internal::CaptureStderr();
  PairIndex rebuilt = PairIndex::open(path, options(5, cache));
  std::string said = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(rebuilt.reused());
  EXPECT_NE(said.find("pairs.idx: the corpus index is damaged"), std::string::npos) << said;
  EXPECT_EQ(rebuilt.pairs(rebuilt.entries(10, 1))[0].target, "W0 #10");
  EXPECT_TRUE(PairIndex::open(path, options(5, cache)).reused());
}

// The ranks of a data-parallel run open the same cache at once: one builds the index while the
// others wait for it, then reuse it (each open is its own lock holder, as processes are).
TEST(PairIndex, OpenedAtOnceItIsBuiltOnce) {
  std::string dir = scratch("ranks"), path = dir + "/pairs.tsv", cache = dir + "/run/data/pairs";
  std::ofstream(path) << corpus(20000);
  constexpr int kRanks = 4;
  std::vector<std::optional<PairIndex>> opened(kRanks);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r)
    ranks.emplace_back([&, r] { opened[r].emplace(PairIndex::open(path, options(5, cache))); });
  for (std::thread &t : ranks)
    t.join();
  int built = 0;
  for (const auto &index : opened) {
    ASSERT_TRUE(index);
    built += !index->reused();
    EXPECT_EQ(index->size(), 20000);
    EXPECT_EQ(index->fingerprint(), opened[0]->fingerprint());
  }
  EXPECT_EQ(built, 1);
}

TEST(PairIndex, BadLinesAreLocatedErrors) {
  std::string dir = scratch("errors"), path = dir + "/pairs.tsv";
  std::string cache = dir + "/run/cache";
  auto errorOf = [&](const std::string &text) {
    std::ofstream(path, std::ios::binary) << text;
    try {
      PairIndex::open(path, options(0, cache));
    } catch (const std::exception &e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(errorOf("a\tb\n\na\tb\tc\n"),
            path + ":3: error: expected one tab between source and target, found 2");
  EXPECT_EQ(errorOf("a\tb\nx\xff\ty\n"), path + ":2: error: the line is not UTF-8 text (byte 2 of the line)");
  // A rejected file leaves no index behind, not even a partial one: only the (empty) lock.
  std::set<std::string> left;
  for (const auto &e : std::filesystem::directory_iterator(dir + "/run"))
    left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"cache.lock"}));
  EXPECT_EQ(errorOf("a\tb\n"), "<no error>");
  path = dir + "/run";
  EXPECT_EQ(errorOf(""), path + ": error: is a directory, not a data file");
}

TEST(PairIndex, SubwordSampleLeavesTheValidationPairsOut) {
  std::string dir = scratch("sample"), path = dir + "/pairs.tsv";
  std::ofstream(path) << corpus(10);
  EXPECT_EQ(attn::data::readTsvSample(path, 100, 3).size(), 7u);
  std::vector<attn::data::Pair> first = attn::data::readTsvSample(path, 4, 3);
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[3].target, "W3 #3");
}

// A seq2seq entry's data inputs for batch b, sources of s and targets of t (default s + 1):
// src, src_mask, tgt_in, tgt_out.
struct Entry {
  std::vector<attn_tensor_info> inputs;
  attn_entry_info info{};
  Entry(int64_t b, int64_t s, int64_t tgt = 0) {
    const char *names[] = {"src", "src_mask", "tgt_in", "tgt_out"};
    for (int i = 0; i < 4; ++i) {
      attn_tensor_info t{};
      t.name = names[i];
      t.dtype = i == 1 ? ATTN_F32 : ATTN_I32;
      t.rank = 2;
      t.shape[0] = b;
      t.shape[1] = i < 2 ? s : tgt ? tgt : s + 1;
      inputs.push_back(t);
    }
    info.name = "train_step";
    info.num_inputs = 4;
    info.inputs = inputs.data();
  }
};

// The target of each row, read back from tgt_out through the vocabulary.
std::vector<std::string> targets(const PairData &d, const std::vector<attn::Tensor> &batch) {
  std::vector<std::string> out;
  const attn::Tensor &t = batch[3];
  int64_t rows = t.shape()[0], len = t.shape()[1];
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int32_t> ids(t.data<int32_t>() + r * len, t.data<int32_t>() + (r + 1) * len);
    auto tokens = d.target.decode(ids);
    out.push_back(tokens.size() == 2 ? tokens[0] + " " + tokens[1] : "?");
  }
  return out;
}

// The StreamedPairs tests' corpus: corpus(300) streamed as a seq2seq task, its last 20 pairs
// validating, sources of 7..9 words (3 of every 9) longer than max_len 6.
PairData streamedCorpus(const std::string &name) {
  std::string dir = scratch(name), path = dir + "/pairs.tsv";
  std::ofstream(path) << corpus(300);
  DataConfig c;
  c.task = Task::Seq2Seq;
  c.path = path;
  c.valid = 20;
  c.maxLen = 6;
  c.stream = true;
  return buildPairs(c);
}

TEST(StreamedPairs, EveryKeptPairOncePerEpochTheSameAfterAResumeAndAcrossRanks) {
  PairData d = streamedCorpus("batches");
  StreamedPairs stream(Task::Seq2Seq, d, /*blockPairs=*/32, /*seed=*/7);
  int64_t kept = 0;
  for (int i = 0; i < 280; ++i)
    kept += i % 9 + 1 <= 6;
  EXPECT_EQ(stream.examples(), kept);
  EXPECT_EQ(stream.dropped(), 280 - kept);

  Entry whole(8, 6), half(4, 6);
  int64_t perEpoch = kept / 8;
  std::multiset<std::string> seen;
  std::vector<std::string> firstOrder;
  for (int64_t s = 1; s <= perEpoch; ++s)
    for (const std::string &t : targets(d, stream.batch(s, 8, whole.info, 0, 1))) {
      seen.insert(t);
      firstOrder.push_back(t);
    }
  EXPECT_EQ((int64_t)seen.size(), perEpoch * 8);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size()); // no repeats
  // Shuffled across blocks: the first batch is not the file's first pairs.
  EXPECT_NE(firstOrder[0], "W0 #0");

  // A new reader (a resumed run) gives step 5 and an epoch-2 step as the first did; ranks'
  // rows put together are the batch.
  StreamedPairs resumed(Task::Seq2Seq, d, 32, 7);
  for (int64_t s : {int64_t(5), perEpoch + 3}) {
    std::vector<std::string> one = targets(d, stream.batch(s, 8, whole.info, 0, 1));
    EXPECT_EQ(targets(d, resumed.batch(s, 8, whole.info, 0, 1)), one);
    std::vector<std::string> both = targets(d, resumed.batch(s, 8, half.info, 0, 2));
    std::vector<std::string> second = targets(d, resumed.batch(s, 8, half.info, 1, 2));
    both.insert(both.end(), second.begin(), second.end());
    EXPECT_EQ(both, one);
  }
  // Another epoch, another order.
  EXPECT_NE(targets(d, stream.batch(perEpoch + 1, 8, whole.info, 0, 1)),
            targets(d, stream.batch(1, 8, whole.info, 0, 1)));
  // A program of another shape is refused with both shapes.
  Entry longer(8, 7);
  try {
    stream.batch(1, 8, longer.info, 0, 1);
    ADD_FAILURE() << "a batch of the wrong shape was given";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("'src' is [8, 7], the streamed data gives [8, 6]"),
              std::string::npos)
        << e.what();
  }
}

TEST(StreamedPairs, TokenCountBatchesTakeEachPairOncePerEpochTheSameAfterAResume) {
  PairData d = streamedCorpus("token-batches");
  StreamedPairs stream(Task::Seq2Seq, d, /*blockPairs=*/32, /*seed=*/7);
  LengthCounts counts = stream.lengthCounts();
  int64_t counted = 0;
  for (auto [lengths, n] : counts) {
    EXPECT_EQ(lengths.second, 3) << "two target words and eos";
    counted += n;
  }
  EXPECT_EQ(counted, stream.examples());
  TokenPlan plan = planTokenBatches(counts, 6, 7, /*batchTokens=*/24, /*buckets=*/3, /*ranks=*/2);
  ASSERT_GT(plan.buckets.size(), 1u);
  stream.batchByTokens(plan);
  auto batchOf = [&](StreamedPairs &from, int64_t step, int rank, int ranks) {
    const TokenBucket &b = plan.buckets[from.bucket(step)];
    Entry e(b.rows / ranks, b.sourceLength, b.targetLength);
    return targets(d, from.batch(step, b.rows, e.info, rank, ranks));
  };
  int64_t perEpoch = plan.batchesPerEpoch(), taken = 0;
  std::set<std::string> seen;
  for (int64_t s = 1; s <= perEpoch; ++s)
    for (const std::string &t : batchOf(stream, s, 0, 1)) {
      EXPECT_TRUE(seen.insert(t).second) << t << " twice in an epoch";
      ++taken;
    }
  int64_t full = 0;
  for (const TokenBucket &b : plan.buckets)
    full += b.pairs / b.rows * b.rows;
  EXPECT_EQ(taken, full);

  StreamedPairs resumed(Task::Seq2Seq, d, 32, 7);
  resumed.batchByTokens(plan);
  for (int64_t s : {int64_t(5), perEpoch + 3, int64_t(2)}) {
    std::vector<std::string> one = batchOf(stream, s, 0, 1);
    EXPECT_EQ(resumed.bucket(s), stream.bucket(s));
    EXPECT_EQ(batchOf(resumed, s, 0, 1), one);
    std::vector<std::string> both = batchOf(resumed, s, 0, 2), second = batchOf(resumed, s, 1, 2);
    both.insert(both.end(), second.begin(), second.end());
    EXPECT_EQ(both, one);
  }
}

} // namespace
