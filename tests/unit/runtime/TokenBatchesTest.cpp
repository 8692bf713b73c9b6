// Token-count batches (train.batch_tokens): the plan against brute force (every pair fits its
// shape, the padding it reports, the fewest positions over every choice of boundaries), and
// the batches (each shape's rows, every pair at most once an epoch, the same batch for the
// same step in a new source, ranks' rows making the batch).
#include "attn/task/TokenBatches.h"
#include "attn/task/Data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>

namespace {

using namespace attn;
using namespace attn::task;

// A seq2seq split (src, src_mask, tgt_in, tgt_out) of pairs with these source and target
// lengths (the target's eos included), padded to S and T; token ids name their pair.
train::Split seq2seqSplit(const std::vector<std::pair<int, int>> &lengths, int64_t S, int64_t T) {
  int64_t n = (int64_t)lengths.size();
  Tensor src(ATTN_I32, {n, S}), mask(ATTN_F32, {n, S}), in(ATTN_I32, {n, T}), out(ATTN_I32, {n, T});
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < lengths[i].first; ++k) {
      src.data<int32_t>()[i * S + k] = (int32_t)(4 + i);
      mask.data<float>()[i * S + k] = 1.0f;
    }
    for (int k = 0; k < lengths[i].second; ++k) {
      in.data<int32_t>()[i * T + k] = k == 0 ? 1 : (int32_t)(4 + i);
      out.data<int32_t>()[i * T + k] = k + 1 == lengths[i].second ? 2 : (int32_t)(4 + i);
    }
  }
  return {src, mask, in, out};
}

// Lengths 1..40 for sources, targets about 1.2 times as long, most pairs short (as text is).
std::vector<std::pair<int, int>> textLikeLengths(int n) {
  std::vector<std::pair<int, int>> lengths;
  uint64_t x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(x >> 11) / 9007199254740992.0;
    int s = 1 + (int)(39 * u * u);
    int t = std::min(41, 1 + s + (int)((x >> 7) % (uint64_t)(s / 4 + 2)));
    lengths.push_back({s, t});
  }
  return lengths;
}

// The positions (source + target) of grouping pairs by their longer side at these starts.
double positionsOf(const std::vector<std::pair<int, int>> &lengths,
                   const std::vector<int> &upper) { // each group's longest length, ascending
  std::vector<std::pair<int64_t, std::pair<int, int>>> groups(upper.size(), {0, {0, 0}});
  for (auto [s, t] : lengths) {
    size_t g = std::lower_bound(upper.begin(), upper.end(), std::max(s, t)) - upper.begin();
    ++groups[g].first;
    groups[g].second.first = std::max(groups[g].second.first, s);
    groups[g].second.second = std::max(groups[g].second.second, t);
  }
  double p = 0;
  for (auto &[n, st] : groups)
    p += (double)n * (st.first + st.second);
  return p;
}

// train_step's data inputs for `rows` pairs of bucket `b` (`in` holds them).
attn_entry_info entryOf(const TokenBucket &b, int64_t rows, attn_tensor_info (&in)[4]) {
  in[0] = {"src", ATTN_I32, 2, {rows, b.sourceLength}, nullptr, 0};
  in[1] = {"src_mask", ATTN_F32, 2, {rows, b.sourceLength}, nullptr, 0};
  in[2] = {"tgt_in", ATTN_I32, 2, {rows, b.targetLength}, nullptr, 0};
  in[3] = {"tgt_out", ATTN_I32, 2, {rows, b.targetLength}, nullptr, 0};
  attn_entry_info entry{};
  entry.name = "train_step";
  entry.num_inputs = 4;
  entry.inputs = in;
  return entry;
}

