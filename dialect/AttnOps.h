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

namespace mlir::attn::OpTrait {
/// ODS Attn_RuntimeKernel: the op becomes a runtime kernel call in attn-to-onednn.
template <typename ConcreteType>
class RuntimeKernel : public ::mlir::OpTrait::TraitBase<ConcreteType, RuntimeKernel> {};
} // namespace mlir::attn::OpTrait

#define GET_OP_CLASSES
#include "dialect/AttnOps.h.inc"

namespace mlir::attn {
/// The multi-head layout, shared by attn.multi_head_attention's decomposition and by importers
/// that build attention a step at a time (cached decoding): x [B, T, H D] -> [B, H, T, D]
/// (head h holds columns [h D, (h + 1) D)), and back.
Value splitHeads(OpBuilder &b, Location l, Value x, int64_t heads);
Value mergeHeads(OpBuilder &b, Location l, Value x);
} // namespace mlir::attn
