// Benchmark: one training step of models/rnn-sine.yaml (forward, backward, Adam update), attnc's
// JIT-compiled @train_step against PyTorch's eager nn.RNN + nn.Linear + torch.optim.Adam on the
// same sizes, parameters and batches. Not a test; not run by ctest.
//
//   build/bin/attn-bench-rnn-sine-train-step                       # default threads
//   OMP_NUM_THREADS=1 build/bin/attn-bench-rnn-sine-train-step     # one thread, both sides
//   OMP_NUM_THREADS=2 build/bin/attn-bench-rnn-sine-train-step     # two threads, both sides
//   ... [--set KEY=VALUE]... [--reps N] [--iters N] [--warmup N] [--model FILE.yaml]
//
// attnc: the model compiled the way `attnc train` does it (frontend, attn-autodiff,
// attn-train-step with the spec's optimizer, attn-lower, JIT), called as the trainer calls it
// (Program::call("train_step"), then the `update:*` outputs moved into the parameters).
// PyTorch: tests/bench/rnn-sine-train-step.py run by /usr/bin/python3 (or $ATTN_BENCH_PYTHON)
// as a subprocess with torch.set_num_threads(OMP_NUM_THREADS, else the hardware thread
// count); it reads the initial parameters and the batches from a temporary safetensors file
// and is driven over a pipe, so that the repetitions of both sides interleave.
//
// Both start from the same parameters (attn::initParams with train.seed) and step through the
// same NB fixed batches of builtin sine data (step s uses batch (s - 1) % NB), so their losses
// agree: the first step's loss (before any update) is checked to 1e-4 relative, and the loss of
// the last warm-up step is printed for both. Timing: WARMUP steps, then REPS repetitions of
// ITERS steps for attnc and for PyTorch alternately; reported is the median time per step.
// If /usr/bin/python3 has no torch, only attnc's time is printed (with a note).
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "BenchSupport.h"

#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/data/Sine.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr int NB = 8; // fixed batches, cycled

using bench::die;
using bench::median;
using bench::PyTorchBaseline;
using bench::seconds;

std::string spread(const std::vector<double> &v) { return bench::spread(v, 1e6, 1); }

