//===- AttnInterfaces.td - interfaces that attn passes talk to ---------------------------===//
//
// Passes ask ops through these interfaces instead of matching op classes, so a new op family
// brings its own rules with it (next to its definition) and no pass needs to change.
//
//===----------------------------------------------------------------------------------===//
#ifndef ATTN_INTERFACES_TD
#define ATTN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Attn_DecomposableOpInterface : OpInterface<"DecomposableOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    A composite op that can be expressed in core attn ops. `attn-decompose` replaces it by
    what `decompose` builds; fusion passes run before and may keep it whole.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the op's meaning from core ops at the builder's insertion point (just before
        the op) and returns one replacement value per result.
      }],
      "::llvm::SmallVector<::mlir::Value>", "decompose", (ins "::mlir::OpBuilder &":$builder)>,
  ];
}

#endif // ATTN_INTERFACES_TD
