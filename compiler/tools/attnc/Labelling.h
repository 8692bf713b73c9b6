// Taggers and classifiers (task: tag / classify): accuracy of their @forward scores.
#pragma once

#include "attn/Program.h"
#include "attn/train/Trainer.h"

namespace attnc {

/// The fraction of labels that @forward's argmax gets right over the full batches of
/// `split` (src, src_mask, labels: [N, S] tags, padding excluded, or [N] labels).
double labelAccuracy(const attn::Program &program, const std::vector<attn::Tensor> &params,
                     const attn::train::Split &split);

} // namespace attnc
