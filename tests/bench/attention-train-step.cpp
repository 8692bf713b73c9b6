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
//       [--no-hoist]
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
// $ATTN_BENCH_PYTHON). Then, on a CPU with AVX512_BF16, each configuration's step in bf16
// (train.precision: bf16: the encoder's GRU on oneDNN's bf16 RNN primitives, the decoder
// scan's products in bf16) in turns with the f32 one, against PyTorch's step under
// torch.autocast('cpu', dtype=torch.bfloat16) and the bf16 GEMM peak.
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "BenchSupport.h"

#include "attn/Cpu.h"
#include "attn/Program.h"
#include "attn/Tensor.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr int NB = 4; // fixed batches, cycled
constexpr float kLr = 1e-3f;

using bench::die;
using bench::median;
using bench::PyTorchBaseline;
using bench::seconds;
using bench::TrainStepProgram;

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

// One configuration's train step compiled as `attnc train` compiles it: fusion (nothing here is
// a plain one-cell scan), hoisting out of the scans (unless `hoist` is false: `attnc
// --no-fuse=hoist`), autodiff, Adam step, JIT.
TrainStepProgram compileConfig(const Config &c, const Sizes &z, bool hoist,
                               const std::string &precision = "f32") {
  double t0 = seconds();
  auto session = bench::newSession(/*fuse=*/true, hoist, /*fuseRecurrence=*/true, precision);
  if (!session->loadSpecText(specText(z, c.encHidden, c.decHidden), "bahdanau-bench.yaml"))
    die("the benchmark's spec does not parse");
  ::attn::yaml::ImportOptions options;
  options.sourceVocab = z.srcVocab;
  options.targetVocab = z.tgtVocab;
  options.sourceLength = z.srcLen;
  options.targetLength = z.tgtLen;
  session->setImportOptions(options);
  return TrainStepProgram(std::move(session), /*seed=*/1, t0);
}

// Median seconds of `entry` (loss: the forward; loss_grad: forward and backward) on batch 0.
double timeEntry(TrainStepProgram &side, const char *entry, int reps, int iters,
                 const std::vector<std::vector<::attn::Tensor>> &batches) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r)
    t.push_back(bench::perStep(iters, [&] { side.program->call(entry, side.params(), batches[0]); }));
  return median(t);
}

