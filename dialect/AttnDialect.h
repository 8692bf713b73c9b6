// The attn dialect. Ops are declared in AttnOps.h.
#pragma once

#include "mlir/IR/Dialect.h"

#include "dialect/AttnDialect.h.inc"
