// Benchmark: attnc's dense kernels in f32, bf16 and int8 (attn_rt_dense, _bf16, _int8) at the
// shapes decoding meets, timed in turns: the ceiling that bf16 and int8 decoding can reach on
// a model's products (docs/precision.md), beside the 1024^3 GEMM calibrations of the same run.
// attnc against attnc, no PyTorch side: attn-bench-transformer times PyTorch's int8 decoding.
//
//   ninja -C build attn-bench-dense-precision
//   OMP_NUM_THREADS=1 build/bin/attn-bench-dense-precision
//
// Each row: x [M, K] times a weight [K, N] plus a bias, the weight a runtime buffer (as a
// program's parameters are) so that the int8 kernel quantises it once and keeps it; x is
// quantised (int8) at every call, as in decoding; for bf16 both factors are rounded at every
// call (attn::cpu::roundToBf16), as a decoding step's program rounds its input and its weight
// arguments before the product (attn-round-bf16-factors).
#include "BenchSupport.h"

#include "attn/Alloc.h"
#include "attn/Cpu.h"
#include "attn/cpu/Matmul.h"

#include <cstdio>
#include <functional>
#include <vector>

namespace {

using Floats = std::vector<float, ::attn::BufferAllocator<float>>;
using Bf16s = std::vector<uint16_t, ::attn::BufferAllocator<uint16_t>>;

struct Row {
  const char *what;
  int64_t M, K, N;
};

} // namespace

int main() {
  bench::programName = "attn-bench-dense-precision";
  std::printf("%s\n", bench::threadsNote().c_str());
  // f32 runs everywhere; bf16 and int8 where the CPU has their instructions.
  const bool runs[3] = {true, bench::runsBf16("the bf16 column"),
                        bench::runsInt8("the int8 column")};
  // Each kernel's peak: its own 1024^3 product in this run.
  const double peaks[3] = {::attn::driver::gemmGflops(),
                           runs[1] ? ::attn::driver::gemmGflops(1024, 7, /*bf16=*/true) : 0,
                           runs[2] ? ::attn::driver::gemmInt8Gops() : 0};
  auto peak = [&](int k) { return runs[k] ? std::to_string(peaks[k]) : std::string("-"); };
  std::printf("calibration, 1024^3: f32 GEMM %.1f GFLOP/s, bf16 GEMM %s GFLOP/s, int8 dense "
              "%s GOP/s (attnc's kernels); each row's %% is of its kernel's peak\n",
              peaks[0], peak(1).c_str(), peak(2).c_str());
  const Row rows[] = {
      {"dates Transformer step, a projection", 50, 64, 64},
      {"dates Bahdanau step, GRU gates", 50, 64, 192},
      {"d_model 256, a projection", 32, 256, 256},
      {"d_model 256, feed-forward in", 32, 256, 1024},
      {"d_model 256, feed-forward out", 32, 1024, 256},
      {"d_model 256, output layer of 5853", 32, 256, 5853},
      {"d_model 512, one sentence", 1, 512, 512},
      {"d_model 512, feed-forward in", 64, 512, 2048},
  };
  std::printf("%-60s %16s %24s %24s\n", "x [M, K] w [K, N]", "f32 us (% peak)",
              "bf16 us (x f32, % peak)", "int8 us (x f32, % peak)");
  ::attn::Rng rng(1);
  for (const Row &r : rows) {
    Floats x(r.M * r.K), w(r.K * r.N), b(r.N), y(r.M * r.N);
    for (Floats *v : {&x, &w, &b})
      for (float &e : *v)
        e = (float)(2 * rng.nextDouble() - 1);
    attn_memref2 mx{x.data(), x.data(), 0, {r.M, r.K}, {r.K, 1}},
        mw{w.data(), w.data(), 0, {r.K, r.N}, {r.N, 1}},
        my{y.data(), y.data(), 0, {r.M, r.N}, {r.N, 1}};
    attn_memref1 mb{b.data(), b.data(), 0, {r.N}, {1}};
    Bf16s x16(x.size()), w16(w.size());
    attn_memref_bf16_2 mx16{x16.data(), x16.data(), 0, {r.M, r.K}, {r.K, 1}},
        mw16{w16.data(), w16.data(), 0, {r.K, r.N}, {r.N, 1}};
    const std::function<void()> kernels[3] = {
        [&] { _mlir_ciface_attn_rt_dense(&mx, &mw, &mb, &my); },
        [&] {
          ::attn::cpu::roundToBf16(x.data(), x16.data(), x.size());
          ::attn::cpu::roundToBf16(w.data(), w16.data(), w.size());
          _mlir_ciface_attn_rt_dense_bf16(&mx16, &mw16, &mb, &my);
        },
        [&] { _mlir_ciface_attn_rt_dense_int8(&mx, &mw, &mb, &my); }};
    // Enough calls per timing for a millisecond or so of work, the median of 7 turns.
    int calls = std::max(1, (int)(2e8 / (2.0 * r.M * r.K * r.N)));
    std::vector<double> times[3];
    for (int k = 0; k < 3; ++k) // warm-up: primitives made, the int8 weight quantised
      for (int i = 0; i < 3 && runs[k]; ++i)
        kernels[k]();
    for (int turn = 0; turn < 7; ++turn)
      for (int k = 0; k < 3; ++k)
        if (runs[k])
          times[k].push_back(bench::perStep(calls, kernels[k]));
    double t[3];
    for (int k = 0; k < 3; ++k)
      t[k] = runs[k] ? bench::median(times[k]) * 1e6 : 0;
    char label[96];
    std::snprintf(label, sizeof label, "%s: [%lld, %lld] [%lld, %lld]", r.what, (long long)r.M,
                  (long long)r.K, (long long)r.K, (long long)r.N);
    double ops = 2.0 * r.M * r.K * r.N;
    auto pct = [&](int k) { return ops / (t[k] * 1e-6) / 1e9 / peaks[k] * 100; };
    auto cell = [&](int k) {
      char text[32] = "-";
      if (runs[k])
        std::snprintf(text, sizeof text, "%9.1f (%.2fx, %2.0f%%)", t[k], t[0] / t[k], pct(k));
      return std::string(text);
    };
    std::printf("%-60s %9.1f (%2.0f%%) %24s %24s\n", label, t[0], pct(0), cell(1).c_str(),
                cell(2).c_str());
  }
  return 0;
}
