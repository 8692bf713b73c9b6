// Benchmark: softmax(A x B), A and B 512x512 f32, attnc's JIT-compiled code vs. oneDNN called
// directly (matmul primitive + softmax primitive on axis 1) and vs. PyTorch
// (torch.softmax(torch.mm(a, b), 1) via /usr/bin/python3 tests/bench/matmul-softmax.py, with
// glibc's malloc and with tcmalloc). Not a test; not run by ctest.
//
//   build/bin/attn-bench-matmul-softmax                     # oneDNN's default thread count
//   OMP_NUM_THREADS=1 build/bin/attn-bench-matmul-softmax   # single-threaded
//
// FLOPs counted per call: 2*N^3 for the matmul plus 5*N^2 for the softmax (max, subtract, exp,
// sum, divide: one each per element); the fraction of the GEMM peak (oneDNN's 1024^3 f32 GEMM
// measured in the same run) counts the program's matmul FLOPs (bench::entryFlops). Each repetition times ITERS back-to-back calls; attnc and
// oneDNN repetitions are interleaved and the medians are reported.


#include "BenchSupport.h"

#include "attn/Program.h"
#include "attn/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "oneapi/dnnl/dnnl.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr int64_t N = 512;
constexpr int WARMUP = 3;
constexpr int REPS = 15;
constexpr int ITERS = 5;

const char *kSource = R"mlir(
func.func @forward(%a: tensor<512x512xf32> {attn.name = "a"},
                   %b: tensor<512x512xf32> {attn.name = "b"})
    -> (tensor<512x512xf32> {attn.name = "y"}) {
  %m = attn.matmul %a, %b : tensor<512x512xf32>, tensor<512x512xf32>
  %y = attn.softmax %m : tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
)mlir";

using bench::die;
using bench::median;
using bench::seconds;

} // namespace

