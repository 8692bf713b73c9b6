#include "dialect/AttnInterfaces.h"

#include "dialect/AttnInterfaces.cpp.inc"
