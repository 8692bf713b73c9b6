#include "attn/task/StreamedPairs.h"

#include "attn/Program.h"
#include "attn/Random.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace attn::task {

StreamedPairs::StreamedPairs(Task task, const PairData &data, int64_t blockPairs, uint64_t seed)
    : task_(task), data_(data), seed_(seed) {
  if (!data.stream)
    throw std::logic_error("attn::task: StreamedPairs needs a streamed corpus");
  if (blockPairs < 1)
    throw std::runtime_error("attn: data.stream_buffer must be at least 1, got " +
                             std::to_string(blockPairs));
  for (int64_t first = 0; first < data.streamTrain; first += blockPairs) {
    Block b{first, std::min(blockPairs, data.streamTrain - first), 0};
    for (const data::PairIndex::Entry &e : data.stream->entries(b.first, b.count))
      b.kept += fits(e);
    kept_ += b.kept;
    dropped_ += b.count - b.kept;
    blocks_.push_back(b);
  }
}

bool StreamedPairs::fits(const data::PairIndex::Entry &e) const {
  // What encodePairs and encodeTagged keep, from the token counts the index holds.
  if (e.sourceTokens < 1 || e.sourceTokens > data_.sourceLength)
    return false;
  return task_ != Task::Seq2Seq || e.targetTokens <= data_.targetLength - 1;
}

const std::vector<data::PairIndex::Entry> &StreamedPairs::blockOrder(int64_t epoch, int64_t b) {
  auto it = cache_.find(b);
  if (it != cache_.end())
    return it->second;
  std::vector<data::PairIndex::Entry> kept;
  for (const data::PairIndex::Entry &e : data_.stream->entries(blocks_[b].first, blocks_[b].count))
    if (fits(e))
      kept.push_back(e);
  // Each (epoch, block) its own stream of draws, so that a block's order does not depend on
  // which blocks were read before it.
  uint64_t state = (seed_ + (uint64_t)epoch) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(b + 1);
  Rng rng(splitmix64(state));
  for (int64_t i = (int64_t)kept.size() - 1; i > 0; --i)
    std::swap(kept[i], kept[(int64_t)(rng.next() % (uint64_t)(i + 1))]);
  return cache_.emplace(b, std::move(kept)).first->second;
}

void StreamedPairs::startEpoch(int64_t epoch) {
  if (epoch == epoch_)
    return;
  epoch_ = epoch;
  order_.clear();
  for (int64_t b = 0; b < (int64_t)blocks_.size(); ++b)
    if (blocks_[b].kept > 0)
      order_.push_back(b);
  Rng rng(seed_ + (uint64_t)epoch);
  for (int64_t i = (int64_t)order_.size() - 1; i > 0; --i)
    std::swap(order_[i], order_[(int64_t)(rng.next() % (uint64_t)(i + 1))]);
  start_.assign(1, 0);
  for (int64_t b : order_)
    start_.push_back(start_.back() + blocks_[b].kept);
  cache_.clear();
}

std::pair<int64_t, int64_t> StreamedPairs::lengthsOf(const data::PairIndex::Entry &e) const {
  // As splitLengths counts them: a seq2seq target with its eos; tags follow the source.
  return {e.sourceTokens, task_ == Task::Seq2Seq ? e.targetTokens + 1 : 0};
}

LengthCounts StreamedPairs::lengthCounts() const {
  LengthCounts counts;
  for (const Block &b : blocks_)
    for (const data::PairIndex::Entry &e : data_.stream->entries(b.first, b.count))
      if (fits(e))
        ++counts[lengthsOf(e)];
  return counts;
}

void StreamedPairs::batchByTokens(const TokenPlan &plan) {
  plan_ = &plan;
  walk_ = Walk{};
  found_ = Found{};
}

size_t StreamedPairs::bucket(int64_t step) {
  if (!plan_)
    return 0;
  findTokenBatch(step);
  return (size_t)found_.bucket;
}

