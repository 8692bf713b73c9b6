// attn-decompose: composite ops into the core ops the lowerings know, through
// DecomposableOpInterface (each op's rule lives beside its definition).
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct Decompose : mlir::attn::impl::AttnDecomposeBase<Decompose> {
  void runOnOperation() override {
    // A decomposition may itself produce composite ops: repeat until none is left.
    while (true) {
      SmallVector<DecomposableOpInterface> composites;
      getOperation()->walk([&](DecomposableOpInterface op) { composites.push_back(op); });
      if (composites.empty())
        return;
      for (DecomposableOpInterface op : composites) {
        OpBuilder b(op);
        SmallVector<Value> replacements = op.decompose(b);
        op->replaceAllUsesWith(replacements);
        op->erase();
      }
    }
  }
};
} // namespace
