#include "dialect/ops/ShapeRules.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn {

std::string typeStr(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                          llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align trailing dimensions: a missing leading dimension counts as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

LogicalResult inferBroadcastType(llvm::StringRef opName, std::optional<Location> loc,
                                 ValueRange operands, llvm::SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(operands[0].getType());
  auto rhs = cast<RankedTensorType>(operands[1].getType());
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (!shape)
    return emitOptionalError(loc, "'", opName, "' cannot broadcast ", typeStr(lhs), " with ",
                             typeStr(rhs),
                             ": trailing dimensions must be equal or 1");
  results.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

LogicalResult inferSameType(llvm::StringRef, std::optional<Location>, ValueRange operands,
                            llvm::SmallVectorImpl<Type> &results) {
  results.push_back(operands[0].getType());
  return success();
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

} // namespace mlir::attn
