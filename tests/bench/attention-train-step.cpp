// Benchmark: one teacher-forced training step of a Bahdanau encoder-decoder (task: seq2seq,
// model.attention: {type: bahdanau}; forward, backward, Adam), attnc's JIT-compiled
// @train_step against the same model in PyTorch with the decoder as a Python for-loop over the
// target positions, same weights, batches and thread count, in one run. Not a test; not run
// by ctest.
//
//   ninja -C build attn-bench-attention-train-step
//   OMP_NUM_THREADS=1 build/bin/attn-bench-attention-train-step
//   OMP_NUM_THREADS=2 build/bin/attn-bench-attention-train-step
//   ... [--config issue|same128|all] [--warmup N] [--reps N] [--iters N] [--breakdown]
//
// Sizes (the issue's): vocabularies 1000 (source and target), embedding 64, source and target
// length 30, batch 32, GRU cells, attention dim 256, Adam (lr 1e-3). Configurations (default:
// issue):
//   issue    encoder 128 x 2 directions (memory 256), decoder 256: rnn.hidden 128 and
//            model.seq2seq.decoder_hidden 256
//   same128  rnn.hidden 128: encoder 128 x 2 (memory 256), decoder 128
// Both are specs through the YAML frontend (parseSpecString, importSpec with ImportOptions set
// here: vocabularies 1000, lengths 30), compiled the way `attnc train` compiles
// (attn-fuse-recurrence, attn-autodiff, attn-train-step, attn-lower, JIT). The encoder is
// bidirectional, so the importer starts the decoder from a bridge
// s_0 = tanh(dense("bridge.layer0", [h_fwd; h_bwd])) in both. Rows are full length (src_mask all
// ones, no padding in targets), so the PyTorch side can use nn.GRU unpacked; the mask still
// goes to attnc.
//
// Both sides start from the same weights (attn::initParams, handed over by the importer's
// parameter names in a temporary safetensors file) and cycle through the same NB random
// batches; the step-1 loss must agree to 1e-4 relative (exit status 1 otherwise). Timing:
// warm-up, then repetitions of ITERS steps alternating attnc and PyTorch; medians per step. The
// PyTorch side is tests/bench/attention-train-step.py (/usr/bin/python3, or
// $ATTN_BENCH_PYTHON).
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Jit.h"
#include "compiler/Transforms/Passes.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "BenchSupport.h"

#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/Random.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"

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
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

constexpr int NB = 4; // fixed batches, cycled
constexpr float kLr = 1e-3f;

[[noreturn]] void die(const std::string &what) {
  bench::die("attn-bench-attention-train-step", what);
}

using bench::median;
using bench::PyTorchSide;
using bench::scalar;
using bench::seconds;

std::string spread(const std::vector<double> &v) { return bench::spread(v, 1e3, 1); }

struct Sizes {
  int64_t batch = 32, srcLen = 30, tgtLen = 30, srcVocab = 1000, tgtVocab = 1000, embed = 64,
          attDim = 256;
};

struct Config {
  std::string key, label;
  int64_t encHidden, decHidden;
};

// The spec (data: is required by the schema but unused: ImportOptions give the vocabularies
// and lengths, and the benchmark makes its own batches). The decoder is encHidden wide unless
// decHidden differs (model.seq2seq.decoder_hidden).
std::string specText(const Sizes &z, int64_t encHidden, int64_t decHidden) {
  std::string s = "name: bahdanau-bench\n"
                  "task: seq2seq\n"
                  "data: {builtin: copy, max_len: " + std::to_string(z.srcLen) + "}\n"
                  "model:\n"
                  "  embedding: {dim: " + std::to_string(z.embed) + "}\n"
                  "  rnn: {cell: gru, hidden: " + std::to_string(encHidden) +
                  ", bidirectional: true}\n";
  if (decHidden != encHidden)
    s += "  seq2seq: {decoder_hidden: " + std::to_string(decHidden) + "}\n";
  s += "  attention: {type: bahdanau, dim: " + std::to_string(z.attDim) + "}\n"
       "train:\n"
       "  batch_size: " + std::to_string(z.batch) + "\n"
       "  optimizer: {type: adam, lr: 0.001}\n";
  return s;
}

// One configuration's compiled train step, its parameters and step count.
struct AttnSide {
  std::unique_ptr<::attn::target::JitProgram> jit;
  std::unique_ptr<::attn::Program> program;
  std::vector<::attn::Tensor> params;
  std::vector<int> updateTarget;
  int64_t s = 0;
  std::vector<double> losses, times;
  double compileSeconds = 0;

