// A language model's cached step from its graph (docs/graph.md, "Sampling"): the network
// runs one position at a time when every value at position t is computed from the inputs at
// t alone, or through causal self-attention from those at positions <= t, whose keys and
// values the step keeps (the caches). This tells whether a network is such.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <utility>

namespace attn::yaml::graph {

/// Why the network in `f` (tokens [B, L] -> `output` [B, L, ...]) cannot run one position at
/// a time: the first op whose values at a position read other positions than through a causal
/// fused_attention over the task's key `mask` (a table of positions, a reduction or a softmax
/// over them, a non-causal attention), or an op attnc cannot follow; nullopt when it can.
std::optional<std::pair<mlir::Location, std::string>>
whyNotPositionWise(mlir::func::FuncOp f, mlir::Value tokens, mlir::Value mask, mlir::Value output);

} // namespace attn::yaml::graph