TEST(TokenBatches, EveryPairFitsItsShapeAndTheBatchesHoldTheTokens) {
  auto lengths = textLikeLengths(3000);
  train::Split split = seq2seqSplit(lengths, 40, 41);
  TokenPlan plan = planTokenBatches(Task::Seq2Seq, split, 1000, 4, 2);
  ASSERT_EQ(plan.buckets.size(), 4u);
  int64_t pairs = 0;
  for (const TokenBucket &b : plan.buckets) {
    EXPECT_LE(b.rows * std::max(b.sourceLength, b.targetLength), 1000);
    EXPECT_GT((b.rows + 2) * std::max(b.sourceLength, b.targetLength), 1000) << "rows wasted";
    EXPECT_EQ(b.rows % 2, 0) << "rows divide over the ranks";
    EXPECT_GE(b.pairs, b.rows);
    pairs += b.pairs;
  }
  EXPECT_EQ(pairs, 3000);
  double real = 0, positions = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const TokenBucket &b = plan.buckets[plan.bucketOf(lengths[i].first, lengths[i].second)];
    EXPECT_LE(lengths[i].first, b.sourceLength);
    EXPECT_LE(lengths[i].second, b.targetLength);
    real += lengths[i].first + lengths[i].second;
    positions += b.sourceLength + b.targetLength;
  }
  EXPECT_NEAR(plan.padding, 1.0 - real / positions, 1e-12);
  EXPECT_NEAR(plan.fullLengthPadding, 1.0 - real / (3000.0 * 81), 1e-12);
  EXPECT_LT(plan.padding, 0.5 * plan.fullLengthPadding);
}

TEST(TokenBatches, NoGroupingByLengthWastesFewerPositions) {
  // Brute force over every choice of 3 groups of the pairs ordered by their longer side.
  auto lengths = textLikeLengths(400);
  TokenPlan plan = planTokenBatches(Task::Seq2Seq, seq2seqSplit(lengths, 40, 41), 41, 3, 1);
  ASSERT_EQ(plan.buckets.size(), 3u) << "no bucket joined another";
  std::set<int> distinct;
  for (auto [s, t] : lengths)
    distinct.insert(std::max(s, t));
  std::vector<int> d(distinct.begin(), distinct.end());
  double best = std::numeric_limits<double>::infinity();
  for (size_t a = 0; a < d.size(); ++a)
    for (size_t b = a + 1; b + 1 < d.size(); ++b)
      best = std::min(best, positionsOf(lengths, {d[a], d[b], d.back()}));
  double planned = 0;
  for (const TokenBucket &b : plan.buckets)
    planned += (double)b.pairs * (b.sourceLength + b.targetLength);
  EXPECT_LE(planned, best);
}

TEST(TokenBatches, ShortSourcesAndShortTargetsGetShapesOfTheirOwn) {
  // Grouped by their longer side, both kinds would share one 20 x 21 shape: half padding.
  std::vector<std::pair<int, int>> lengths;
  for (int i = 0; i < 300; ++i)
    lengths.push_back(i % 2 ? std::pair{2, 21} : std::pair{20, 3});
  TokenPlan plan = planTokenBatches(Task::Seq2Seq, seq2seqSplit(lengths, 40, 41), 420, 2, 1);
  ASSERT_EQ(plan.buckets.size(), 2u);
  EXPECT_EQ(plan.padding, 0.0);
  EXPECT_EQ(plan.buckets[0].sourceLength + plan.buckets[0].targetLength, 23);
  EXPECT_EQ(plan.buckets[1].sourceLength + plan.buckets[1].targetLength, 23);
}

TEST(TokenBatches, ABucketTooSmallForOneBatchJoinsTheNextOne) {
  // 3 long pairs among 200 short ones: alone they would never fill a batch.
  std::vector<std::pair<int, int>> lengths(200, {3, 4});
  for (int i = 0; i < 3; ++i)
    lengths.push_back({30, 31});
  TokenPlan plan = planTokenBatches(Task::Seq2Seq, seq2seqSplit(lengths, 40, 41), 124, 4, 1);
  ASSERT_EQ(plan.buckets.size(), 1u);
  EXPECT_EQ(plan.buckets[0].rows, 4);
  EXPECT_EQ(plan.buckets[0].pairs, 203);
}