int main() {
  bench::programName = "attn-bench-matmul-softmax";
  // ---- attnc: parse, lower, JIT ----
  ::attn::driver::Session session;
  double t0 = seconds();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kSource, &session.context());
  if (!module)
    die("cannot parse the benchmark module");
  const double matmulFlops = bench::entryFlops(*module)["forward"];
  session.setModule(std::move(module), "bench");
  std::unique_ptr<::attn::driver::Model> model = session.loadModel();
  if (!model)
    return 1;
  double compileSeconds = seconds() - t0;
  const ::attn::Program &program = *model->program;
  const attn_entry_info &entry = program.entry("forward");
  if (program.info().num_params != 0 || entry.num_inputs != 2 || entry.num_outputs != 1)
    die("unexpected manifest");
  attn_entry_fn fn = entry.fn;

  // ---- data: A in 0.05 * U(-1, 1) (keeps the softmax non-degenerate), B in U(-1, 1) ----
  ::attn::Tensor a(ATTN_F32, {N, N}), b(ATTN_F32, {N, N}), yAttn(ATTN_F32, {N, N}),
      yDnnl(ATTN_F32, {N, N});
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < N * N; ++i)
    a.data<float>()[i] = 0.05f * uniform(rng);
  for (int64_t i = 0; i < N * N; ++i)
    b.data<float>()[i] = uniform(rng);

  void *args[] = {a.raw(), b.raw(), yAttn.raw()};
  auto runAttn = [&] { fn(args); };

  // ---- oneDNN: matmul then in-place softmax on axis 1, primitives created once ----
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  dnnl::memory::desc md({N, N}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  dnnl::memory memA(md, eng, a.raw()), memB(md, eng, b.raw()), memY(md, eng, yDnnl.raw());
  dnnl::matmul matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
  dnnl::softmax_forward softmax(dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), eng));
  auto runDnnl = [&] {
    matmul.execute(strm, {{DNNL_ARG_SRC, memA}, {DNNL_ARG_WEIGHTS, memB}, {DNNL_ARG_DST, memY}});
    softmax.execute(strm, {{DNNL_ARG_SRC, memY}, {DNNL_ARG_DST, memY}});
    strm.wait();
  };

  // ---- agreement ----
  runAttn();
  runDnnl();
  double maxDiff = 0.0, ySum = 0.0, yMax = 0.0;
  for (int64_t i = 0; i < N * N; ++i) {
    double x = yAttn.data<float>()[i];
    maxDiff = std::max(maxDiff, std::fabs(x - (double)yDnnl.data<float>()[i]));
    ySum += x;
    yMax = std::max(yMax, x);
  }

  // ---- PyTorch ----
  std::string dataFile = bench::tempDataFile("attn-bench-matmul-softmax");
  {
    ::attn::checkpoint::Checkpoint ckpt;
    ckpt.tensors = {{"a", a}, {"b", b}};
    ::attn::checkpoint::save(dataFile, ckpt);
  }
  bench::PyTorchBaseline torch;
  torch.launch(bench::benchPython(), std::string(ATTN_SOURCE_DIR) + "/tests/bench/matmul-softmax.py",
               {"--data", dataFile, "--threads", std::to_string(bench::threadCount()), "--warmup",
                std::to_string(WARMUP), "--iters", std::to_string(ITERS)});
  std::remove(dataFile.c_str());
  double firstColumn = 0; // the PyTorch side's "loss": the sum of y's first column
  for (int64_t i = 0; i < N; ++i)
    firstColumn += yAttn.data<float>()[i * N];

  // ---- timing ----
  for (int i = 0; i < WARMUP; ++i) {
    runAttn();
    runDnnl();
  }
  auto timeOnce = [](auto &f) {
    double s = seconds();
    for (int i = 0; i < ITERS; ++i)
      f();
    return (seconds() - s) / ITERS;
  };
  std::vector<double> tAttn, tDnnl;
  for (int r = 0; r < REPS; ++r) {
    bench::settle(); // PyTorch's threads, which spin a while after its repetition
    tAttn.push_back(timeOnce(runAttn));
    tDnnl.push_back(timeOnce(runDnnl));
    torch.rep();
  }
  double mAttn = median(tAttn), mDnnl = median(tDnnl), mTorch = torch.bestSeconds();
  torch.quit();

  const double flops = 2.0 * N * N * N + 5.0 * N * N;
  const char *omp = std::getenv("OMP_NUM_THREADS");
  std::printf("softmax(A x B), A, B: %lldx%lld f32, softmax on axis 1\n", (long long)N,
              (long long)N);
  std::printf("threads: OMP_NUM_THREADS=%s (hardware threads: %u)\n", omp ? omp : "unset",
              std::thread::hardware_concurrency());
  std::printf("attnc compile (parse + lower + JIT): %.2f s\n", compileSeconds);
  std::printf("max abs diff attnc vs oneDNN: %.3g %s (row sum of y: %.4f, max y: %.4g)\n",
              maxDiff, maxDiff < 1e-4 ? "(ok, < 1e-4)" : "(MISMATCH, >= 1e-4)", ySum / N,
              yMax);
  std::printf("FLOPs per call: 2*N^3 + 5*N^2 = %.0f (matmul + softmax)\n", flops);
  std::printf("timing: %d warm-up, %d interleaved repetitions x %d calls, median per call\n",
              WARMUP, REPS, ITERS);
  std::printf("  attnc : %8.3f ms  %7.2f GFLOP/s\n", mAttn * 1e3, flops / mAttn * 1e-9);
  std::printf("  oneDNN: %8.3f ms  %7.2f GFLOP/s\n", mDnnl * 1e3, flops / mDnnl * 1e-9);
  std::printf("attnc/oneDNN time ratio: %.2f\n", mAttn / mDnnl);
  bool agree = maxDiff < 1e-4;
  if (torch.ready) {
    std::printf("  PyTorch at its best: %8.3f ms  %7.2f GFLOP/s", mTorch * 1e3,
                flops / mTorch * 1e-9);
    std::printf(" (sum of y's first column: attnc %.7g", firstColumn);
    agree = bench::printLossAgreement(firstColumn, torch.firstLoss) && agree;
    std::printf(")\n");
    torch.printAllocators("    ", 1e3, "ms");
    std::printf("pytorch/attnc time ratio: %.2f\n", mTorch / mAttn);
  } else {
    std::printf("note: no PyTorch comparison: %s\n", torch.note.c_str());
  }
  bench::Calibration calibration = bench::calibrate(torch);
  calibration.print(bench::threadCount());
  calibration.printRates("call", matmulFlops, mAttn, mTorch);
  bench::printTableRow(calibration, "matmul + softmax 512^2 (vs oneDNN called directly)",
                       matmulFlops, mAttn, nullptr, {}, true, "oneDNN", mDnnl);
  bench::printTableRow(calibration, "matmul + softmax 512^2", matmulFlops, mAttn, &torch);
  return agree ? 0 : 1;
}
