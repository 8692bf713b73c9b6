// Benchmark: attnc's fused attention kernels against PyTorch's composite attention, forward and
// forward + backward, in one run. Not a test; not run by ctest.
//  - Scaled dot-product attention: the flash kernels (what attn.fused_attention and its _grad
//    with a dot-product score lower to: runtime/cpu/flash_attention.cpp), called directly, with
//    and without the causal mask, against matmul, additive mask, softmax, matmul (as
//    nn.MultiheadAttention computes it; PyTorch 1.13 has no fused attention on the CPU).
//  - An RNN decoder step's attention, Bahdanau's additive score and Luong's local-p (window and
//    Gaussian, a learned centre): the kernels the compiler generates from the score region,
//    compiled through attn-autodiff and the JIT (@loss forward, @loss_grad forward+backward),
//    against the same composite in PyTorch ([B, S, A] tanh for additive).
//
//   ninja -C build attn-bench-attention-kernels
//   OMP_NUM_THREADS=1 build/bin/attn-bench-attention-kernels [--small] [--shape B,H,T,S,D]
//                                                            [--warmup N] [--reps N]
//
// Shapes (f32, Dv = D = 64): B8 H8 T=S=512, and B1 H8 T=S=2048 and 4096 (--small: the first
// only; --shape: that one, causal and not); the decoder steps B64 S256, attention dim and values
// 256, local-p window 10. Both sides get the same tensors and output gradient g; "loss" is
// sum(output * g), which must agree to 1e-4 relative before timing means anything. FLOPs are
// the useful ones, the same for both sides: for dot-product attention 2 P (D + Dv) forward and
// 2 P (2 D + 2 Dv) more for the backward (d_values, the weights' gradient, d_query, d_keys),
// with P the (query, key) pairs the mask allows (T S, or about half with causal); the kernels'
// recomputation of the scores in the backward, and PyTorch's masked half, are not credited
// (the decoder steps: CompiledStep::flops). The fraction of peak divides by the faster f32 GEMM
// (oneDNN's or PyTorch's) measured in the same run. Timing: warm-up, then repetitions
// alternating attnc and PyTorch (tests/bench/attention-kernels.py over a pipe); medians.

#include "BenchSupport.h"

#include "compiler/Transforms/Passes.h"

#include "attn/Random.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/kernels.h"
#include "tests/support/KernelArgs.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using bench::PyTorchBaseline;

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

  // The scaled dot product's 1/sqrt(D), as attn-to-onednn passes it from the score region.
  float scale() const { return 1.0f / std::sqrt((float)c.D); }
  void forward() {
    _mlir_ciface_attn_rt_flash_attention(&qm, &km, &vm, &mm, &om, &lm, c.causal, scale());
  }
  void backward() {
    _mlir_ciface_attn_rt_flash_attention_backward(&qm, &km, &vm, &mm, &om, &lm, &gm, &dlm, &dqm,
                                                  &dkm, &dvm, c.causal, scale());
  }
  // The bf16 kernels (attn-precision's bf16 policy), on the same tensors.
  void forwardBf16() {
    _mlir_ciface_attn_rt_flash_attention_bf16(&qm, &km, &vm, &mm, &om, &lm, c.causal, scale());
  }
  void backwardBf16() {
    _mlir_ciface_attn_rt_flash_attention_backward_bf16(&qm, &km, &vm, &mm, &om, &lm, &gm, &dlm,
                                                       &dqm, &dkm, &dvm, c.causal, scale());
  }
  double loss() const {
    double sum = 0;
    for (int64_t i = 0; i < out.numel(); ++i)
      sum += (double)out.data<float>()[i] * g.data<float>()[i];
    return sum;
  }
};

// An RNN decoder step's attention: one query per row (B rows, H = T = 1) over S keys, as the
// fused op with the family's score region (what attn-fuse-attention makes of Bahdanau's and of
// Luong's local-p attention), compiled as `attnc train` compiles it (attn-autodiff, the JIT):
// the kernels attn-to-onednn generates from the region, not the flash ones.
struct DecoderStep {
  std::string family; // "additive" or "local_p"
  int64_t B, S, A, Dv, window;
};

