// Benchmark: attnc's flash attention kernels (what attn.flash_attention and
// attn.flash_attention_grad lower to: runtime/cpu/flash_attention.cpp) against PyTorch's
// composite scaled dot-product attention (matmul, additive mask, softmax, matmul, as
// nn.MultiheadAttention computes it; PyTorch 1.13 has no fused attention on the CPU), forward
// and forward + backward, with and without the causal mask, in one run. Not a test; not run by
// ctest.
//
//   ninja -C build attn-bench-attention-kernels
//   OMP_NUM_THREADS=1 build/bin/attn-bench-attention-kernels [--small] [--shape B,H,T,S,D]
//                                                            [--warmup N] [--reps N]
//
// Shapes (f32, Dv = D = 64): B8 H8 T=S=512, and B1 H8 T=S=2048 and 4096 (--small: the first
// only; --shape: that one, causal and not). Both sides get the same q, k, v and output gradient g;
// "loss" is sum(output * g), which must agree to 1e-4 relative before timing means anything. FLOPs
// are the useful ones, the same for both sides: 2 P (D + Dv) forward and 2 P (2 D + 2 Dv) more for
// the backward (d_values, the weights' gradient, d_query, d_keys), with P the (query, key) pairs
// the mask allows (T S, or about half with causal); the kernels' recomputation of the scores in the
// backward, and PyTorch's masked half, are not credited. The fraction of peak divides by the faster
// f32 GEMM (oneDNN's or PyTorch's) measured in the same run. Timing: warm-up, then repetitions
// alternating attnc and PyTorch (tests/bench/attention-kernels.py over a pipe); medians.

#include "BenchSupport.h"

#include "attn/Random.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/kernels.h"
#include "tests/support/KernelArgs.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using bench::PyTorchSide;

namespace {

struct Config {
  int64_t B, H, T, S, D;
  bool causal;
};

void usage() {
  std::fprintf(stderr, "usage: attn-bench-attention-kernels [--small] [--shape B,H,T,S,D] "
                       "[--warmup N] [--reps N]\n");
  std::exit(2);
}

::attn::Tensor random(std::vector<int64_t> shape, ::attn::Rng &rng) {
  ::attn::Tensor t(ATTN_F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = (float)(2 * rng.nextDouble() - 1);
  return t;
}

// The (query, key) pairs a (batch, head) computes with.
double allowedPairs(const Config &c) {
  if (!c.causal)
    return (double)c.T * (double)c.S;
  double pairs = 0;
  for (int64_t i = 0; i < c.T; ++i)
    pairs += (double)std::min(c.S, i + c.S - c.T + 1);
  return pairs;
}

// One configuration and mode: the kernels on fresh tensors, called as compiled code calls them.
struct Kernels {
  Config c;
  ::attn::Tensor q, k, v, g, mask, out, lse, dLse, dq, dk, dv;
  attn_memref4 qm, km, vm, gm, om, dqm, dkm, dvm;
  attn_memref2 mm;
  attn_memref3 lm, dlm;

  Kernels(const Config &c, ::attn::Rng &rng)
      : c(c), q(random({c.B, c.H, c.T, c.D}, rng)), k(random({c.B, c.H, c.S, c.D}, rng)),
        v(random({c.B, c.H, c.S, c.D}, rng)), g(random({c.B, c.H, c.T, c.D}, rng)),
        mask(ATTN_F32, {c.B, c.S}), out(ATTN_F32, {c.B, c.H, c.T, c.D}),
        lse(ATTN_F32, {c.B, c.H, c.T}), dLse(ATTN_F32, {c.B, c.H, c.T}),
        dq(ATTN_F32, {c.B, c.H, c.T, c.D}), dk(ATTN_F32, {c.B, c.H, c.S, c.D}),
        dv(ATTN_F32, {c.B, c.H, c.S, c.D}) {
    for (int64_t i = 0; i < mask.numel(); ++i)
      mask.data<float>()[i] = 1.0f;
    for (int64_t i = 0; i < dLse.numel(); ++i)
      dLse.data<float>()[i] = 0.0f;
    qm = ::attn::testing::memref<attn_memref4>(q.data<float>(), {c.B, c.H, c.T, c.D});
    km = ::attn::testing::memref<attn_memref4>(k.data<float>(), {c.B, c.H, c.S, c.D});
    vm = ::attn::testing::memref<attn_memref4>(v.data<float>(), {c.B, c.H, c.S, c.D});
    gm = ::attn::testing::memref<attn_memref4>(g.data<float>(), {c.B, c.H, c.T, c.D});
    om = ::attn::testing::memref<attn_memref4>(out.data<float>(), {c.B, c.H, c.T, c.D});
    dqm = ::attn::testing::memref<attn_memref4>(dq.data<float>(), {c.B, c.H, c.T, c.D});
    dkm = ::attn::testing::memref<attn_memref4>(dk.data<float>(), {c.B, c.H, c.S, c.D});
    dvm = ::attn::testing::memref<attn_memref4>(dv.data<float>(), {c.B, c.H, c.S, c.D});
    mm = ::attn::testing::memref<attn_memref2>(mask.data<float>(), {c.B, c.S});
    lm = ::attn::testing::memref<attn_memref3>(lse.data<float>(), {c.B, c.H, c.T});
    dlm = ::attn::testing::memref<attn_memref3>(dLse.data<float>(), {c.B, c.H, c.T});
  }

  void forward() { _mlir_ciface_attn_rt_flash_attention(&qm, &km, &vm, &mm, &om, &lm, c.causal); }
  void backward() {
    _mlir_ciface_attn_rt_flash_attention_backward(&qm, &km, &vm, &mm, &om, &lm, &gm, &dlm, &dqm,
                                                  &dkm, &dvm, c.causal);
  }
  double loss() const {
    double sum = 0;
    for (int64_t i = 0; i < out.numel(); ++i)
      sum += (double)out.data<float>()[i] * g.data<float>()[i];
    return sum;
  }
};

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-attention-kernels";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/attention-kernels.py";
  bench::Timing timing{/*warmup=*/2, /*reps=*/5, /*iters=*/1};
  bool small = false;
  std::optional<Config> shape;
  for (bench::Args args(argc, argv, usage); args.next();) {
    if (args.flag == "--small") {
      small = true;
    } else if (args.flag == "--shape") {
      Config c{};
      long long b, h, t, s, d;
      if (std::sscanf(args.value().c_str(), "%lld,%lld,%lld,%lld,%lld", &b, &h, &t, &s, &d) != 5 ||
          b < 1 || h < 1 || t < 1 || s < t || d < 1)
        usage();
      c = {b, h, t, s, d, false};
      shape = c;
    } else if (!timing.parse(args)) {
      usage();
    }
  }
  if (!timing.valid())
    usage();
  std::vector<Config> configs = {{8, 8, 512, 512, 64, false}, {8, 8, 512, 512, 64, true}};
  if (shape) {
    Config causal = *shape;
    causal.causal = true;
    configs = {*shape, causal};
  } else if (!small)
    for (int64_t s : {2048, 4096})
      for (bool causal : {false, true})
        configs.push_back({1, 8, s, s, 64, causal});
  int threads = bench::threadCount();
  std::string python = bench::benchPython();
  std::printf("scaled dot-product attention, f32: attnc's flash kernels vs PyTorch's composite\n");
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());

