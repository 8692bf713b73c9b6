// attn-to-linalg: everything attn-to-onednn left becomes linalg/tensor/scf code.
#include "compiler/Conversion/AttnToLinalg/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnToLinalg : mlir::attn::impl::AttnToLinalgBase<AttnToLinalg> {
  using AttnToLinalgBase::AttnToLinalgBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    attn::linalg_lowering::populateCorePatterns(patterns, /*embeddingGrad=*/!gpu);
    attn::linalg_lowering::populateRecurrentPatterns(patterns);
    attn::linalg_lowering::populateLossPatterns(patterns);
    attn::linalg_lowering::populateOptimPatterns(patterns, gpu);
    // The ops to lower: every op but those inside a runtime kernel op's regions (a fused
    // attention's score region is the recipe of the kernel attn-to-onednn generates).
    SmallVector<Operation *> ops;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != getOperation().getOperation())
        ops.push_back(op);
      return op->hasTrait<attn::OpTrait::RuntimeKernel>() ? WalkResult::skip()
                                                           : WalkResult::advance();
    });
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    if (failed(applyOpPatternsAndFold(ops, std::move(patterns), config)))
      return signalPassFailure();
    // Whatever is left has no lowering here: say which op, and what usually fixes it.
    // Runtime kernels (matmuls, dense layers, the sequence ops, fused attention)
    // are attn-to-onednn's, which runs after this pass.
    WalkResult leftover = getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op->hasTrait<attn::OpTrait::RuntimeKernel>())
        return WalkResult::skip();
      if (gpu && isa<attn::EmbeddingGradOp>(op)) // attn-to-cuda's
        return WalkResult::advance();
      if (!isa<attn::AttnDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("'") << op->getName()
                         << "' has no lowering to linalg (composite ops need attn-decompose, "
                            "params attn-params-to-args first)";
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
