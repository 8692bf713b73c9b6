// C++ side of the recurrent kernels in attn/kernels.h: how often the backward found the
// workspace of its training forward, for tests and benchmarks.
#ifndef ATTN_CPU_RECURRENT_H
#define ATTN_CPU_RECURRENT_H

#include <cstddef>

namespace attn::cpu {

// Backward calls that reused the workspace a training forward kept.
size_t recurrentWorkspaceHits();
// Backward calls that had to recompute the forward (no, or a stale, workspace).
size_t recurrentWorkspaceMisses();
// Drops every kept workspace.
void clearRecurrentWorkspaces();

} // namespace attn::cpu

#endif // ATTN_CPU_RECURRENT_H
