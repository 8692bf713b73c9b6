//===- AttnOps.td - every op of the attn dialect, by family ------------------------------===//
#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "dialect/ops/Core.td"
include "dialect/ops/Recurrent.td"
include "dialect/ops/Attention.td"
include "dialect/ops/Conv.td"
include "dialect/ops/Loss.td"
include "dialect/ops/Optim.td"

#endif // ATTN_OPS_TD
