// Benchmark: one training step of a masked bidirectional tagger (task: tag; forward, backward,
// Adam) on right-padded batches of different lengths: attnc's JIT-compiled @train_step against
// the same model in PyTorch with packed sequences, same weights, batches and thread count, in
// one run. Not a test; not run by ctest.
//
//   ninja -C build attn-bench-tagger-train-step
//   OMP_NUM_THREADS=1 build/bin/attn-bench-tagger-train-step
//   ... [--warmup N] [--reps N] [--iters N] [--no-hoist] [--no-fuse-recurrence]
//
// Sizes (the recurrent-scan issue's): batch 32, length 50 (each row 25 to 50 tokens), vocabulary
// 10000, 50 tags, embedding 128, GRU hidden 256 per direction, 2 bidirectional layers, Adam
// (lr 1e-3). The spec goes through the YAML frontend (parseSpecString, importSpec with
// ImportOptions for the vocabularies and the length) and is compiled the way `attnc train`
// compiles it. Each masked layer (the mask holds each row's state past its end) becomes a
// masked attn.gru: oneDNN's GRU over packed rows, in segments that shrink as rows end, like
// PyTorch's packed sequences. With --no-fuse-recurrence the layers stay generic scans run
// with the scan rewrites (attn-hoist-scan-projections, attn-batch-scan-gradients,
// attn-store-scan-residuals); with --no-hoist as well, the whole cell per step and its
// recomputation in the backward.
//
// Both sides start from the same weights and cycle through the same NB batches; the step-1
// loss must agree to 1e-4 relative (exit status 1 otherwise). The PyTorch side is
// tests/bench/tagger-train-step.py (/usr/bin/python3, or $ATTN_BENCH_PYTHON). Then, on a CPU
// with AVX512_BF16, the step in bf16 (train.precision: bf16: the masked GRU layers on oneDNN's
// bf16 RNN primitives, the products in bf16) in turns with the f32 one, against PyTorch's
// step under torch.autocast('cpu', dtype=torch.bfloat16) and the bf16 GEMM peak.
#include "frontends/yaml/Importer.h"

#include "BenchSupport.h"

#include "attn/Cpu.h"
#include "attn/Program.h"
#include "attn/Tensor.h"

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
using bench::seconds;
using bench::TrainStepProgram;

struct Sizes {
  int64_t batch = 32, length = 50, vocab = 10000, tags = 50, embed = 128, hidden = 256, layers = 2;
};

// The spec (data: is required by the schema but unused: ImportOptions give the vocabularies
// and the length, and the benchmark makes its own batches).
std::string specText(const Sizes &z) {
  auto str = [](int64_t v) { return std::to_string(v); };
  return "name: tagger-bench\n"
         "task: tag\n"
         "data: {builtin: pos, max_len: " +
         str(z.length) +
         "}\n"
         "model:\n"
         "  embedding: {dim: " +
         str(z.embed) +
         "}\n"
         "  rnn: {cell: gru, hidden: " +
         str(z.hidden) + ", layers: " + str(z.layers) +
         ", bidirectional: true}\n"
         "train:\n"
         "  batch_size: " +
         str(z.batch) +
         "\n"
         "  optimizer: {type: adam, lr: 0.001}\n";
}

// Right-padded batches: src [B, T] ids (0 past each row's end), src_mask [B, T], tags [B, T]
// (0, ignored by the loss, past the end); each row holds T/2 to T tokens.
std::vector<std::vector<::attn::Tensor>> taggerBatches(const Sizes &z) {
  ::attn::Rng rng(7);
  auto below = [&](int64_t n) { return (int64_t)(rng.nextDouble() * n); };
  std::vector<std::vector<::attn::Tensor>> batches;
  for (int k = 0; k < NB; ++k) {
    ::attn::Tensor src(ATTN_I32, {z.batch, z.length}), mask(ATTN_F32, {z.batch, z.length});
    ::attn::Tensor tags(ATTN_I32, {z.batch, z.length});
    for (int64_t b = 0; b < z.batch; ++b) {
      int64_t len = z.length / 2 + below(z.length - z.length / 2 + 1);
      for (int64_t t = 0; t < z.length; ++t) {
        bool real = t < len;
        int64_t i = b * z.length + t;
        src.data<int32_t>()[i] = real ? (int32_t)(4 + below(z.vocab - 4)) : 0;
        mask.data<float>()[i] = real ? 1.0f : 0.0f;
        tags.data<int32_t>()[i] = real ? (int32_t)(1 + below(z.tags - 1)) : 0;
      }
    }
    batches.push_back({std::move(src), std::move(mask), std::move(tags)});
  }
  return batches;
}

