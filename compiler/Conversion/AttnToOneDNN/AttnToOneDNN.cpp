// attn-to-onednn: the ops oneDNN does best become runtime kernel calls.
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOONEDNN
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnToOneDNN : mlir::attn::impl::AttnToOneDNNBase<AttnToOneDNN> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    attn::onednn::populateCorePatterns(patterns);
    attn::onednn::populateRecurrentPatterns(patterns);
    attn::onednn::populateAttentionPatterns(patterns);
    // Patterns create the kernel declarations at module level, so they run on the module.
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    // Only the attn ops are rewritten: the bufferization.to_memref / to_tensor pairs around
    // each call must reach one-shot bufferization exactly as created. Folding or CSE of them
    // (to_memref(to_tensor(m)) -> m, two to_memref of one tensor -> one) would hide a
    // kernel's read of a tensor from the analysis, which could then let an earlier in-place
    // write clobber it. This is also why the pass runs last in attn-lower.
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    // Every runtime-kernel op must have become a call: one left would reach bufferization
    // as an op nothing lowers.
    WalkResult left = getOperation().walk([](Operation *op) {
      if (!op->hasTrait<attn::OpTrait::RuntimeKernel>())
        return WalkResult::advance();
      op->emitError("'") << op->getName() << "' is a runtime kernel op that attn-to-onednn "
                         << "could not turn into a kernel call";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