void usage() {
  std::fprintf(stderr,
               "usage: attn-bench-attention-train-step [--config issue|same128|all] (issue)\n"
               "         [--warmup N] [--reps N] [--iters N] [--breakdown] [--no-hoist]\n"
               "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

struct Row {
  const Config *config;
  double attnMs, torchMs, compile;
  bool haveTorch;
  double peakPercent = 0; // attnc's share of the GEMM peak
};

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-attention-train-step";
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
  bench::Timing timing{/*warmup=*/3, /*reps=*/5, /*iters=*/5};
  bool breakdown = false, hoist = true;
  // bf16 where the CPU has it (oneDNN would emulate its instructions elsewhere).
  bool bf16 = bench::runsBf16("the bf16 rows");
  for (bench::Args args(argc, argv, usage); args.next();) {
    if (args.flag == "--config")
      which = args.value();
    else if (args.flag == "--breakdown")
      breakdown = true;
    else if (args.flag == "--no-hoist")
      hoist = false;
    else if (!timing.parse(args))
      usage();
  }
  const int warmup = timing.warmup, reps = timing.reps, iters = timing.iters;
  std::vector<const Config *> configs;
  for (const Config &c : all)
    if (which == "all" || which == c.key)
      configs.push_back(&c);
  if (configs.empty() || !timing.valid())
    usage();
  int threads = bench::threadCount();
  std::string python = bench::benchPython();

  std::printf("Bahdanau seq2seq, teacher-forced train step (forward, backward, adam): batch %lld, "
              "source/target length %lld/%lld, vocab %lld/%lld, embedding %lld, GRU, "
              "attention dim %lld\n",
              (long long)z.batch, (long long)z.srcLen, (long long)z.tgtLen,
              (long long)z.srcVocab, (long long)z.tgtVocab, (long long)z.embed,
              (long long)z.attDim);
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());
  if (!hoist)
    std::printf("attnc without attn-hoist-scan-projections (--no-hoist)\n");
  std::vector<std::vector<::attn::Tensor>> batches =
      bench::seq2seqBatches(NB, z.batch, z.srcLen, z.tgtLen, z.srcVocab, z.tgtVocab);

  int rc = 0;
  std::vector<Row> rows;
  std::optional<bench::Calibration> calibration; // from the first PyTorch side
  for (const Config *c : configs) {
    TrainStepProgram side = compileConfig(*c, z, hoist);

    std::string dataFile = bench::tempDataFile("attn-bench-attention");
    bench::writeSeq2SeqData(dataFile, side.weights(), batches);

    PyTorchBaseline torch;
    auto str = [](int64_t v) { return std::to_string(v); };
    std::vector<std::string> torchArgs = {"--data",       dataFile,
                                          "--threads",    str(threads),
                                          "--batch",      str(z.batch),
                                          "--src-len",    str(z.srcLen),
                                          "--tgt-len",    str(z.tgtLen),
                                          "--src-vocab",  str(z.srcVocab),
                                          "--tgt-vocab",  str(z.tgtVocab),
                                          "--embed",      str(z.embed),
                                          "--enc-hidden", str(c->encHidden),
                                          "--dec-hidden", str(c->decHidden),
                                          "--att-dim",    str(z.attDim),
                                          "--batches",    str(NB),
                                          "--lr",         std::to_string(kLr),
                                          "--warmup",     str(warmup),
                                          "--iters",      str(iters)};
    torch.launch(python, script, torchArgs);
    bool haveTorch = torch.ready;
    // PyTorch's autocast step, timed after the f32 ones, started while the data file is there.
    PyTorchBaseline torchBf16;
    if (bf16) {
      torchArgs.insert(torchArgs.end(), {"--precision", "bf16"});
      torchBf16.launch(python, script, torchArgs);
    }
    std::filesystem::remove(dataFile);
    if (!calibration) {
      calibration = bench::calibrate(torch);
      calibration->print(threads);
    }

    // batches[k]: src, src_mask, tgt_in, tgt_out
    auto step = [&] { side.step(batches[side.steps % NB], kLr); };
    std::vector<double> tAttn, tTorch;
    bench::timeInterleaved(timing, step, torch, tAttn, tTorch);
    if (haveTorch)
      if (int code = torch.quit())
        std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);

    std::printf("\n%s: %s (compile %.2f s)\n", c->key.c_str(), c->label.c_str(),
                side.compileSeconds);
    double first = side.losses.front(), mAttn = median(tAttn);
    Row row{c, mAttn * 1e3, 0, side.compileSeconds, haveTorch};
    std::printf("loss at step 1: attnc %.7g", first);
    if (haveTorch) {
      if (!bench::printLossAgreement(first, torch.firstLoss))
        rc = 1;
      std::printf("; at step %d: attnc %.7g, PyTorch %.7g", warmup, side.losses[warmup - 1],
                  torch.warmLoss);
    }
    std::printf("\n  attnc   : %9.1f ms/step  %s\n", mAttn * 1e3, spread(tAttn).c_str());
    if (haveTorch) {
      double mTorch = median(tTorch);
      row.torchMs = mTorch * 1e3;
      std::printf("  PyTorch : %9.1f ms/step  %s, at its best\n", mTorch * 1e3,
                  spread(tTorch).c_str());
      torch.printAllocators("    ", 1e3, "ms");
      std::printf("  (torch %s, eager: nn.GRU encoder, Python loop of nn.GRUCell + additive "
                  "attention, torch.optim.Adam)\n",
                  torch.version.c_str());
      std::printf("%s pytorch/attnc time ratio: %.2f\n", c->key.c_str(), mTorch / mAttn);
    } else {
      std::printf("note: no PyTorch comparison: %s\n", torch.note.c_str());
    }
    calibration->printRates("step", side.flops["train_step"], mAttn,
                            haveTorch ? row.torchMs / 1e3 : 0);
    row.peakPercent = 100 * side.flops["train_step"] / mAttn / 1e9 / calibration->peak();
    if (haveTorch) {
      // What the 3x target asks of this step: its FLOPs in a third of PyTorch's time. Above
      // 100% of the peak no schedule of these FLOPs gets there.
      double target = row.torchMs / 3e3;
      std::printf("  3x PyTorch would be %.1f ms/step: %s\n", target * 1e3,
                  calibration->rate(side.flops["train_step"], target).c_str());
    }
    if (breakdown) {
      // attnc alone, by entry: @loss (forward), @loss_grad (forward + backward), @train_step
      // (that, the gradient norm and Adam).
      double fwd = timeEntry(side, "loss", reps, iters, batches);
      double grad = timeEntry(side, "loss_grad", reps, iters, batches);
      std::printf("  attnc by entry: forward (@loss) %.1f ms, backward (@loss_grad - @loss) "
                  "%.1f ms, norm + adam (@train_step - @loss_grad) %.1f ms\n",
                  fwd * 1e3, (grad - fwd) * 1e3, (mAttn - grad) * 1e3);
    }
    std::string workload = "Bahdanau seq2seq train step (`" + c->key + "` sizes)";
    bench::printTableRow(*calibration, workload, side.flops["train_step"], mAttn, &torch, {3, 60});
    rows.push_back(row);
    if (bf16) { // (docs/precision.md)
      TrainStepProgram bf16Side = compileConfig(*c, z, hoist, "bf16");
      if (!bench::compareBf16Step(workload, timing, bf16Side,
                                  [&] { bf16Side.step(batches[bf16Side.steps % NB], kLr); }, side,
                                  step, torchBf16, {2, 0}))
        rc = 1;
    }
  }

  std::printf("\nsummary (%d thread%s; ratio above 1: attnc faster; target: 3)\n", threads,
              threads == 1 ? "" : "s");
  std::printf("  %-8s %-10s %-10s %12s %12s %8s %12s\n", "config", "encoder", "decoder",
              "attnc ms", "PyTorch ms", "ratio", "% of peak");
  for (const Row &r : rows) {
    std::string enc = std::to_string(r.config->encHidden) + " x 2";
    if (r.haveTorch)
      std::printf("  %-8s %-10s %-10lld %12.1f %12.1f %8.2f %12.1f\n", r.config->key.c_str(),
                  enc.c_str(), (long long)r.config->decHidden, r.attnMs, r.torchMs,
                  r.torchMs / r.attnMs, r.peakPercent);
    else
      std::printf("  %-8s %-10s %-10lld %12.1f %12s %8s %12.1f\n", r.config->key.c_str(),
                  enc.c_str(), (long long)r.config->decHidden, r.attnMs, "-", "-",
                  r.peakPercent);
  }
  return rc;
}
