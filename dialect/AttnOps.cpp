// Op class definitions generated from AttnOps.td. The hand-written parts (verifiers, shape
// rules, custom syntax) live with their family in ops/.
#include "dialect/AttnOps.h"

#define GET_OP_CLASSES
#include "dialect/AttnOps.cpp.inc"
