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

def Attn_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op whose products can compute in a lower precision than f32 (`attn.matmul`,
    `attn.dense`, the flash form of `attn.fused_attention` and its `_grad`, the recurrent
    sequence ops and their `_grad` in bf16; for int8, `attn.dense` with a parameter's
    weight). Its operands and result are f32 tensors while the program is rewritten: the
    policy inserts no casts between ops and changes no op's type. The op holds its precision
    in an optional `precision` attribute (absent: f32); `attn-precision` sets it from a policy,
    and the op's gradient rule gives the products of its backward the same precision (int8 is
    for inference: its products have no gradient rule). The kernel sums in f32 (int32 for
    int8) and rounds (or quantises) f32 factors as it reads them, except where
    `attn-round-bf16-factors`, after autodiff and the decompositions, has given a bf16
    product (`attn.matmul`, `attn.dense`) bf16 factors, each value rounded once for every
    product that reads it. The verifier refuses a precision the op has no kernel for, and a
    bf16 operand on an op that does not compute in bf16.
  }];
  let methods = [
    InterfaceMethod<[{ Whether the op has a kernel computing in `precision`. }],
      "bool", "supportsPrecision", (ins "::mlir::attn::Precision":$precision)>,
    InterfaceMethod<[{
        Whether computing in `precision` is expected to be faster than f32 at the op's shapes:
        where not, a policy leaves the op in f32 (a kernel whose products are too small for
        the rounding and the per-product overhead to pay).
      }],
      "bool", "gainsFrom", (ins "::mlir::attn::Precision":$precision), [{}],
      /*defaultImplementation=*/[{ return true; }]>,
    InterfaceMethod<[{
        Why the op stays f32 where `gainsFrom(precision)` is false: `--remarks` prints it.
      }],
      "std::string", "whyNotGains", (ins "::mlir::attn::Precision":$precision), [{}],
      /*defaultImplementation=*/[{
        return (::mlir::attn::stringifyPrecision(precision) + " is slower at its sizes").str();
      }]>,
    InterfaceMethod<[{ The precision the op's products compute in (f32 when unset). }],
      "::mlir::attn::Precision", "getComputePrecision", (ins), [{}],
      /*defaultImplementation=*/[{
        auto attr = $_op->template getAttrOfType<::mlir::attn::PrecisionAttr>("precision");
        return attr ? attr.getValue() : ::mlir::attn::Precision::f32;
      }]>,
    InterfaceMethod<[{
        The operands the op's bf16 kernel takes as bf16 tensors (`attn-round-bf16-factors`
        rounds them, once per value, for every product that reads it). None by default: the
        kernel rounds its f32 operands itself as it reads them (the flash and recurrent
        kernels, which round per tile or per layer).
      }],
      "::llvm::SmallVector<::mlir::OpOperand *>", "getBf16Factors", (ins), [{}],
      /*defaultImplementation=*/[{ return {}; }]>,
    InterfaceMethod<[{ Sets the precision (f32 removes the attribute: the default). }],
      "void", "setComputePrecision", (ins "::mlir::attn::Precision":$precision), [{}],
      /*defaultImplementation=*/[{
        if (precision == ::mlir::attn::Precision::f32)
          $_op->removeAttr("precision");
        else
          $_op->setAttr("precision",
                        ::mlir::attn::PrecisionAttr::get($_op->getContext(), precision));
      }]>,
  ];
  let verify = [{
    auto product = ::llvm::cast<::mlir::attn::PrecisionOpInterface>($_op);
    ::mlir::attn::Precision p = product.getComputePrecision();
    if (!product.supportsPrecision(p))
      return $_op->emitOpError("has no kernel computing in ")
             << ::mlir::attn::stringifyPrecision(p);
    for (::mlir::Value operand : $_op->getOperands()) {
      auto type = ::llvm::dyn_cast<::mlir::ShapedType>(operand.getType());
      if (type && type.getElementType().isBF16() && p != ::mlir::attn::Precision::bf16)
        return $_op->emitOpError("takes the bf16 operand ")
               << type << " but computes in " << ::mlir::attn::stringifyPrecision(p)
               << " (bf16 factors need precision = bf16)";
    }
    return ::mlir::success();
  }];
}

#endif // ATTN_INTERFACES_TD
