// Interfaces of the attn dialect (AttnInterfaces.td): what passes ask of ops.
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialect/AttnDialect.h"

#include "dialect/AttnInterfaces.h.inc"
