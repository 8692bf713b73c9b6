// Which attn.fused_attention (and _grad) ops FlashAttention-2's kernels compute, on the CPU
// (attn-to-onednn: runtime/cpu/flash_attention.cpp) and on the GPU (attn-to-cuda:
// runtime/cuda): a score c * sum(q * k) and nothing else.
#pragma once

#include "dialect/ops/ScoreRegion.h"

#include <optional>

namespace mlir::attn {

/// The scale c of a fused attention the flash kernels compute: a score c * sum(q * k) and
/// nothing else (no centre, window, Gaussian, captures or mask region), so that the operands
/// are exactly (q, k, v, mask[, out, lse, d_out, d_lse]). The caller checks for weights.
template <typename Op> std::optional<float> flashScale(Op op) {
  if (op.getCenter() || op.getWindow() || op.getGaussian() || !op.getCaptures().empty() ||
      !op.getMask().empty())
    return std::nullopt;
  return score_region::dotProductScale(op.getScore().front());
}

} // namespace mlir::attn
