// attn-precision: sets each product's number type from a policy (Passes.td has the why).
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPRECISION
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ApplyPolicy : mlir::attn::impl::AttnPrecisionBase<ApplyPolicy> {
  using AttnPrecisionBase::AttnPrecisionBase;

  void runOnOperation() override {
    std::optional<Precision> target = symbolizePrecision(policy);
    if (!target) {
      getOperation()->emitError("attn-precision: unknown policy '")
          << policy << "' (f32 | bf16 | int8)";
      return signalPassFailure();
    }
    if (*target == Precision::f32)
      return;
    getOperation()->walk([&](Operation *op) {
      if (auto product = dyn_cast<PrecisionOpInterface>(op)) {
        // An explicit precision (a gradient rule's, or written by hand) wins over the policy.
        if (op->hasAttr("precision"))
          return;
        if (!product.supportsPrecision(*target)) {
          if (remarks)
            op->emitRemark() << "'" << op->getName() << "' stays f32: it has no "
                             << stringifyPrecision(*target) << " kernel";
          return;
        }
        if (!product.gainsFrom(*target)) {
          if (remarks)
            op->emitRemark() << "'" << op->getName()
                             << "' stays f32: " << product.whyNotGains(*target);
          return;
        }
        product.setComputePrecision(*target);
      }
    });
  }
};
} // namespace
