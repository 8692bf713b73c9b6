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
    // Patterns create the kernel declarations at module level, so they run on the module.
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
