// A graph's cached decoding step (docs/graph.md: a language model's @step, an encoder-decoder's
// @decode_step): the network runs one position at a time when every value at position t is
// computed from the inputs at t alone, from values the same at every position (parameters,
// the encoder's), through a table of positions read at t, or through causal self-attention
// from the positions <= t, whose keys and values the step keeps (the caches). This tells
// whether a network is such.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace attn::yaml::graph {

/// How a network runs at one position: the parameters it reads as tables of positions
/// ([L, ...], added to values [B, L, ...]: a step reads their row at its position), and, for
/// each fused_attention op in order, whether it is a causal self-attention (its keys and
/// values kept in caches) rather than one over values that do not depend on the positions
/// (an encoder's: cross attention, or the encoder's own).
struct StepPlan {
  std::set<std::string> tables;
  std::vector<bool> cached;
};

/// Why the network in `f` (tokens [B, L] -> `output` [B, L, ...]) cannot run one position at
/// a time: the first op whose values at a position read other positions than through a causal
/// fused_attention over the task's key `mask` or a table of positions (a reduction or a
/// softmax over them, a non-causal self-attention, a parameter read otherwise), or an op
/// attnc cannot follow; nullopt when it can, with `plan` filled.
std::optional<std::pair<mlir::Location, std::string>>
whyNotPositionWise(mlir::func::FuncOp f, mlir::Value tokens, mlir::Value mask, mlir::Value output,
                   StepPlan &plan);

} // namespace attn::yaml::graph