// `weights` and the batches for the PyTorch side: src<k>, src_mask<k>, tags<k> (ids as f32).
void writeData(const std::string &path, ::attn::checkpoint::Checkpoint weights,
               const std::vector<std::vector<::attn::Tensor>> &batches) {
  auto asF32 = bench::idsAsF32;
  for (size_t k = 0; k < batches.size(); ++k) {
    std::string n = std::to_string(k);
    weights.tensors.push_back({"src" + n, asF32(batches[k][0])});
    weights.tensors.push_back({"src_mask" + n, batches[k][1]});
    weights.tensors.push_back({"tags" + n, asF32(batches[k][2])});
  }
  ::attn::checkpoint::save(path, weights);
}

void usage() {
  std::fprintf(stderr,
               "usage: attn-bench-tagger-train-step [--warmup N] [--reps N] [--iters N] "
               "[--no-hoist] [--no-fuse-recurrence]\n"
               "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-tagger-train-step";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/tagger-train-step.py";
  Sizes z;
  bench::Timing timing{/*warmup=*/3, /*reps=*/5, /*iters=*/5};
  bool hoist = true, fuseRecurrence = true;
  for (bench::Args args(argc, argv, usage); args.next();) {
    if (args.flag == "--no-hoist")
      hoist = false;
    else if (args.flag == "--no-fuse-recurrence")
      fuseRecurrence = false;
    else if (!timing.parse(args))
      usage();
  }
  if (!timing.valid())
    usage();
  int threads = bench::threadCount();

  std::printf("masked bidirectional GRU tagger, train step (forward, backward, adam): batch %lld, "
              "length %lld (rows of %lld to %lld tokens), vocab %lld, %lld tags, embedding %lld, "
              "%lld layers of %lld x 2\n",
              (long long)z.batch, (long long)z.length, (long long)(z.length / 2),
              (long long)z.length, (long long)z.vocab, (long long)z.tags, (long long)z.embed,
              (long long)z.layers, (long long)z.hidden);
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());
  if (!fuseRecurrence)
    std::printf("attnc with the layers as generic scans (--no-fuse-recurrence)\n");
  if (!hoist)
    std::printf("attnc without the scan rewrites (--no-hoist)\n");

  // The step compiled as `attnc train` compiles it, in `precision`.
  auto compile = [&](const std::string &precision) {
    double t0 = seconds();
    auto session = bench::newSession(/*fuse=*/true, hoist, fuseRecurrence, precision);
    if (!session->loadSpecText(specText(z), "tagger-bench.yaml"))
      die("the benchmark's spec does not parse");
    ::attn::yaml::ImportOptions options;
    options.sourceVocab = z.vocab;
    options.targetVocab = z.tags;
    options.sourceLength = z.length;
    session->setImportOptions(options);
    return TrainStepProgram(std::move(session), /*seed=*/1, t0);
  };
  TrainStepProgram side = compile("f32");
  std::vector<std::vector<::attn::Tensor>> batches = taggerBatches(z);

  std::string dataFile = bench::tempDataFile("attn-bench-tagger");
  writeData(dataFile, side.weights(), batches);
  PyTorchBaseline torch;
  auto str = [](int64_t v) { return std::to_string(v); };
  std::vector<std::string> torchArgs = {"--data",    dataFile,
                                        "--threads", str(threads),
                                        "--batch",   str(z.batch),
                                        "--length",  str(z.length),
                                        "--vocab",   str(z.vocab),
                                        "--tags",    str(z.tags),
                                        "--embed",   str(z.embed),
                                        "--hidden",  str(z.hidden),
                                        "--layers",  str(z.layers),
                                        "--batches", str(NB),
                                        "--lr",      std::to_string(kLr),
                                        "--warmup",  str(timing.warmup),
                                        "--iters",   str(timing.iters)};
  torch.launch(bench::benchPython(), script, torchArgs);
  // PyTorch's autocast step, timed after the f32 ones, started while the data file is there.
  bool bf16 = bench::runsBf16("the bf16 rows");
  PyTorchBaseline torchBf16;
  if (bf16) {
    torchArgs.insert(torchArgs.end(), {"--precision", "bf16"});
    torchBf16.launch(bench::benchPython(), script, torchArgs);
  }
  std::filesystem::remove(dataFile);
  bench::Calibration calibration = bench::calibrate(torch);
  calibration.print(threads);

  auto step = [&] { side.step(batches[side.steps % NB], kLr); };
  std::vector<double> tAttn, tTorch;
  bench::timeInterleaved(timing, step, torch, tAttn, tTorch);
  int rc = 0;
  if (torch.ready)
    if (int code = torch.quit())
      std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);

  std::printf("\ncompile %.2f s\nloss at step 1: attnc %.7g", side.compileSeconds,
              side.losses.front());
  if (torch.ready) {
    if (!bench::printLossAgreement(side.losses.front(), torch.firstLoss))
      rc = 1;
    std::printf("; at step %d: attnc %.7g, PyTorch %.7g", timing.warmup,
                side.losses[timing.warmup - 1], torch.warmLoss);
  }
  double mAttn = median(tAttn);
  std::printf("\n  attnc   : %9.1f ms/step  %s\n", mAttn * 1e3,
              bench::spread(tAttn, 1e3, 1).c_str());
  if (torch.ready) {
    double mTorch = median(tTorch);
    std::printf("  PyTorch : %9.1f ms/step  %s, at its best\n", mTorch * 1e3,
                bench::spread(tTorch, 1e3, 1).c_str());
    torch.printAllocators("    ", 1e3, "ms");
    std::printf("  (torch %s, eager: pack_padded_sequence, nn.GRU(bidirectional), "
                "torch.optim.Adam)\n",
                torch.version.c_str());
    std::printf("pytorch/attnc time ratio: %.2f (target: 2)\n", mTorch / mAttn);
  } else {
    std::printf("note: no PyTorch comparison: %s\n", torch.note.c_str());
  }
  double flops = side.flops["train_step"], mTorch = torch.ready ? median(tTorch) : 0;
  calibration.printRates("step", flops, mAttn, mTorch);
  // The count above is of every position, padding included; both sides skip padding (packed
  // rows), so their real work is about the real tokens' share of it.
  double tokens = 0, positions = 0;
  for (const auto &batch : batches)
    for (int64_t k = 0; k < batch[1].numel(); ++k, ++positions)
      tokens += batch[1].data<float>()[k];
  std::printf("  on the real tokens (%.1f%% of the positions): about %.3f GFLOP; attnc %s",
              100 * tokens / positions, flops * tokens / positions / 1e9,
              calibration.rate(flops * tokens / positions, mAttn).c_str());
  if (mTorch > 0)
    std::printf("; PyTorch %s", calibration.rate(flops * tokens / positions, mTorch).c_str());
  std::printf("\n");
  bench::printTableRow(calibration, "masked bidirectional GRU tagger train step (real tokens)",
                       flops * tokens / positions, mAttn, &torch, {2, 0});
  if (bf16) { // (docs/precision.md; the share of the peak on every position, as counted)
    TrainStepProgram bf16Side = compile("bf16");
    if (!bench::compareBf16Step("masked bidirectional GRU tagger train step", timing, bf16Side,
                                [&] { bf16Side.step(batches[bf16Side.steps % NB], kLr); }, side,
                                step, torchBf16, {2, 0}))
      rc = 1;
  }
  return rc;
}