void StreamedPairs::findTokenBatch(int64_t step) {
  if (found_.step == step)
    return;
  int64_t perEpoch = plan_->batchesPerEpoch();
  int64_t epoch = (step - 1) / perEpoch, index = (step - 1) % perEpoch;
  if (epoch != walk_.epoch || index < walk_.emitted) {
    startEpoch(epoch);
    walk_ = Walk{epoch, 0, 0, 0, {}};
    walk_.queues.resize(plan_->buckets.size());
  }
  const std::vector<data::PairIndex::Entry> *pairs = nullptr;
  for (;;) {
    if (walk_.block >= (int64_t)order_.size())
      throw std::logic_error("attn::task: epoch " + std::to_string(epoch) +
                             " ran out of pairs before its token-count batch " +
                             std::to_string(index));
    if (!pairs)
      pairs = &blockOrder(epoch, order_[walk_.block]);
    if (walk_.pos == (int64_t)pairs->size()) { // on to the next block
      cache_.erase(order_[walk_.block]);
      ++walk_.block;
      walk_.pos = 0;
      pairs = nullptr;
      continue;
    }
    const data::PairIndex::Entry &e = (*pairs)[walk_.pos++];
    auto [source, target] = lengthsOf(e);
    int32_t k = plan_->bucketOf(source, target);
    std::vector<data::PairIndex::Entry> &queue = walk_.queues[k];
    queue.push_back(e);
    if ((int64_t)queue.size() < plan_->buckets[k].rows)
      continue;
    if (walk_.emitted++ == index) {
      found_ = Found{step, k, std::move(queue)};
      queue.clear();
      return;
    }
    queue.clear();
  }
}

std::vector<Tensor> StreamedPairs::batch(int64_t step, int64_t global, const attn_entry_info &entry,
                                         int rank, int ranks) {
  if (plan_) {
    findTokenBatch(step);
    int64_t rows = plan_->buckets[found_.bucket].rows, each = rows / ranks;
    if (global != rows)
      throw std::logic_error("attn::task: step " + std::to_string(step) + " is a batch of " +
                             std::to_string(rows) + " pairs; its program takes " +
                             std::to_string(global));
    std::vector<data::PairIndex::Entry> mine(found_.entries.begin() + rank * each,
                                             found_.entries.begin() + (rank + 1) * each);
    train::Split split = pairSplit(task_, data_, data_.stream->pairs(mine));
    std::vector<int64_t> all(each);
    std::iota(all.begin(), all.end(), 0);
    return train::gatherRows(split, all, entry);
  }
  int64_t perEpoch = kept_ / global;
  if (perEpoch < 1)
    throw std::runtime_error("attn: " + std::to_string(kept_) +
                             " training pairs do not fill one batch of " + std::to_string(global));
  int64_t epoch = (step - 1) / perEpoch, index = (step - 1) % perEpoch;
  startEpoch(epoch);
  int64_t rows = global / ranks, first = index * global + rank * rows;
  std::vector<data::PairIndex::Entry> entries;
  int64_t lastBlock = -1;
  for (int64_t p = first; p < first + rows; ++p) {
    size_t j = (size_t)(std::upper_bound(start_.begin(), start_.end(), p) - start_.begin()) - 1;
    lastBlock = order_[j];
    entries.push_back(blockOrder(epoch, lastBlock)[(size_t)(p - start_[j])]);
  }
  // The next batch starts in the block this one ended in; the others are done with.
  for (auto it = cache_.begin(); it != cache_.end();)
    it = it->first == lastBlock ? std::next(it) : cache_.erase(it);

  train::Split split = pairSplit(task_, data_, data_.stream->pairs(entries));
  for (size_t i = 0; i < split.size(); ++i)
    if (split[i].shape() != infoShape(entry.inputs[i]))
      throw std::runtime_error(std::string("attn: batch input '") + entry.inputs[i].name +
                               "' is " + shapeToString(infoShape(entry.inputs[i])) +
                               ", the streamed data gives " + shapeToString(split[i].shape()));
  return split;
}

} // namespace attn::task
