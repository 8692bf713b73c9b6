// What speed is measured against: the FLOPs a compiled program does, counted from its ops,
// and the machine's f32 GEMM throughput measured in the same run. `attnc bench` and the
// benchmarks of tests/bench report their times as fractions of that peak.
#pragma once

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>

namespace attn::driver {

/// The matrix-product FLOPs of one call of each function of `module` (attn IR before
/// lowering), counted from its ops (mlir::attn::countFlops) after the lowering's first steps:
/// attn-decompose turns composite ops into the matmuls they run, and canonicalize + CSE
/// merge the copies a composite op's gradient makes of its forward, as they do before code
/// generation. So this is what the compiled program computes, not a formula by hand. Empty
/// (reported through the context) when decomposition fails.
std::map<std::string, double> entryFlops(mlir::ModuleOp module);

/// f32 GEMM throughput of attnc's matmul kernel (attn_rt_matmul, oneDNN) for n x n x n at
/// the current OpenMP thread count: the best of `reps` calls after a warm-up, in GFLOP/s.
/// With `bf16`, of its bf16 kernel (attn_rt_matmul_bf16: the f32 factors rounded, 2 n^2
/// conversions against 2 n^3 flops), the peak a bf16 program is measured against.
double gemmGflops(int64_t n = 1024, int reps = 7, bool bf16 = false);

/// The same for attnc's int8 dense kernel (attn_rt_dense_int8: the weight quantised once and
/// kept, the rows of x quantised at each call, int32 sums rescaled), in GOP/s: the peak an
/// int8 program's products are measured against.
double gemmInt8Gops(int64_t n = 1024, int reps = 7);

/// Seconds on a steady clock.
double seconds();

} // namespace attn::driver
