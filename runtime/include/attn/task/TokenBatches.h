// Token-count batches (train.batch_tokens), as fairseq's --max-tokens and Marian's
// --mini-batch-words make them, for programs of static shapes.
//
// The training pairs are grouped into a few buckets, each a batch shape (rows R, source
// length S, target length T) that the training step is compiled for: S and T are the longest
// source and target (eos included) of the bucket's pairs, and R = batch_tokens / max(S, T)
// (fairseq's count: rows times the longer side), so a batch of short pairs holds many of them
// and none is padded to data.max_len. The shapes are chosen to waste the fewest padded
// positions over the training pairs: the better of the exact best grouping of the pairs
// ordered by their longer side (a dynamic programme) and a greedy choice over both lengths
// (translations have sources and targets of different lengths); each pair goes to the shape
// that pads it least, and a shape too rare to fill one batch joins another.
//
// Epoch e draws a permutation of the pairs from Rng(seed + e), deals it into the buckets,
// cuts each bucket's list into batches of its R (a partial last batch of a bucket is dropped
// for that epoch) and shuffles the batches with the same generator. A batch depends only on
// (seed, step), so a resumed run replays the uninterrupted one's batches, as a split's do.
#ifndef ATTN_TASK_TOKENBATCHES_H
#define ATTN_TASK_TOKENBATCHES_H

#include "attn/task/Data.h"
#include "attn/train/Trainer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::task {

/// One batch shape: `rows` pairs (the global batch, a multiple of the ranks) of sources of
/// `sourceLength` tokens and targets of `targetLength` (0 for tag and classify, whose labels
/// follow the source).
struct TokenBucket {
  int64_t rows = 0, sourceLength = 0, targetLength = 0;
  int64_t pairs = 0; // the training pairs it takes
};

/// How many training pairs have each (source tokens, target tokens with eos) length.
using LengthCounts = std::map<std::pair<int64_t, int64_t>, int64_t>;

struct TokenPlan {
  std::vector<TokenBucket> buckets; // shortest first
  // Of the source and target positions the buckets' batches hold, the share that is padding;
  // and the same for batches at the full lengths (data.max_len).
  double padding = 0, fullLengthPadding = 0;
  // The bucket of each length of the planned pairs.
  std::map<std::pair<int64_t, int64_t>, int32_t> bucketOfLengths;

  /// The bucket that trains a pair of these lengths (throws for lengths not planned for).
  int32_t bucketOf(int64_t source, int64_t target) const;
  /// Full batches per epoch: sum over buckets of pairs / rows.
  int64_t batchesPerEpoch() const;
  /// "3 shapes (rows x source x target): 240x8x9, ...": what a report prints.
  std::string describe() const;
};

/// The buckets of pairs of these lengths, padded to sourceWidth and targetWidth without
/// buckets, for batches of at most `batchTokens` tokens, in at most `buckets` shapes, each
/// of whose rows divide over `ranks`. Throws when the tokens do not hold one pair of the
/// longest length per rank, or the pairs fill no batch.
TokenPlan planTokenBatches(const LengthCounts &lengths, int64_t sourceWidth, int64_t targetWidth,
                           int64_t batchTokens, int64_t buckets, int ranks);
/// The same for the pairs of `split` (pairSplit's tensors of `task`).
TokenPlan planTokenBatches(Task task, const train::Split &split, int64_t batchTokens,
                           int64_t buckets, int ranks);
/// The (source, target) lengths of each pair of a pairSplit (targets 0 for tag, classify).
std::vector<std::pair<int64_t, int64_t>> splitLengths(Task task, const train::Split &split);

/// The batches of `plan` over `split` (both must outlive the source); `plan`'s bucket k is
/// trained by the k-th program of train::TrainOptions::buckets.
std::unique_ptr<train::BatchSource> tokenBatches(Task task, const train::Split &split,
                                                 const TokenPlan &plan, uint64_t seed);

} // namespace attn::task

#endif
