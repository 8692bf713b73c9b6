// Every op of the attn dialect (ODS: AttnOps.td, families in ops/).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnInterfaces.h"
#include "dialect/ops/ShapeRules.h"

#define GET_OP_CLASSES
#include "dialect/AttnOps.h.inc"
