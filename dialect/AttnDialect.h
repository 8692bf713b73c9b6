// The attn dialect. Ops are declared in AttnOps.h.
#pragma once

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"

#include "dialect/AttnDialect.h.inc"

#include "dialect/AttnEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.h.inc"