  int rc = 0;
  std::optional<bench::Calibration> calibration;
  for (const Config &c : configs)
    for (bool withBackward : {false, true}) {
      ::attn::Rng rng(42);
      Kernels kernels(c, rng);
      std::string dataFile = bench::tempDataFile("attn-bench-attention-kernels");
      {
        ::attn::checkpoint::Checkpoint ckpt;
        ckpt.tensors = {{"q", kernels.q}, {"k", kernels.k}, {"v", kernels.v}, {"g", kernels.g}};
        ::attn::checkpoint::save(dataFile, ckpt);
      }
      PyTorchSide torch;
      torch.launch(python, script, {"--data",    dataFile,
                                    "--threads", std::to_string(threads),
                                    "--b",       std::to_string(c.B),
                                    "--h",       std::to_string(c.H),
                                    "--t",       std::to_string(c.T),
                                    "--s",       std::to_string(c.S),
                                    "--d",       std::to_string(c.D),
                                    "--causal",  std::to_string(c.causal ? 1 : 0),
                                    "--mode",    withBackward ? "backward" : "forward",
                                    "--warmup",  std::to_string(timing.warmup),
                                    "--iters",   std::to_string(timing.iters)});
      std::remove(dataFile.c_str());
      if (!calibration) {
        calibration = bench::calibrate(torch);
        calibration->print(threads);
      }
      auto step = [&] {
        kernels.forward();
        if (withBackward)
          kernels.backward();
      };
      step();
      std::printf("B%lld H%lld T%lld S%lld D%lld%s, %s: loss %.9g", (long long)c.B, (long long)c.H,
                  (long long)c.T, (long long)c.S, (long long)c.D, c.causal ? " causal" : "",
                  withBackward ? "forward+backward" : "forward", kernels.loss());
      if (torch.ready) {
        if (!bench::printLossAgreement(kernels.loss(), torch.firstLoss))
          rc = 1;
      } else {
        std::printf(" (no PyTorch side: %s)\n", torch.note.c_str());
      }
      std::vector<double> attn;
      std::vector<std::vector<double>> torchTimes;
      bench::timeInterleaved(timing, step, {&torch}, attn, torchTimes);
      double pairs = allowedPairs(c) * (double)(c.B * c.H);
      double flops = 2 * pairs * (double)(2 * c.D);
      if (withBackward)
        flops += 2 * pairs * (double)(4 * c.D);
      double attnSeconds = bench::median(attn);
      std::printf("  attnc %.2f ms, %s", attnSeconds * 1e3,
                  calibration->rate(flops, attnSeconds).c_str());
      if (torch.ready && !torchTimes[0].empty()) {
        double torchSeconds = bench::median(torchTimes[0]);
        std::printf("; PyTorch %.2f ms, %s; PyTorch/attnc %.2f", torchSeconds * 1e3,
                    calibration->rate(flops, torchSeconds).c_str(), torchSeconds / attnSeconds);
        torch.quit();
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  return rc;
}