TEST(TokenBatches, EachEpochTakesEveryPairAtMostOnceInItsShape) {
  auto lengths = textLikeLengths(1000);
  train::Split split = seq2seqSplit(lengths, 40, 41);
  TokenPlan plan = planTokenBatches(Task::Seq2Seq, split, 600, 3, 1);
  auto source = tokenBatches(Task::Seq2Seq, split, plan, 7);
  int64_t perEpoch = 0;
  for (const TokenBucket &b : plan.buckets)
    perEpoch += b.pairs / b.rows;
  std::set<int32_t> seen;
  std::set<size_t> shapes;
  for (int64_t step = 1; step <= perEpoch; ++step) {
    size_t k = source->bucket(step);
    const TokenBucket &b = plan.buckets[k];
    shapes.insert(k);
    attn_tensor_info inputs[4];
    std::vector<Tensor> batch = source->batch(step, b.rows, entryOf(b, b.rows, inputs), 0, 1);
    for (int64_t r = 0; r < b.rows; ++r) {
      int32_t pair = batch[0].data<int32_t>()[r * b.sourceLength] - 4;
      EXPECT_TRUE(seen.insert(pair).second) << "pair " << pair << " twice in one epoch";
      EXPECT_EQ(plan.bucketOf(lengths[pair].first, lengths[pair].second), (int32_t)k);
      EXPECT_EQ(batch[3].data<int32_t>()[r * b.targetLength + lengths[pair].second - 1], 2)
          << "the target's eos is kept";
    }
  }
  EXPECT_EQ(shapes.size(), plan.buckets.size());
  int64_t left = 0;
  for (const TokenBucket &b : plan.buckets)
    left += b.pairs % b.rows;
  EXPECT_EQ((int64_t)seen.size(), 1000 - left);
}

TEST(TokenBatches, AStepIsTheSameBatchInANewSourceAndRanksMakeIt) {
  auto lengths = textLikeLengths(800);
  train::Split split = seq2seqSplit(lengths, 40, 41);
  TokenPlan plan = planTokenBatches(Task::Seq2Seq, split, 400, 3, 2);
  auto first = tokenBatches(Task::Seq2Seq, split, plan, 3),
       resumed = tokenBatches(Task::Seq2Seq, split, plan, 3);
  for (int64_t step : {1, 2, 57, 400, 401}) {
    size_t k = first->bucket(step);
    ASSERT_EQ(resumed->bucket(step), k);
    const TokenBucket &b = plan.buckets[k];
    attn_tensor_info whole[4], half[4];
    std::vector<Tensor> all = first->batch(step, b.rows, entryOf(b, b.rows, whole), 0, 1);
    std::vector<Tensor> again = resumed->batch(step, b.rows, entryOf(b, b.rows, whole), 0, 1);
    std::vector<Tensor> r0 = resumed->batch(step, b.rows, entryOf(b, b.rows / 2, half), 0, 2);
    std::vector<Tensor> r1 = resumed->batch(step, b.rows, entryOf(b, b.rows / 2, half), 1, 2);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(0, std::memcmp(all[i].raw(), again[i].raw(), all[i].nbytes()));
      ASSERT_EQ(0, std::memcmp(all[i].raw(), r0[i].raw(), r0[i].nbytes()));
      ASSERT_EQ(0, std::memcmp(static_cast<char *>(all[i].raw()) + r0[i].nbytes(), r1[i].raw(),
                               r1[i].nbytes()));
    }
  }
}

TEST(TokenBatches, TooFewTokensForTheLongestPairIsAnError) {
  auto lengths = textLikeLengths(500);
  train::Split split = seq2seqSplit(lengths, 40, 41);
  try {
    planTokenBatches(Task::Seq2Seq, split, 60, 4, 2);
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("train.batch_tokens = 60 does not hold 2 pairs (one "
                                         "per rank) of 41 tokens"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
