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

std::vector<Tensor> StreamedPairs::batch(int64_t step, int64_t global, const attn_entry_info &entry,
                                         int rank, int ranks) {
  int64_t perEpoch = kept_ / global;
  if (perEpoch < 1)
    throw std::runtime_error("attn: " + std::to_string(kept_) +
                             " training pairs do not fill one batch of " + std::to_string(global));
  int64_t epoch = (step - 1) / perEpoch, index = (step - 1) % perEpoch;
  if (epoch != epoch_) {
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
