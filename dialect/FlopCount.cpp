#include "dialect/FlopCount.h"

#include "dialect/AttnInterfaces.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;

double mlir::attn::multiplyAddFlops(llvm::ArrayRef<int64_t> shape) {
  double n = 2;
  for (int64_t d : shape)
    n *= (double)d;
  return n;
}

double mlir::attn::countFlops(Region &region) {
  double total = 0;
  region.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto counted = dyn_cast<FlopCountOpInterface>(op)) {
      total += counted.getFlops();
      return WalkResult::skip();
    }
    if (auto call = dyn_cast<CallOpInterface>(op))
      if (Operation *callee = call.resolveCallable())
        total += countFlops(callee);
    return WalkResult::advance();
  });
  return total;
}

double mlir::attn::countFlops(Operation *op) {
  double total = 0;
  for (Region &region : op->getRegions())
    total += countFlops(region);
  return total;
}
