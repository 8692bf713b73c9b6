// attn-nvvm-math: the libdevice functions the NVVM lowering calls that are one PTX
// instruction get that instruction as their body (see Passes.td).
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNVVMMATH
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

// __nv_<name>: f32 in, f32 out, as the LLVM intrinsic NVPTX selects one instruction for.
using Build = Value (*)(OpBuilder &, Location, ValueRange);
template <typename Op> Value intrinsic(OpBuilder &b, Location loc, ValueRange args) {
  return b.create<Op>(loc, args.front().getType(), args);
}
// 1 / sqrt(x), as math-to-llvm lowers math.rsqrt for the CPU: the same bits (IEEE sqrt and
// division), not rsqrt.approx's.
Value rsqrt(OpBuilder &b, Location loc, ValueRange args) {
  Value one = b.create<LLVM::ConstantOp>(loc, args.front().getType(), b.getF32FloatAttr(1.0f));
  return b.create<LLVM::FDivOp>(loc, one, b.create<LLVM::SqrtOp>(loc, args.front()));
}
struct Equivalent {
  const char *name;
  unsigned arity;
  Build build;
};
const Equivalent kEquivalents[] = {
    {"__nv_floorf", 1, intrinsic<LLVM::FFloorOp>}, // cvt.rmi.f32.f32
    {"__nv_ceilf", 1, intrinsic<LLVM::FCeilOp>},   // cvt.rpi.f32.f32
    {"__nv_truncf", 1, intrinsic<LLVM::FTruncOp>}, // cvt.rzi.f32.f32
    {"__nv_rintf", 1, intrinsic<LLVM::RintOp>},    // cvt.rni.f32.f32
    {"__nv_fabsf", 1, intrinsic<LLVM::FAbsOp>},    // abs.f32
    {"__nv_sqrtf", 1, intrinsic<LLVM::SqrtOp>},    // sqrt.rn.f32 (IEEE, as the CPU's)
    {"__nv_rsqrtf", 1, rsqrt},                     // sqrt.rn.f32, div.rn.f32
    {"__nv_fminf", 2, intrinsic<LLVM::MinNumOp>},  // min.f32
    {"__nv_fmaxf", 2, intrinsic<LLVM::MaxNumOp>},  // max.f32
    {"__nv_copysignf", 2, intrinsic<LLVM::CopySignOp>},
    {"__nv_fmaf", 3, intrinsic<LLVM::FMAOp>}, // fma.rn.f32
};

struct NVVMMath : mlir::attn::impl::AttnNVVMMathBase<NVVMMath> {
  void runOnOperation() override {
    Type f32 = Float32Type::get(&getContext());
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      if (!func.isExternal() || !func.getName().starts_with("__nv_"))
        return WalkResult::advance();
      const Equivalent *e = llvm::find_if(
          kEquivalents, [&](const Equivalent &q) { return func.getName() == q.name; });
      LLVM::LLVMFunctionType type = func.getFunctionType();
      if (e == std::end(kEquivalents) || type.getNumParams() != e->arity ||
          type.getReturnType() != f32 ||
          llvm::any_of(type.getParams(), [&](Type t) { return t != f32; })) {
        func->emitOpError("calls libdevice's '")
            << func.getName()
            << "', which attnc does not link (only one-instruction f32 functions have a body here)";
        signalPassFailure();
        return WalkResult::interrupt();
      }
      OpBuilder b(func.getContext());
      Block *body = func.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      Value r = e->build(b, func.getLoc(), body->getArguments());
      b.create<LLVM::ReturnOp>(func.getLoc(), r);
      func.setLinkage(LLVM::Linkage::Internal);
      func.setAlwaysInline(true);
      return WalkResult::advance();
    });
  }
};
} // namespace
