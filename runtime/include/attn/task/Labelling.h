// Taggers and classifiers (task: tag / classify): predictions and accuracy of their @forward
// scores (src i32 [B, S], src_mask f32 [B, S]) -> scores f32 [B, S, V] (tag) | [B, V] (classify).
#ifndef ATTN_TASK_LABELLING_H
#define ATTN_TASK_LABELLING_H

#include "attn/Program.h"
#include "attn/task/Data.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/train/Trainer.h"

#include <functional>

namespace attn::task {

/// Calls @forward on the batches of the first `count` examples of `split` (src, src_mask,
/// labels; the last batch zero-padded) and `visit(example, scores, rowInBatch)` per example.
using PredictionVisitor = std::function<void(int64_t example, const Tensor &scores, int64_t row)>;
void forEachPrediction(const Program &program, const std::vector<Tensor> &params,
                       const train::Split &split, int64_t count, const PredictionVisitor &visit);

/// argmax over the last axis of scores [..., V] at `position` (a flat index over [...]).
int32_t argmaxAt(const Tensor &scores, int64_t position);

/// The fraction of labels that @forward's argmax gets right over `split` ([N, S] tags,
/// padding excluded, or [N] labels).
double labelAccuracy(const Program &program, const std::vector<Tensor> &params,
                     const train::Split &split);

/// Labels source lines with a tagger's or classifier's @forward, in batches of its compiled
/// rows: a tagger gives one tag per token, a classifier one label per line (as
/// `attnc translate` prints them). `program`, `params` and `data` must outlive it.
class Labeller {
public:
  Labeller(const Program &program, const std::vector<Tensor> &params, const PairData &data);
  /// Throws when the line has no tokens or more than the model reads.
  Encoded encode(const std::string &line) const;
  /// Per source: its tags, space-separated, or its label.
  std::vector<std::string> label(const std::vector<Encoded> &sources) const;
  int64_t batchRows() const { return rows; }

private:
  const Program &program;
  const std::vector<Tensor> &params;
  const PairData &data;
  int64_t rows = 0, sourceLength = 0;
  bool tagged = false;
};

} // namespace attn::task

#endif