  void build(mlir::MLIRContext &context, const Config &c, const Sizes &z) {
    double t0 = seconds();
    std::vector<::attn::yaml::Diagnostic> diags;
    auto spec = ::attn::yaml::parseSpecString(specText(z, c.encHidden, c.decHidden),
                                              "bahdanau-bench.yaml", diags);
    for (const auto &d : diags)
      std::fprintf(stderr, "%s\n", d.str().c_str());
    if (!spec)
      die("the benchmark's spec does not parse");
    ::attn::yaml::ImportOptions options;
    options.sourceVocab = z.srcVocab;
    options.targetVocab = z.tgtVocab;
    options.sourceLength = z.srcLen;
    options.targetLength = z.tgtLen;
    mlir::OwningOpRef<mlir::ModuleOp> module = ::attn::yaml::importSpec(*spec, context, options);
    if (!module || mlir::failed(mlir::verify(*module)))
      die("the " + c.key + " module does not verify");
    // As `attnc train`: fusion (nothing here is a plain one-cell scan), autodiff, Adam step.
    mlir::PassManager pm(&context);
    ::attn::pipelines::buildFusion(pm);
    pm.addPass(mlir::attn::createAttnAutodiff());
    mlir::attn::AttnTrainStepOptions adam;
    adam.optimizer = "adam";
    pm.addPass(mlir::attn::createAttnTrainStep(adam));
    if (mlir::failed(pm.run(*module)))
      die("attn-autodiff / attn-train-step failed");
    auto compiled =
        ::attn::target::JitProgram::compile(*module, "bahdanau-bench", "bench_" + c.key);
    if (!compiled)
      die("JIT failed: " + llvm::toString(compiled.takeError()));
    jit = std::move(*compiled);
    program = std::make_unique<::attn::Program>(jit->info());
    compileSeconds = seconds() - t0;
    const attn_program_info &info = program->info();
    const attn_entry_info &entry = program->entry("train_step");
    params = ::attn::initParams(info, /*seed=*/1);
    updateTarget.assign(entry.num_outputs, -1);
    for (int o = 2; o < entry.num_outputs; ++o) {
      std::string name = std::string(entry.outputs[o].name).substr(strlen("update:"));
      for (int p = 0; p < info.num_params; ++p)
        if (name == info.params[p].name)
          updateTarget[o] = p;
      if (updateTarget[o] < 0)
        die("no parameter for output " + std::string(entry.outputs[o].name));
    }
  }
  // batches[k]: src, src_mask, tgt_in, tgt_out
  void step(const std::vector<std::vector<::attn::Tensor>> &batches) {
    ++s;
    std::vector<::attn::Tensor> inputs = batches[(s - 1) % NB];
    inputs.push_back(scalar(kLr));
    inputs.push_back(scalar((float)s));
    std::vector<::attn::Tensor> outputs = program->call("train_step", params, inputs);
    losses.push_back(outputs[0].data<float>()[0]);
    for (size_t o = 2; o < outputs.size(); ++o)
      params[updateTarget[o]] = std::move(outputs[o]);
  }
  double rep(int iters, const std::vector<std::vector<::attn::Tensor>> &batches) {
    double start = seconds();
    for (int i = 0; i < iters; ++i)
      step(batches);
    return (seconds() - start) / iters;
  }
  // Median seconds of `entry` (loss: the forward; loss_grad: forward and backward) on batch 0.
  double timeEntry(const char *entry, int reps, int iters,
                   const std::vector<std::vector<::attn::Tensor>> &batches) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      double start = seconds();
      for (int i = 0; i < iters; ++i)
        program->call(entry, params, batches[0]);
      t.push_back((seconds() - start) / iters);
    }
    return median(t);
  }
};

::attn::Tensor asF32(const ::attn::Tensor &ids) {
  ::attn::Tensor t(ATTN_F32, ids.shape());
  for (int64_t i = 0; i < ids.numel(); ++i)
    t.data<float>()[i] = (float)ids.data<int32_t>()[i];
  return t;
}

