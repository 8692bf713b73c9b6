// FLOP counts of attn programs, from the ops' FlopCountOpInterface (AttnInterfaces.td).
#pragma once

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

#include "llvm/ADT/ArrayRef.h"

namespace mlir::attn {

/// The matrix-product floating-point operations of one run of `region`: the sum of
/// FlopCountOpInterface::getFlops over its ops (an op that counts itself, such as attn.scan,
/// is not looked into), calls followed into their callees. Composite ops (multi-head
/// attention, cells) count nothing until `attn-decompose` has turned them into matmuls.
double countFlops(Region &region);

/// The same for one run of a function-like `op` (func.func @train_step, say).
double countFlops(Operation *op);

/// 2 * prod(shape): the FLOPs of one multiply-add per element of `shape`, as a double (the
/// products of large programs do not fit an int64).
double multiplyAddFlops(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::attn
