// The training batches of a streamed corpus (data.stream; attn/data/PairIndex.h).
//
// The training pairs are cut into blocks of data.stream_buffer consecutive pairs of the file.
// Epoch e visits the blocks in an order drawn from Rng(seed + e) and each block's pairs in an
// order drawn from its own generator; global batches are consecutive runs of that order (the
// last partial batch of an epoch is dropped). So a batch depends only on (seed, step), as an
// in-memory split's does: a resumed run reads what an uninterrupted one would have, and rank
// r of R reads only its rows [r b, (r + 1) b) of each batch, from the file. Memory holds the
// per-block counts and the (at most two) blocks in use, not the corpus.
#ifndef ATTN_TASK_STREAMEDPAIRS_H
#define ATTN_TASK_STREAMEDPAIRS_H

#include "attn/task/Data.h"
#include "attn/task/TokenBatches.h"
#include "attn/train/Trainer.h"

#include <cstdint>
#include <map>
#include <vector>

namespace attn::task {

class StreamedPairs : public train::BatchSource {
public:
  // `data` (which must outlive this) holds the stream; pairs too long for its lengths (or with
  // no source token) are left out and counted in dropped(). Reads the index once.
  StreamedPairs(Task task, const PairData &data, int64_t blockPairs, uint64_t seed);

  int64_t examples() const override { return kept_; }
  int64_t dropped() const { return dropped_; }
  std::vector<Tensor> batch(int64_t step, int64_t global, const attn_entry_info &entry, int rank,
                            int ranks) override;

  // Token-count batches (attn/task/TokenBatches.h). The kept pairs' lengths, read from the
  // index, to plan them:
  LengthCounts lengthCounts() const;
  // From now on, batches of `plan` (which must outlive this): each epoch walks its blocks in
  // their order and each block's pairs in theirs, dealing every pair into its bucket's queue;
  // a queue that fills is the next batch (a queue's pairs can come from several blocks), and
  // what is left in the queues at the epoch's end waits for no one. Still a function of
  // (seed, step): a resumed run walks its epoch again up to its step, reading the index only.
  void batchByTokens(const TokenPlan &plan);
  size_t bucket(int64_t step) override;

private:
  struct Block {
    int64_t first = 0, count = 0; // index entries [first, first + count)
    int64_t kept = 0;             // of them, the pairs that fit
  };
  // Block `b`'s kept entries in epoch `epoch`'s order.
  const std::vector<data::PairIndex::Entry> &blockOrder(int64_t epoch, int64_t b);
  bool fits(const data::PairIndex::Entry &e) const;

  Task task_;
  const PairData &data_;
  uint64_t seed_;
  std::vector<Block> blocks_;
  int64_t kept_ = 0, dropped_ = 0;
  // The current epoch's block order and where each block's pairs start in it.
  int64_t epoch_ = -1;
  std::vector<int64_t> order_, start_;
  // The blocks read last (a batch spans at most two of them when blocks hold a batch).
  std::map<int64_t, std::vector<data::PairIndex::Entry>> cache_;

  // Draws epoch `epoch`'s block order (order_, start_) unless it is the current one.
  void startEpoch(int64_t epoch);
  std::pair<int64_t, int64_t> lengthsOf(const data::PairIndex::Entry &e) const;
  // Token-count batches: walks to the batch of `step` (found_).
  void findTokenBatch(int64_t step);
  const TokenPlan *plan_ = nullptr;
  struct Walk {
    int64_t epoch = -1, block = 0, pos = 0, emitted = 0;     // block: index into order_
    std::vector<std::vector<data::PairIndex::Entry>> queues; // one per bucket
  } walk_;
  struct Found {
    int64_t step = 0;
    int32_t bucket = 0;
    std::vector<data::PairIndex::Entry> entries;
  } found_;
};

} // namespace attn::task

#endif // ATTN_TASK_STREAMEDPAIRS_H
