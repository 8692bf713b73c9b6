#include "compiler/Driver/Measure.h"

#include "compiler/Transforms/Passes.h"
#include "dialect/FlopCount.h"

#include "attn/Alloc.h"
#include "attn/cpu/Matmul.h"
#include "attn/kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace attn::driver {

std::map<std::string, double> entryFlops(mlir::ModuleOp module) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  mlir::PassManager pm(module.getContext());
  pm.addPass(mlir::attn::createAttnDecompose());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(*copy)))
    return {};
  std::map<std::string, double> flops;
  for (auto f : copy->getOps<mlir::func::FuncOp>())
    flops[f.getName().str()] = mlir::attn::countFlops(f);
  return flops;
}

double seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

double gemmGflops(int64_t n, int reps, bool bf16) {
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (int64_t i = 0; i < n * n; ++i)
    a[i] = (float)((i * 7) % 13) / 13.0f, b[i] = (float)((i * 5) % 11) / 11.0f;
  // The bf16 kernel's factors come rounded, as compiled code rounds them (once per value).
  std::vector<uint16_t> a16(n * n), b16(n * n);
  attn::cpu::roundToBf16(a.data(), a16.data(), a.size());
  attn::cpu::roundToBf16(b.data(), b16.data(), b.size());
  // [1, n, n] row-major, each.
  attn_memref3 ma{a.data(), a.data(), 0, {1, n, n}, {n * n, n, 1}},
      mb{b.data(), b.data(), 0, {1, n, n}, {n * n, n, 1}},
      mc{c.data(), c.data(), 0, {1, n, n}, {n * n, n, 1}};
  attn_memref_bf16_3 ma16{a16.data(), a16.data(), 0, {1, n, n}, {n * n, n, 1}},
      mb16{b16.data(), b16.data(), 0, {1, n, n}, {n * n, n, 1}};
  auto matmul = [&] {
    if (bf16)
      _mlir_ciface_attn_rt_matmul_bf16(&ma16, &mb16, &mc, 0, 0);
    else
      _mlir_ciface_attn_rt_matmul(&ma, &mb, &mc, 0, 0);
  };
  matmul();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = seconds();
    matmul();
    best = std::min(best, seconds() - t0);
  }
  return 2.0 * n * n * n / best / 1e9;
}

double gemmInt8Gops(int64_t n, int reps) {
  std::vector<float, BufferAllocator<float>> x(n * n), w(n * n), bias(n, 0.0f), y(n * n);
  for (int64_t i = 0; i < n * n; ++i)
    x[i] = (float)((i * 7) % 13) / 13.0f, w[i] = (float)((i * 5) % 11) / 11.0f;
  auto view = [n](std::vector<float, BufferAllocator<float>> &v) {
    return attn_memref2{v.data(), v.data(), 0, {n, n}, {n, 1}};
  };
  attn_memref2 mx = view(x), mw = view(w), my = view(y);
  attn_memref1 mb{bias.data(), bias.data(), 0, {n}, {1}};
  _mlir_ciface_attn_rt_dense_int8(&mx, &mw, &mb, &my); // quantises and keeps w
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = seconds();
    _mlir_ciface_attn_rt_dense_int8(&mx, &mw, &mb, &my);
    best = std::min(best, seconds() - t0);
  }
  return 2.0 * n * n * n / best / 1e9;
}

} // namespace attn::driver