void usage() {
  std::fprintf(stderr,
               "usage: attn-bench-rnn-sine-train-step [--model FILE.yaml] [--set KEY=VALUE]...\n"
               "         [--warmup N] [--reps N] [--iters N]\n"
               "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-rnn-sine-train-step";
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/rnn-sine.yaml";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/rnn-sine-train-step.py";
  std::vector<::attn::yaml::Override> overrides;
  bench::Timing timing{/*warmup=*/20, /*reps=*/15, /*iters=*/50};
  for (bench::Args args(argc, argv, usage); args.next();) {
    if (args.flag == "--model")
      model = args.value();
    else if (args.flag == "--set") {
      std::string kv = args.value();
      size_t eq = kv.find('=');
      if (eq == std::string::npos)
        usage();
      overrides.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
    } else if (!timing.parse(args))
      usage();
  }
  if (!timing.valid())
    usage();
  const int warmup = timing.warmup, reps = timing.reps, iters = timing.iters;
  int threads = bench::threadCount();

  // ---- attnc: the spec, @loss_grad and @train_step as `attnc train` builds them, JIT ----
  double t0 = seconds();
  auto session = bench::newSession();
  if (!session->loadSpec(model, overrides))
    return 1;
  const ::attn::yaml::Spec *spec = &session->spec();
  if (!spec->model.rnn || spec->model.output.size != 1)
    die(model + ": the benchmark needs an rnn model with model.output.size 1");
  const auto &t = spec->train;
  int64_t batch = t.batchSize, window = spec->data.window, hidden = spec->model.rnn->hidden,
          layers = spec->model.rnn->layers;

  bench::TrainStepProgram train(std::move(session), t.seed, t0);

  // ---- NB fixed batches of builtin sine training data ----
  auto sine = ::attn::data::makeSine(window, batch * NB, spec->data.seed);
  std::vector<::attn::Tensor> xs, ys;
  for (int k = 0; k < NB; ++k) {
    ::attn::Tensor x(ATTN_F32, {batch, window, 1}), y(ATTN_F32, {batch, 1});
    std::memcpy(x.raw(), sine.x.data<float>() + k * batch * window, x.nbytes());
    std::memcpy(y.raw(), sine.y.data<float>() + k * batch, y.nbytes());
    xs.push_back(std::move(x));
    ys.push_back(std::move(y));
  }

  // The weights (not the optimizer state) and the batches, for the PyTorch side.
  std::string dataFile = bench::tempDataFile("attn-bench-rnn-sine");
  {
    ::attn::checkpoint::Checkpoint ckpt = train.weights();
    for (int k = 0; k < NB; ++k) {
      ckpt.tensors.push_back({"x" + std::to_string(k), xs[k]});
      ckpt.tensors.push_back({"target" + std::to_string(k), ys[k]});
    }
    ::attn::checkpoint::save(dataFile, ckpt);
  }

  const float lr = (float)t.optimizer.lr;
  auto attnStep = [&] {
    int k = (int)(train.steps % NB); // step s uses batch (s - 1) % NB
    train.step({xs[k], ys[k]}, lr);
  };

  // ---- PyTorch side ----
  std::string python = bench::benchPython();
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::string(buf);
  };
  PyTorchBaseline torch;
  if (t.optimizer.type != ::attn::yaml::Optimizer::Adam)
    torch.note = "the PyTorch side implements only adam (train.optimizer.type is " +
                 ::attn::yaml::nameOf(t.optimizer.type) + ")";
  else
    torch.launch(python, script,
                 {"--data", dataFile, "--threads", std::to_string(threads), "--batch",
                  std::to_string(batch), "--window", std::to_string(window), "--hidden",
                  std::to_string(hidden), "--layers", std::to_string(layers), "--batches",
                  std::to_string(NB), "--lr", num(lr), "--beta1", num(t.optimizer.beta1),
                  "--beta2", num(t.optimizer.beta2), "--eps", num(t.optimizer.epsilon),
                  "--weight-decay", num(t.optimizer.weightDecay), "--clip-norm",
                  num(t.clipNorm), "--warmup", std::to_string(warmup), "--iters",
                  std::to_string(iters)});
  bool haveTorch = torch.ready;
  bench::Calibration calibration = bench::calibrate(torch);

  // ---- warm-up, then interleaved repetitions ----
  for (int i = 0; i < warmup; ++i)
    attnStep();
  double attnFirstLoss = train.losses.front(), attnWarmLoss = train.losses.back();
  std::vector<double> tAttn, tTorch;
  for (int r = 0; r < reps; ++r) {
    tAttn.push_back(bench::perStep(iters, attnStep));
    if (haveTorch) {
      torch.rep();
      bench::settle();
    }
  }
  tTorch = torch.bestTimes();
  int rc = 0;
  if (haveTorch)
    if (int code = torch.quit())
      std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);
  std::filesystem::remove(dataFile);

  double mAttn = median(tAttn);
  std::printf("%s: train step (forward, backward, %s), batch %lld, window %lld, hidden %lld, "
              "layers %lld\n",
              spec->name.c_str(), ::attn::yaml::nameOf(t.optimizer.type).c_str(), (long long)batch,
              (long long)window, (long long)hidden, (long long)layers);
  std::printf("%s\n", bench::threadsNote().c_str());
  std::printf("attnc compile (import + autodiff + train-step + lower + JIT): %.2f s\n",
              train.compileSeconds);
  std::printf("%s\n", timing.describe().c_str());
  calibration.print(threads);
  calibration.printRates("step", train.flops["train_step"], mAttn, haveTorch ? median(tTorch) : 0);
  if (haveTorch) {
    std::printf("loss at step 1: attnc %.7g", attnFirstLoss);
    bool ok = bench::printLossAgreement(attnFirstLoss, torch.firstLoss);
    std::printf("; at step %d: attnc %.7g, PyTorch %.7g\n", warmup, attnWarmLoss,
                torch.warmLoss);
    double mTorch = median(tTorch);
    std::printf("  attnc          : %9.1f us/step  %s\n", mAttn * 1e6, spread(tAttn).c_str());
    std::printf("  PyTorch        : %9.1f us/step  %s, at its best\n", mTorch * 1e6,
                spread(tTorch).c_str());
    torch.printAllocators("    ", 1e6, "us");
    std::printf("  (PyTorch: torch %s, eager nn.RNN + nn.Linear, torch.optim.Adam)\n",
                torch.version.c_str());
    std::printf("pytorch/attnc time ratio: %.2f\n", mTorch / mAttn);
    rc = ok ? 0 : 1;
  } else {
    std::printf("  attnc          : %9.1f us/step  %s\n", mAttn * 1e6, spread(tAttn).c_str());
    std::printf("note: no PyTorch comparison: %s\n  (install it with: apt-get install -y "
                "python3-torch python3-numpy libopenblas0-openmp)\n",
                torch.note.c_str());
  }
  bench::printTableRow(calibration, spec->name + " train step", train.flops["train_step"], mAttn,
                       &torch);
  return rc;
}
