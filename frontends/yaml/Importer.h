// Spec -> attn IR. The importer is the only place that knows how a YAML model maps to ops;
// everything after it sees plain attn functions.
#pragma once

#include "frontends/yaml/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace attn::yaml {

/// Builds the spec's model as attn functions reading named `attn.param` ops:
///   @forward(x) -> y            inference;
///   @loss(x, target) -> loss    the training objective (mean squared error), which
///                               attn-autodiff differentiates.
/// Inputs and results carry `attn.name` attributes that become the tensor names of the
/// compiled program's manifest. Needs the attn and func dialects loaded in `context`.
mlir::OwningOpRef<mlir::ModuleOp> importSpec(const Spec &spec, mlir::MLIRContext &context);

/// The model's name as a C identifier: "rnn-sine" -> "rnn_sine".
std::string cName(const std::string &name);

} // namespace attn::yaml
