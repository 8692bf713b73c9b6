// attn-expand-math: vectorizable polynomial approximations of transcendental functions, and
// the rounding to bf16 as integer arithmetic.
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDMATH
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct ExpandMath : mlir::attn::impl::AttnExpandMathBase<ExpandMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    // Rounding to bf16 as integer arithmetic: LLVM 19's x86 cost model prices a vector
    // fptrunc to bfloat as scalar code (one vcvtneps2bf16 per element) and leaves such loops
    // unvectorized; the bias-and-shift form vectorizes at full width.
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