std::string tensorType(std::initializer_list<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

// @loss = sum(o * g) over q [B, 1, 1, A], k [B, 1, S, A], v [B, 1, S, Dv], g [B, 1, 1, Dv] and
// v_a [A] (additive) or the centres p [B, 1, 1] (local-p), all parameters.
std::string decoderStepModule(const DecoderStep &c) {
  bool additive = c.family == "additive";
  std::string q = tensorType({c.B, 1, 1, c.A}), k = tensorType({c.B, 1, c.S, c.A}),
              v = tensorType({c.B, 1, c.S, c.Dv}), o = tensorType({c.B, 1, 1, c.Dv}),
              m = tensorType({c.B, c.S}), lse = tensorType({c.B, 1, 1}), row = tensorType({c.A}),
              p = tensorType({c.B, 1, 1});
  std::ostringstream s;
  s << "func.func @loss() -> (tensor<f32> {attn.name = \"loss\"}) {\n"
    << "  %q = attn.param \"q\" {scale = 1.0 : f32} : " << q << "\n"
    << "  %k = attn.param \"k\" {scale = 1.0 : f32} : " << k << "\n"
    << "  %v = attn.param \"v\" {scale = 1.0 : f32} : " << v << "\n"
    << "  %g = attn.param \"g\" {scale = 1.0 : f32} : " << o << "\n"
    << (additive ? "  %va = attn.param \"va\" {scale = 1.0 : f32} : " + row
                 : "  %p = attn.param \"p\" {scale = 1.0 : f32} : " + p)
    << "\n  %m = attn.constant dense<1.0> : " << m << "\n"
    << "  %o, %lse = attn.fused_attention %q, %k, %v, %m "
    << (additive ? "captures(%va : " + row + ")"
                 : "center(%p : " + p + ") {window = " + std::to_string(c.window) +
                       " : i64, gaussian}")
    << " : " << q << ", " << k << ", " << v << ", " << m << " -> " << o << ", " << lse << " {\n"
    << "  ^bb0(%qi: " << row << ", %kj: " << row << ", %i: tensor<f32>, %j: tensor<f32>"
    << (additive ? ", %wa: " + row : "") << "):\n";
  if (additive)
    s << "    %sum = attn.add %qi, %kj : " << row << ", " << row << "\n"
      << "    %t = attn.tanh %sum : " << row << "\n"
      << "    %tv = attn.mul %t, %wa : " << row << ", " << row << "\n"
      << "    %e = attn.reduce_sum %tv {axes = array<i64: 0>} : " << row << "\n";
  else
    s << "    %pr = attn.mul %qi, %kj : " << row << ", " << row << "\n"
      << "    %e = attn.reduce_sum %pr {axes = array<i64: 0>} : " << row << "\n";
  s << "    attn.yield %e : tensor<f32>\n  }\n"
    << "  %og = attn.mul %o, %g : " << o << ", " << o << "\n"
    << "  %l = attn.reduce_sum %og {axes = array<i64: 0, 1, 2, 3>} : " << o << "\n"
    << "  return %l : tensor<f32>\n}\n";
  return s.str();
}

// The step compiled, its parameters the tensors handed to PyTorch too; @loss is the forward,
// @loss_grad forward and backward.
struct CompiledStep {
  DecoderStep c;
  std::map<std::string, ::attn::Tensor> tensors;
  std::unique_ptr<::attn::driver::Session> session;
  std::unique_ptr<::attn::driver::Model> model;
  float lastLoss = 0;

  CompiledStep(const DecoderStep &c, ::attn::Rng &rng) : c(c) {
    tensors = {{"q", random({c.B, 1, 1, c.A}, rng)},
               {"k", random({c.B, 1, c.S, c.A}, rng)},
               {"v", random({c.B, 1, c.S, c.Dv}, rng)},
               {"g", random({c.B, 1, 1, c.Dv}, rng)}};
    if (c.family == "additive") {
      tensors.emplace("va", random({c.A}, rng));
    } else {
      // Centres spread over the keys, away from the ends: every window is whole.
      ::attn::Tensor p(ATTN_F32, {c.B, 1, 1});
      for (int64_t b = 0; b < c.B; ++b)
        p.data<float>()[b] = (float)(c.window + rng.nextDouble() * (c.S - 1 - 2 * c.window));
      tensors.emplace("p", p);
    }
    session = bench::newSession(/*fuse=*/false);
    auto module = mlir::parseSourceString<mlir::ModuleOp>(decoderStepModule(c),
                                                          &session->context());
    if (!module)
      bench::die("cannot parse the " + c.family + " step's module");
    mlir::PassManager pm(&session->context());
    pm.addPass(mlir::attn::createAttnAutodiff());
    if (mlir::failed(pm.run(*module)))
      bench::die("attn-autodiff failed on the " + c.family + " step");
    session->setModule(std::move(module), "attention_step_" + c.family);
    model = session->loadModel(/*seed=*/1);
    if (!model)
      bench::die("the " + c.family + " step does not compile");
    const attn_program_info &info = model->program->info();
    for (int i = 0; i < info.num_params; ++i)
      model->params[i] = tensors.at(info.params[i].name);
  }

  void run(bool withBackward) {
    const char *entry = withBackward ? "loss_grad" : "loss";
    std::vector<::attn::Tensor> out = model->program->call(entry, model->params, {});
    const attn_entry_info &info = model->program->entry(entry);
    for (int o = 0; o < info.num_outputs; ++o)
      if (std::string(info.outputs[o].name) == "loss")
        lastLoss = out[o].data<float>()[0];
  }

  // Useful FLOPs: per allowed (query, key) pair the score (additive: q + k, the product with
  // v_a and its sum, 3 A; dot: 2 A) and the weighted sum (2 Dv), tanh and exp not counted; the
  // backward counted as twice the forward. Local-p allows 2 window + 1 keys per query.
  double flops(bool withBackward) const {
    bool additive = c.family == "additive";
    double pairs = (double)c.B * (double)(additive ? c.S : 2 * c.window + 1);
    double forward = pairs * (double)((additive ? 3 : 2) * c.A + 2 * c.Dv);
    return withBackward ? 3 * forward : forward;
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
  // A Bahdanau step and a local-p step at NMT-like sizes (attention dim and memory 256, a long
  // source), B 64.
  std::vector<DecoderStep> steps = {{"additive", 64, 256, 256, 256, 10},
                                    {"local_p", 64, 256, 256, 256, 10}};
  int threads = bench::threadCount();
  std::string python = bench::benchPython();
  std::printf("scaled dot-product attention, f32: attnc's flash kernels vs PyTorch's composite\n");
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());

  int rc = 0;
  std::optional<bench::Calibration> calibration;
  // One row: the step once (its loss checked against PyTorch's first), then timed in turns
  // with the PyTorch side, medians as times and as rates of `flops`.
  auto measure = [&](const std::string &label, PyTorchBaseline &torch,
                     const std::function<void()> &step, const std::function<double()> &loss,
                     double flops, bench::Goal goal) {
    if (!calibration) {
      calibration = bench::calibrate(torch);
      calibration->print(threads);
    }
    step();
    std::printf("%s: loss %.9g", label.c_str(), loss());
    if (torch.ready) {
      if (!bench::printLossAgreement(loss(), torch.firstLoss))
        rc = 1;
    } else {
      std::printf(" (no PyTorch side: %s)\n", torch.note.c_str());
    }
    std::vector<double> attn;
    std::vector<std::vector<double>> torchTimes;
    bench::timeInterleaved(timing, step, {&torch}, attn, torchTimes);
    double attnSeconds = bench::median(attn);
    std::printf("  attnc %.3f ms, %s", attnSeconds * 1e3,
                calibration->rate(flops, attnSeconds).c_str());
    if (torch.ready && !torchTimes[0].empty()) {
      double torchSeconds = bench::median(torchTimes[0]);
      std::printf("; PyTorch at its best %.3f ms, %s; PyTorch/attnc %.2f\n", torchSeconds * 1e3,
                  calibration->rate(flops, torchSeconds).c_str(), torchSeconds / attnSeconds);
      torch.quit();
      torch.printAllocators("    ", 1e3, "ms");
    } else {
      std::printf("\n");
    }
    bench::printTableRow(*calibration, "attention kernels " + label, flops, attnSeconds, &torch,
                         goal);
    std::fflush(stdout);
  };
  bool bf16Runs = bench::runsBf16("the bf16 kernels' rows");
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
      PyTorchBaseline torch;
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
      auto step = [&] {
        kernels.forward();
        if (withBackward)
          kernels.backward();
      };
      double pairs = allowedPairs(c) * (double)(c.B * c.H);
      double flops = 2 * pairs * (double)(2 * c.D);
      if (withBackward)
        flops += 2 * pairs * (double)(4 * c.D);
      char label[128];
      std::snprintf(label, sizeof label, "B%lld H%lld T%lld S%lld D%lld%s, %s", (long long)c.B,
                    (long long)c.H, (long long)c.T, (long long)c.S, (long long)c.D,
                    c.causal ? " causal" : "", withBackward ? "forward+backward" : "forward");
      // The fused attention issue's goals, on one thread: forward >= 60% of the peak, forward
      // + backward >= 45%.
      bench::Goal goal;
      if (threads == 1)
        goal.peakPercent = withBackward ? 45 : 60;
      measure(label, torch, step, [&] { return kernels.loss(); }, flops, goal);

      // bf16 (docs/precision.md): the same step with the bf16 kernels, in turns with the f32
      // one, against the bf16 GEMM of this run; the goal is 60% of that peak, forward +
      // backward. Its loss agrees with f32's to bfloat16's precision, not 1e-4.
      if (!bf16Runs)
        continue;
      static const double bf16Peak = ::attn::driver::gemmGflops(1024, 7, /*bf16=*/true);
      auto bf16Step = [&] {
        kernels.forwardBf16();
        if (withBackward)
          kernels.backwardBf16();
      };
      double f32Loss = kernels.loss();
      bf16Step();
      double bf16Loss = kernels.loss();
      std::vector<double> tBf16, tF32;
      for (int r = 0; r < timing.reps; ++r) {
        bench::settle();
        tBf16.push_back(bench::perStep(timing.iters, bf16Step));
        bench::settle();
        tF32.push_back(bench::perStep(timing.iters, step));
      }
      double mBf16 = bench::median(tBf16), mF32 = bench::median(tF32);
      std::printf("  bf16 (bf16 GEMM 1024^3: %.1f GFLOP/s): attnc %.3f ms, %.1f GFLOP/s = %.1f%% "
                  "of the bf16 peak; %.2fx its f32 kernels; loss %.7g vs f32 %.7g\n",
                  bf16Peak, mBf16 * 1e3, flops / mBf16 / 1e9, 100 * flops / mBf16 / 1e9 / bf16Peak,
                  mF32 / mBf16, bf16Loss, f32Loss);
      std::printf("table: | attention kernels %s, bf16 (%% of the bf16 peak) | %d | %s | - | - | "
                  "%.2f (f32 / bf16) | %.1f%% | - | %s | %s |\n",
                  label, threads, bench::shortTime(mBf16).c_str(), mF32 / mBf16,
                  100 * flops / mBf16 / 1e9 / bf16Peak, withBackward ? "60%" : "-",
                  !withBackward ? "-" : flops / mBf16 / 1e9 / bf16Peak >= 0.6 ? "yes" : "no");
    }

  // The RNN decoder families, through the generated kernels.
  std::printf("an RNN decoder step's attention, f32: attnc's generated fused kernels (compiled "
              "@loss / @loss_grad) vs PyTorch's composite\n");
  for (const DecoderStep &c : steps)
    for (bool withBackward : {false, true}) {
      ::attn::Rng rng(7);
      CompiledStep compiled(c, rng);
      std::string dataFile = bench::tempDataFile("attn-bench-attention-kernels");
      {
        ::attn::checkpoint::Checkpoint ckpt;
        for (const auto &[name, tensor] : compiled.tensors)
          ckpt.tensors.push_back({name, tensor});
        ::attn::checkpoint::save(dataFile, ckpt);
      }
      PyTorchBaseline torch;
      torch.launch(python, script, {"--data",   dataFile,
                                    "--threads", std::to_string(threads),
                                    "--family", c.family,
                                    "--window", std::to_string(c.window),
                                    "--mode",   withBackward ? "backward" : "forward",
                                    "--warmup", std::to_string(timing.warmup),
                                    "--iters",  std::to_string(timing.iters)});
      std::remove(dataFile.c_str());
      auto step = [&] { compiled.run(withBackward); };
      std::string label = c.family + " B" + std::to_string(c.B) + " S" + std::to_string(c.S) +
                          " A" + std::to_string(c.A) + " Dv" + std::to_string(c.Dv) +
                          (c.family == "local_p" ? " window " + std::to_string(c.window) : "") +
                          (withBackward ? ", forward+backward" : ", forward");
      measure(label, torch, step, [&] { return (double)compiled.lastLoss; },
              compiled.flops(withBackward), bench::Goal());
    }
  return rc;
}
