// Shape rules shared by several attn ops (each op's own rule lives with its family in ops/).
// Every rule reports failures through emitOptionalError with the op name and the offending
// types, so the same text reaches the verifier, the parser and the importer.
#pragma once

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// Renders a type for a diagnostic: "tensor<4x8xf32>".
std::string typeStr(Type type);

/// NumPy broadcasting of two static shapes; nullopt when some aligned pair differs and
/// neither is 1.
std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                          llvm::ArrayRef<int64_t> b);

/// Elementwise binary ops: the broadcast of both operand shapes.
LogicalResult inferBroadcastType(llvm::StringRef opName, std::optional<Location> loc,
                                 ValueRange operands, llvm::SmallVectorImpl<Type> &results);

/// Unary ops: the first operand's type.
LogicalResult inferSameType(llvm::StringRef opName, std::optional<Location> loc,
                            ValueRange operands, llvm::SmallVectorImpl<Type> &results);

/// `axis` in [-rank, rank) as an index in [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace mlir::attn
