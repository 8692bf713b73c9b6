//===- AttnBase.td - the attn dialect and its op base class ------------------------------===//
//
// Shared by every op family in ops/. Tensors in attn are ranked with static shapes: a model's
// batch size and lengths are fixed when it is compiled, which lets every later stage (oneDNN
// primitive caching, vectorized loops, the C ABI) work with known sizes.
//
//===----------------------------------------------------------------------------------===//
#ifndef ATTN_BASE_TD
#define ATTN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "dialect/AttnInterfaces.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  // Inherent attributes live in the attribute dictionary: shape rules then read the same
  // attributes whether an op is being parsed, built or verified.
  let usePropertiesForAttributes = 0;
  // The enum attributes of AttnEnums.td print as `#attn.init<normal>`.
  let useDefaultAttributePrinterParser = 1;
  let summary = "Tensor-level ops of sequence models: cells, attention, losses.";
  let description = [{
    The `attn` dialect is what the YAML frontend emits and what autodiff, fusion and the
    lowerings to oneDNN calls and linalg consume (there is no CUDA lowering yet). Values are ranked `f32` tensors with static
    shapes (token ids are `i32` tensors). Model parameters are named `attn.param` ops; entry
    points are `func.func`s.

    Broadcasting (elementwise binary ops) follows NumPy: shapes are aligned at their trailing
    dimensions, and each aligned pair must be equal or one of them 1; the result takes the
    larger. A missing leading dimension counts as 1.
  }];
}

include "dialect/AttnEnums.td"

class Attn_Op<string mnemonic, list<Trait> traits = []> : Op<Attn_Dialect, mnemonic, traits>;

// Lowered to a call of a runtime kernel (runtime/cpu) by attn-to-onednn, which runs after
// attn-to-linalg: attn-to-linalg leaves these ops alone, and attn-to-onednn must lower every
// one. The one list of which ops are kernel calls.
def Attn_RuntimeKernel : NativeOpTrait<"RuntimeKernel"> {
  let cppNamespace = "::mlir::attn::OpTrait";
}

def Attn_FloatTensor : RankedTensorOf<[F32]>;
// A factor of a product: f32, or bf16 once attn-round-bf16-factors has rounded it for a bf16
// product (the op's verifier ties bf16 factors to `precision = bf16`).
def Attn_FactorTensor : RankedTensorOf<[F32, BF16]>;
def Attn_IdTensor : RankedTensorOf<[I32]>;

// Ops whose result type follows from the operands through a shared C++ rule in
// dialect/ops/ShapeRules.h (`rule` names the function).
class Attn_InferredOp<string mnemonic, string rule, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat(traits, [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, ::mlir::ValueRange operands,
        ::mlir::DictionaryAttr attributes, ::mlir::OpaqueProperties properties,
        ::mlir::RegionRange regions, ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      return ::mlir::attn::}] # rule # [{(getOperationName(), location, operands,
                                         inferredReturnTypes);
    }
  }];
}

#endif // ATTN_BASE_TD
