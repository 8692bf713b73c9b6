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

def Attn_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op with a gradient rule: its vector-Jacobian product written in attn ops, next to the
    op's definition. `attn-autodiff` (through `buildBackward` in dialect/Autodiff.h) calls
    it for every op on the path from the parameters to the loss.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands from `resultGrads` (one per result, same type,
        zeros where no gradient flows) at the builder's insertion point. Appends one value per
        operand to `operandGrads`, of the operand's type, or a null Value where the operand
        gets no gradient (token ids, labels). Fails with a diagnostic on the op.
      }],
      "::llvm::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
    InterfaceMethod<[{
        Rewrites the forward op before any gradient is built, so that it keeps what its rule
        needs (a scan saves its per-step carried values). Returns the op that replaces it
        (all uses already redirected), or the op itself.
      }],
      "::mlir::Operation *", "prepareForGradient", (ins "::mlir::OpBuilder &":$builder), [{}],
      /*defaultImplementation=*/[{ return $_op.getOperation(); }]>,
  ];
}

def Attn_FlopCountOpInterface : OpInterface<"FlopCountOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op that does matrix-product work (a matmul, the gate products of a recurrent layer,
    the score and weighted-sum products of a fused attention kernel) says how many
    floating-point operations that work takes, 2 per multiply-add, from its static shapes.
    Elementwise work is not counted, as in the usual FLOP counts of models: the count is what
    a GEMM peak bounds. `attn::countFlops` (dialect/FlopCount.h) sums it over an entry point
    after `attn-decompose`, for the benchmarks' FLOP counts and fractions of the GEMM peak.
  }];
  let methods = [
    InterfaceMethod<[{
        The op's matrix-product floating-point operations (2 per multiply-add); an op with
        a region (`attn.scan`) counts its body once per step.
      }],
      "double", "getFlops">,
  ];
}

#endif // ATTN_INTERFACES_TD
