#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialect/AttnDialect.cpp.inc"
#include "dialect/AttnEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/AttnAttrs.cpp.inc"
      >();
}
