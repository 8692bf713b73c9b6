// The graph family's two forms (docs/graph.md): `model.graph`, attn ops wired by name in the
// spec, and `model.mlir`, a module of attn IR written by hand. Both fill the same contract,
// the task's entry points (TaskIo); Graph.cpp reads, checks and imports them, and
// GraphFamily.cpp is the family.
#pragma once

#include "frontends/yaml/Family.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attn::yaml::graph {

/// A size in a shape: a number, or a name the task gives a value (`batch`, `window`, ...).
struct Dim {
  int64_t value = 0;
  std::string symbol; // empty for a number
  Loc loc;
};

struct Param {
  std::string name;
  std::vector<Dim> shape;
  std::string init = "uniform";
  double scale = 0.1;
  bool trainable = true;
  Loc loc;
};

struct Attr {
  std::string name;
  YamlTree value;
};

struct Node {
  std::string name, op;
  std::vector<std::pair<std::string, Loc>> inputs;
  std::vector<Attr> attrs;
  std::optional<std::vector<Dim>> shape; // the result's, for ops that do not infer it
  Loc loc, opLoc;
};

struct Graph {
  std::vector<Param> params;
  std::vector<Node> nodes;
  std::string output;
  Loc outputLoc;
};

/// The names a shape may use for the task of `spec`, each with what it means.
std::vector<std::pair<std::string, std::string>> dimSymbols(const Spec &spec);

/// model.graph as a Graph: every problem of its structure (a missing or unknown key, a
/// name used twice or before it is defined, a shape name the task does not give) reported
/// at the part that causes it. What the ops make of their inputs is checked when they are
/// built (importGraph).
Graph readGraph(const Spec &spec, Problems &problems);

/// The task's entry points around the graph (or the module): @forward(inputs) -> output and
/// @loss(inputs, label) -> the task's loss.
mlir::OwningOpRef<mlir::ModuleOp> importGraph(const Spec &spec, mlir::MLIRContext &context,
                                              const ImportOptions &options);

} // namespace attn::yaml::graph
