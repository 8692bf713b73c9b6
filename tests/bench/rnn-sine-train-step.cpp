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
#include "compiler/Target/Jit.h"
#include "compiler/Pipelines/Pipelines.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "BenchSupport.h"

#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/data/Sine.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int NB = 8; // fixed batches, cycled

[[noreturn]] void die(const std::string &what) { bench::die("attn-bench-rnn-sine-train-step", what); }

using bench::median;
using bench::PyTorchSide;
using bench::scalar;
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
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/rnn-sine.yaml";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/rnn-sine-train-step.py";
  std::vector<::attn::yaml::Override> overrides;
  int warmup = 20, reps = 15, iters = 50;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage();
      return argv[++i];
    };
    if (a == "--model")
      model = value();
    else if (a == "--set") {
      std::string kv = value();
      size_t eq = kv.find('=');
      if (eq == std::string::npos)
        usage();
      overrides.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
    } else if (a == "--warmup")
      warmup = std::atoi(value().c_str());
    else if (a == "--reps")
      reps = std::atoi(value().c_str());
    else if (a == "--iters")
      iters = std::atoi(value().c_str());
    else
      usage();
  }
  if (warmup < 1 || reps < 1 || iters < 1)
    usage();
  const char *omp = std::getenv("OMP_NUM_THREADS");
  int threads = omp && std::atoi(omp) > 0 ? std::atoi(omp)
                                          : (int)std::max(1u, std::thread::hardware_concurrency());

  // ---- attnc: the spec, @loss_grad and @train_step as `attnc train` builds them, JIT ----
  std::vector<::attn::yaml::Diagnostic> diags;
  auto spec = ::attn::yaml::parseSpecFile(model, overrides, diags);
  for (const auto &d : diags)
    std::fprintf(stderr, "%s\n", d.str().c_str());
  if (!spec)
    return 1;
  if (!spec->model.rnn || spec->model.output.size != 1)
    die(model + ": the benchmark needs an rnn model with model.output.size 1");
  const auto &t = spec->train;
  int64_t batch = t.batchSize, window = spec->data.window, hidden = spec->model.rnn->hidden,
          layers = spec->model.rnn->layers;

  mlir::DialectRegistry registry;
  ::attn::pipelines::registerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  double t0 = seconds();
  auto module = ::attn::yaml::importSpec(*spec, context);
  if (!module || mlir::failed(mlir::verify(*module)))
    die("the imported module does not verify");
  mlir::PassManager pm(&context);
  ::attn::yaml::addTrainingPasses(pm, t);
  if (mlir::failed(pm.run(*module)))
    die("attn-autodiff / attn-train-step failed");
  auto jit =
      ::attn::target::JitProgram::compile(*module, spec->name, ::attn::yaml::cName(spec->name));
  if (!jit)
    die("JIT failed: " + llvm::toString(jit.takeError()));
  double compileSeconds = seconds() - t0;
  ::attn::Program program((*jit)->info());
  const attn_program_info &info = program.info();
  const attn_entry_info &entry = program.entry("train_step");

  // ---- parameters and NB fixed batches of builtin sine training data ----
  std::vector<::attn::Tensor> params = ::attn::initParams(info, t.seed);
  auto sine = ::attn::data::makeSine(window, batch * NB, spec->data.seed);
  std::vector<::attn::Tensor> xs, ys;
  for (int k = 0; k < NB; ++k) {
    ::attn::Tensor x(ATTN_F32, {batch, window, 1}), y(ATTN_F32, {batch, 1});
    std::memcpy(x.raw(), sine.x.data<float>() + k * batch * window, x.nbytes());
    std::memcpy(y.raw(), sine.y.data<float>() + k * batch, y.nbytes());
    xs.push_back(std::move(x));
    ys.push_back(std::move(y));
  }
  std::vector<int> updateTarget(entry.num_outputs, -1);
  for (int o = 2; o < entry.num_outputs; ++o) {
    std::string name = std::string(entry.outputs[o].name).substr(strlen("update:"));
    for (int p = 0; p < info.num_params; ++p)
      if (name == info.params[p].name)
        updateTarget[o] = p;
    if (updateTarget[o] < 0)
      die("no parameter for output " + std::string(entry.outputs[o].name));
  }

  // The weights (not the optimizer state) and the batches, for the PyTorch side.
  std::string dataFile = (std::filesystem::temp_directory_path() /
                          ("attn-bench-rnn-sine-" + std::to_string(getpid()) + ".safetensors"))
                             .string();
  {
    ::attn::checkpoint::Checkpoint ckpt;
    for (int p = 0; p < info.num_params; ++p)
      if (!std::strchr(info.params[p].name, '/'))
        ckpt.tensors.push_back({info.params[p].name, params[p]});
    for (int k = 0; k < NB; ++k) {
      ckpt.tensors.push_back({"x" + std::to_string(k), xs[k]});
      ckpt.tensors.push_back({"target" + std::to_string(k), ys[k]});
    }
    ::attn::checkpoint::save(dataFile, ckpt);
  }

  const float lr = (float)t.optimizer.lr;
  int64_t s = 0; // the 1-based step count of the last step taken
  std::vector<double> lossAt;
  auto attnStep = [&] {
    ++s;
    int k = (int)((s - 1) % NB);
    std::vector<::attn::Tensor> outputs =
        program.call("train_step", params, {xs[k], ys[k], scalar(lr), scalar((float)s)});
    lossAt.push_back(outputs[0].data<float>()[0]);
    for (int o = 2; o < entry.num_outputs; ++o)
      params[updateTarget[o]] = std::move(outputs[o]);
  };
  auto attnRep = [&] {
    double start = seconds();
    for (int i = 0; i < iters; ++i)
      attnStep();
    return (seconds() - start) / iters;
  };

  // ---- PyTorch side ----
  const char *pyEnv = std::getenv("ATTN_BENCH_PYTHON");
  std::string python = pyEnv && *pyEnv ? pyEnv : "/usr/bin/python3";
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::string(buf);
  };
  std::signal(SIGPIPE, SIG_IGN);
  PyTorchSide torch;
  std::string torchNote;
  bool haveTorch = false;
  double torchFirstLoss = 0, torchWarmLoss = 0;
  std::string torchVersion;
  if (t.optimizer.type != "adam")
    torchNote = "the PyTorch side implements only adam (train.optimizer.type is " +
                t.optimizer.type + ")";
  else if (access(python.c_str(), X_OK) != 0)
    torchNote = python + " not found";
  else if (!torch.start({python, script, "--data", dataFile, "--threads",
                         std::to_string(threads), "--batch", std::to_string(batch), "--window",
                         std::to_string(window), "--hidden", std::to_string(hidden),
                         "--layers", std::to_string(layers), "--batches", std::to_string(NB),
                         "--lr", num(lr), "--beta1", num(t.optimizer.beta1), "--beta2",
                         num(t.optimizer.beta2), "--eps", num(t.optimizer.epsilon),
                         "--weight-decay", num(t.optimizer.weightDecay), "--clip-norm",
                         num(t.clipNorm), "--warmup", std::to_string(warmup), "--iters",
                         std::to_string(iters), "--serve"}))
    torchNote = "cannot start " + python;
  else {
    // "ready TORCH_VERSION FIRST_LOSS LAST_WARMUP_LOSS" after its warm-up, or "error: ...".
    std::string line = torch.readLine();
    char version[64];
    if (std::sscanf(line.c_str(), "ready %63s %lf %lf", version, &torchFirstLoss,
                    &torchWarmLoss) == 3) {
      haveTorch = true;
      torchVersion = version;
    } else {
      torchNote = line.empty() ? python + " " + script + " exited without answering" : line;
      torch.finish();
    }
  }

  // ---- warm-up, then interleaved repetitions ----
  for (int i = 0; i < warmup; ++i)
    attnStep();
  double attnFirstLoss = lossAt.front(), attnWarmLoss = lossAt.back();
  std::vector<double> tAttn, tTorch;
  for (int r = 0; r < reps; ++r) {
    tAttn.push_back(attnRep());
    if (haveTorch) {
      // Let OpenMP worker threads of the side that just ran stop spinning before timing the
      // other one (libgomp spins for a while after each parallel region).
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      torch.send("rep");
      std::string line = torch.readLine();
      char *end = nullptr;
      double v = std::strtod(line.c_str(), &end);
      if (line.empty() || end == line.c_str())
        die("unexpected answer from the PyTorch side: '" + line + "'");
      tTorch.push_back(v);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  int rc = 0;
  if (haveTorch) {
    torch.send("quit");
    torch.readLine(); // its own summary
    if (int code = torch.finish())
      std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);
  }
  std::filesystem::remove(dataFile);

  double mAttn = median(tAttn);
  std::printf("%s: train step (forward, backward, %s), batch %lld, window %lld, hidden %lld, "
              "layers %lld\n",
              spec->name.c_str(), t.optimizer.type.c_str(), (long long)batch, (long long)window,
              (long long)hidden, (long long)layers);
  std::printf("threads: %d (OMP_NUM_THREADS=%s, hardware threads: %u)\n", threads,
              omp ? omp : "unset", std::thread::hardware_concurrency());
  std::printf("attnc compile (import + autodiff + train-step + lower + JIT): %.2f s\n",
              compileSeconds);
  std::printf("timing: %d warm-up steps, %d interleaved repetitions x %d steps, median per step\n",
              warmup, reps, iters);
  if (haveTorch) {
    double rel = std::fabs(attnFirstLoss - torchFirstLoss) / std::max(std::fabs(torchFirstLoss), 1e-6);
    bool ok = rel < 1e-4;
    std::printf("loss at step 1: attnc %.7g, PyTorch %.7g (rel diff %.2g, %s); at step %d: "
                "attnc %.7g, PyTorch %.7g\n",
                attnFirstLoss, torchFirstLoss, rel, ok ? "ok, < 1e-4" : "MISMATCH, >= 1e-4",
                warmup, attnWarmLoss, torchWarmLoss);
    double mTorch = median(tTorch);
    std::printf("  attnc          : %9.1f us/step  %s\n", mAttn * 1e6, spread(tAttn).c_str());
    std::printf("  PyTorch        : %9.1f us/step  %s\n", mTorch * 1e6, spread(tTorch).c_str());
    std::printf("  (PyTorch: torch %s, eager nn.RNN + nn.Linear, torch.optim.Adam)\n",
                torchVersion.c_str());
    std::printf("pytorch/attnc time ratio: %.2f\n", mTorch / mAttn);
    rc = ok ? 0 : 1;
  } else {
    std::printf("  attnc          : %9.1f us/step  %s\n", mAttn * 1e6, spread(tAttn).c_str());
    std::printf("note: no PyTorch comparison: %s\n  (install it with: apt-get install -y "
                "python3-torch python3-numpy libopenblas0-openmp)\n",
                torchNote.c_str());
  }
  return rc;
}