void usage() {
  std::fprintf(stderr,
               "usage: attn-bench-attention-train-step [--config issue|same128|all] (issue)\n"
               "         [--warmup N] [--reps N] [--iters N] [--breakdown]\n"
               "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

struct Row {
  const Config *config;
  double attnMs, torchMs, rel, compile;
  bool haveTorch;
};

} // namespace

int main(int argc, char **argv) {
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/attention-train-step.py";
  const std::vector<Config> all = {
      {"same128", "rnn.hidden 128: encoder 128 x 2 (memory 256), decoder 128", 128, 128},
      {"issue",
       "rnn.hidden 128, seq2seq.decoder_hidden 256: encoder 128 x 2 (memory 256), decoder 256 "
       "(the issue's sizes)",
       128, 256},
  };
  std::string which = "issue";
  Sizes z;
  int warmup = 3, reps = 5, iters = 5;
  bool breakdown = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage();
      return argv[++i];
    };
    if (a == "--config")
      which = value();
    else if (a == "--warmup")
      warmup = std::atoi(value().c_str());
    else if (a == "--reps")
      reps = std::atoi(value().c_str());
    else if (a == "--iters")
      iters = std::atoi(value().c_str());
    else if (a == "--breakdown")
      breakdown = true;
    else
      usage();
  }
  std::vector<const Config *> configs;
  for (const Config &c : all)
    if (which == "all" || which == c.key)
      configs.push_back(&c);
  if (configs.empty() || warmup < 1 || reps < 1 || iters < 1)
    usage();
  const char *omp = std::getenv("OMP_NUM_THREADS");
  int threads = omp && std::atoi(omp) > 0 ? std::atoi(omp)
                                          : (int)std::max(1u, std::thread::hardware_concurrency());
  std::signal(SIGPIPE, SIG_IGN);
  const char *pyEnv = std::getenv("ATTN_BENCH_PYTHON");
  std::string python = pyEnv && *pyEnv ? pyEnv : "/usr/bin/python3";

  mlir::DialectRegistry registry;
  ::attn::pipelines::registerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::printf("Bahdanau seq2seq, teacher-forced train step (forward, backward, adam): batch %lld, "
              "source/target length %lld/%lld, vocab %lld/%lld, embedding %lld, GRU, "
              "attention dim %lld\n",
              (long long)z.batch, (long long)z.srcLen, (long long)z.tgtLen,
              (long long)z.srcVocab, (long long)z.tgtVocab, (long long)z.embed,
              (long long)z.attDim);
  std::printf("threads: %d (OMP_NUM_THREADS=%s, hardware threads: %u); timing: %d warm-up "
              "steps, %d interleaved repetitions x %d steps, median per step\n",
              threads, omp ? omp : "unset", std::thread::hardware_concurrency(), warmup, reps,
              iters);
  // NB random full-length batches: ids in [4, V) (0-3 are pad, bos, eos, unk), src_mask all
  // ones, tgt_in = bos y1 .. y(T-1), tgt_out = y1 .. yT.
  ::attn::Rng rng(42);
  auto id = [&](int64_t v) { return (int32_t)(4 + (int64_t)(rng.nextDouble() * (v - 4))); };
  std::vector<std::vector<::attn::Tensor>> batches;
  for (int k = 0; k < NB; ++k) {
    ::attn::Tensor src(ATTN_I32, {z.batch, z.srcLen}), mask(ATTN_F32, {z.batch, z.srcLen});
    ::attn::Tensor tin(ATTN_I32, {z.batch, z.tgtLen}), tout(ATTN_I32, {z.batch, z.tgtLen});
    for (int64_t i = 0; i < src.numel(); ++i) {
      src.data<int32_t>()[i] = id(z.srcVocab);
      mask.data<float>()[i] = 1.0f;
    }
    for (int64_t b = 0; b < z.batch; ++b)
      for (int64_t t = 0; t < z.tgtLen; ++t) {
        int32_t y = id(z.tgtVocab);
        tout.data<int32_t>()[b * z.tgtLen + t] = y;
        tin.data<int32_t>()[b * z.tgtLen + t] =
            t == 0 ? 1 : tout.data<int32_t>()[b * z.tgtLen + t - 1];
      }
    batches.push_back({std::move(src), std::move(mask), std::move(tin), std::move(tout)});
  }

  int rc = 0;
  std::vector<Row> rows;
  for (const Config *c : configs) {
    AttnSide side;
    side.build(context, *c, z);
    const attn_program_info &info = side.program->info();

    std::string dataFile = (std::filesystem::temp_directory_path() /
                            ("attn-bench-attention-" + std::to_string(getpid()) + ".safetensors"))
                               .string();
    {
      ::attn::checkpoint::Checkpoint ckpt;
      for (int p = 0; p < info.num_params; ++p)
        if (!std::strchr(info.params[p].name, '/'))
          ckpt.tensors.push_back({info.params[p].name, side.params[p]});
      for (int k = 0; k < NB; ++k) {
        std::string n = std::to_string(k);
        ckpt.tensors.push_back({"src" + n, asF32(batches[k][0])});
        ckpt.tensors.push_back({"src_mask" + n, batches[k][1]});
        ckpt.tensors.push_back({"tgt_in" + n, asF32(batches[k][2])});
        ckpt.tensors.push_back({"tgt_out" + n, asF32(batches[k][3])});
      }
      ::attn::checkpoint::save(dataFile, ckpt);
    }

    PyTorchSide torch;
    bool haveTorch = false;
    std::string torchNote, torchVersion;
    double torchFirstLoss = 0, torchWarmLoss = 0;
    auto str = [](int64_t v) { return std::to_string(v); };
    if (access(python.c_str(), X_OK) != 0)
      torchNote = python + " not found";
    else if (!torch.start({python, script, "--data", dataFile, "--threads", str(threads),
                           "--batch", str(z.batch), "--src-len", str(z.srcLen), "--tgt-len",
                           str(z.tgtLen), "--src-vocab", str(z.srcVocab), "--tgt-vocab",
                           str(z.tgtVocab), "--embed", str(z.embed), "--enc-hidden",
                           str(c->encHidden), "--dec-hidden", str(c->decHidden), "--att-dim",
                           str(z.attDim), "--batches", str(NB), "--lr", std::to_string(kLr),
                           "--warmup", str(warmup), "--iters", str(iters), "--serve"}))
      torchNote = "cannot start " + python;
    else {
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
    std::filesystem::remove(dataFile);

    for (int i = 0; i < warmup; ++i)
      side.step(batches);
    std::vector<double> tTorch;
    for (int r = 0; r < reps; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      side.times.push_back(side.rep(iters, batches));
      if (haveTorch) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        torch.send("rep");
        std::string line = torch.readLine();
        char *end = nullptr;
        double v = std::strtod(line.c_str(), &end);
        if (line.empty() || end == line.c_str())
          die("unexpected answer from the PyTorch side: '" + line + "'");
        tTorch.push_back(v);
      }
    }
    if (haveTorch) {
      torch.send("quit");
      torch.readLine();
      if (int code = torch.finish())
        std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);
    }

    std::printf("\n%s: %s (compile %.2f s)\n", c->key.c_str(), c->label.c_str(),
                side.compileSeconds);
    double first = side.losses.front(), mAttn = median(side.times);
    Row row{c, mAttn * 1e3, 0, 0, side.compileSeconds, haveTorch};
    std::printf("loss at step 1: attnc %.7g", first);
    if (haveTorch) {
      double rel = std::fabs(first - torchFirstLoss) / std::max(std::fabs(torchFirstLoss), 1e-6);
      bool ok = rel < 1e-4;
      row.rel = rel;
      std::printf(", PyTorch %.7g (rel diff %.2g, %s)", torchFirstLoss, rel,
                  ok ? "ok, < 1e-4" : "MISMATCH, >= 1e-4");
      if (!ok)
        rc = 1;
      std::printf("; at step %d: attnc %.7g, PyTorch %.7g", warmup, side.losses[warmup - 1],
                  torchWarmLoss);
    }
    std::printf("\n  attnc   : %9.1f ms/step  %s\n", mAttn * 1e3, spread(side.times).c_str());
    if (haveTorch) {
      double mTorch = median(tTorch);
      row.torchMs = mTorch * 1e3;
      std::printf("  PyTorch : %9.1f ms/step  %s\n", mTorch * 1e3, spread(tTorch).c_str());
      std::printf("  (torch %s, eager: nn.GRU encoder, Python loop of nn.GRUCell + additive "
                  "attention, torch.optim.Adam)\n",
                  torchVersion.c_str());
      std::printf("%s pytorch/attnc time ratio: %.2f\n", c->key.c_str(), mTorch / mAttn);
    } else {
      std::printf("note: no PyTorch comparison: %s\n", torchNote.c_str());
    }
    if (breakdown) {
      // attnc alone, by entry: @loss (forward), @loss_grad (forward + backward), @train_step
      // (that, the gradient norm and Adam).
      double fwd = side.timeEntry("loss", reps, iters, batches);
      double grad = side.timeEntry("loss_grad", reps, iters, batches);
      std::printf("  attnc by entry: forward (@loss) %.1f ms, backward (@loss_grad - @loss) "
                  "%.1f ms, norm + adam (@train_step - @loss_grad) %.1f ms\n",
                  fwd * 1e3, (grad - fwd) * 1e3, (mAttn - grad) * 1e3);
    }
    rows.push_back(row);
  }

  std::printf("\nsummary (%d thread%s; ratio above 1: attnc faster; target: 3)\n", threads,
              threads == 1 ? "" : "s");
  std::printf("  %-8s %-10s %-10s %12s %12s %8s\n", "config", "encoder", "decoder",
              "attnc ms", "PyTorch ms", "ratio");
  for (const Row &r : rows) {
    std::string enc = std::to_string(r.config->encHidden) + " x 2";
    if (r.haveTorch)
      std::printf("  %-8s %-10s %-10lld %12.1f %12.1f %8.2f\n", r.config->key.c_str(),
                  enc.c_str(), (long long)r.config->decHidden, r.attnMs, r.torchMs,
                  r.torchMs / r.attnMs);
    else
      std::printf("  %-8s %-10s %-10lld %12.1f %12s %8s\n", r.config->key.c_str(), enc.c_str(),
                  (long long)r.config->decHidden, r.attnMs, "-", "-");
  }
  return rc;
}
