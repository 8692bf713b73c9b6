// Benchmark: the convolutional encoder-decoder (task: seq2seq, model.conv), attnc against the
// same model written in plain PyTorch (nn.Conv1d, F.glu, the multi-step attention as bmm and
// softmax), same weights, batches and thread count, in one run: one teacher-forced training
// step (forward, backward, Adam). Not a test; not run by ctest.
//
//   ninja -C build attn-bench-convs2s
//   OMP_NUM_THREADS=1 build/bin/attn-bench-convs2s
//   OMP_NUM_THREADS=2 build/bin/attn-bench-convs2s [--warmup N] [--reps N] [--iters N]
//
// Sizes (the issue's): batch 32, source and target length 30, vocabularies 1000, embedding
// 256, channels 256, 4 encoder and 4 decoder blocks of kernel 3, Adam (lr 1e-3), no dropout.
// The spec goes through the YAML frontend and is compiled as `attnc train` compiles it; rows
// are full length (src_mask all ones).
//
// Both sides start from the same weights (attn::initParams, handed over by parameter name in
// a temporary safetensors file); the step-1 loss must agree to 1e-4 relative (exit status 1
// otherwise). Timing: warm-up, then interleaved repetitions; medians. The PyTorch side is
// tests/bench/convs2s.py (/usr/bin/python3, or $ATTN_BENCH_PYTHON), started with its best
// BLAS kernels (BenchSupport.h).
#include "frontends/yaml/Importer.h"

#include "BenchSupport.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr int NB = 4; // fixed batches, cycled
constexpr float kLr = 1e-3f;

using bench::die;
using bench::median;
using bench::PyTorchBaseline;
using bench::TrainStepProgram;

struct Sizes {
  int64_t batch = 32, srcLen = 30, tgtLen = 30, vocab = 1000, embedding = 256, channels = 256,
          layers = 4, kernel = 3;
};

std::string specText(const Sizes &z) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return "name: convs2s-bench\n"
         "task: seq2seq\n"
         "data: {builtin: copy, max_len: " +
         n(z.srcLen) +
         "}\n"
         "model:\n"
         "  conv: {layers: " +
         n(z.layers) + ", kernel: " + n(z.kernel) + ", channels: " + n(z.channels) +
         ", embedding: " + n(z.embedding) +
         "}\n"
         "train:\n"
         "  batch_size: " +
         n(z.batch) +
         "\n"
         "  optimizer: {type: adam, lr: 0.001}\n"
         "decode: {batch: " +
         n(z.batch) + "}\n";
}

// With `precision` "bf16", as `attnc train --precision bf16` compiles it.
TrainStepProgram compile(const Sizes &z, const std::string &precision = "f32") {
  double t0 = bench::seconds();
  ::attn::driver::SessionOptions o;
  o.precision = precision;
  auto session = std::make_unique<::attn::driver::Session>(o);
  if (!session->loadSpecText(specText(z), "convs2s-bench.yaml"))
    die("the benchmark's spec does not parse");
  ::attn::yaml::ImportOptions options;
  options.sourceVocab = options.targetVocab = z.vocab;
  options.sourceLength = z.srcLen;
  options.targetLength = z.tgtLen;
  session->setImportOptions(options);
  return TrainStepProgram(std::move(session), /*seed=*/1, t0);
}

void usage() {
  std::fprintf(stderr,
               "usage: attn-bench-convs2s [--warmup N] [--reps N] [--iters N]\n"
               "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-convs2s";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/convs2s.py";
  Sizes z;
  bench::Timing timing{/*warmup=*/2, /*reps=*/5, /*iters=*/3};
  for (bench::Args args(argc, argv, usage); args.next();)
    if (!timing.parse(args))
      usage();
  if (!timing.valid())
    usage();
  int threads = bench::threadCount();
  std::string python = bench::benchPython();

  std::printf("convolutional encoder-decoder: %lld+%lld blocks of kernel %lld, channels %lld, "
              "embedding %lld, vocab %lld, source/target length %lld, batch %lld; train step "
              "with Adam\n",
              (long long)z.layers, (long long)z.layers, (long long)z.kernel, (long long)z.channels,
              (long long)z.embedding, (long long)z.vocab, (long long)z.srcLen, (long long)z.batch);
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());

  std::vector<std::vector<::attn::Tensor>> batches =
      bench::seq2seqBatches(NB, z.batch, z.srcLen, z.tgtLen, z.vocab, z.vocab);
  TrainStepProgram side = compile(z);
  std::printf("compiled in %.1f s\n", side.compileSeconds);
  std::string dataFile = bench::tempDataFile("attn-bench-convs2s");
  bench::writeSeq2SeqData(dataFile, side.weights(), batches);
  auto str = [](int64_t v) { return std::to_string(v); };
  std::vector<std::string> torchArgs = {
      "--data",           dataFile,     "--threads",      str(threads),        "--batch",
      str(z.batch),       "--src-len",  str(z.srcLen),    "--tgt-len",         str(z.tgtLen),
      "--vocab",          str(z.vocab), "--embedding",    str(z.embedding),    "--channels",
      str(z.channels),    "--layers",   str(z.layers),    "--kernel",          str(z.kernel),
      "--batches",        str(NB),      "--lr",           std::to_string(kLr), "--warmup",
      str(timing.warmup), "--iters",    str(timing.iters)};
  PyTorchBaseline torch;
  torch.launch(python, script, torchArgs);
  // PyTorch's autocast step, timed after the f32 ones, started while the data file is there.
  PyTorchBaseline torchBf16;
  bool bf16Runs = bench::runsBf16("the bf16 train step and its PyTorch autocast twin");
  torchArgs.insert(torchArgs.end(), {"--precision", "bf16"});
  if (bf16Runs)
    torchBf16.launch(python, script, torchArgs);
  bench::Calibration calibration = bench::calibrate(torch);
  calibration.print(threads);
  std::filesystem::remove(dataFile);

  auto step = [&] { side.step(batches[side.steps % NB], kLr); };
  std::vector<double> tAttn, tTorch;
  bench::timeInterleaved(timing, step, torch, tAttn, tTorch);
  int rc = 0;
  std::printf("\ntrain step (forward, backward, Adam)\n  loss at step 1: attnc %.7g",
              side.losses.front());
  if (torch.ready) {
    if (int code = torch.quit())
      std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);
    if (!bench::printLossAgreement(side.losses.front(), torch.firstLoss))
      rc = 1;
  }
  double mAttn = median(tAttn), mTorch = 0;
  std::printf("\n  attnc   : %9.1f ms/step  %s\n", mAttn * 1e3,
              bench::spread(tAttn, 1e3, 1).c_str());
  if (torch.ready) {
    mTorch = median(tTorch);
    std::printf("  PyTorch : %9.1f ms/step  %s, at its best\n", mTorch * 1e3,
                bench::spread(tTorch, 1e3, 1).c_str());
    torch.printAllocators("    ", 1e3, "ms");
  } else {
    std::printf("note: no PyTorch comparison: %s\n", torch.note.c_str());
  }
  calibration.printRates("step", side.flops["train_step"], mAttn, mTorch);
  std::printf("\nsummary (%d thread%s; ratio = PyTorch time / attnc time, above 1: attnc "
              "faster; goal 1.5)\n",
              threads, threads == 1 ? "" : "s");
  if (mTorch > 0)
    std::printf("  train step: attnc %.1f ms, PyTorch %.1f ms, ratio %.2f\n", mAttn * 1e3,
                mTorch * 1e3, mTorch / mAttn);
  std::printf("  attnc's train step: %.1f%% of the GEMM peak (%.1f GFLOP/s)\n",
              100 * side.flops["train_step"] / mAttn / 1e9 / calibration.peak(),
              calibration.peak());
  bench::printTableRow(calibration, "conv seq2seq (GLU) train step", side.flops["train_step"],
                       mAttn, &torch, {1.5, 0});

  // bf16 (docs/precision.md): the convolutions are an unfold and a dense, so bf16 products.
  if (bf16Runs) {
    TrainStepProgram bf16 = compile(z, "bf16");
    auto bf16Step = [&] { bf16.step(batches[bf16.steps % NB], kLr); };
    if (!bench::compareBf16Step("conv seq2seq (GLU) train step", timing, bf16, bf16Step, side,
                                step, torchBf16, {2, 0}))
      rc = 1;
  }
  return rc;
}
