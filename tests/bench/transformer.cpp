// Benchmark: a Transformer encoder-decoder (task: seq2seq, model.transformer), attnc against
// torch.nn.Transformer, same weights, batches and thread count, in one run:
//   train   one teacher-forced training step (forward, backward, Adam): attnc's JIT-compiled
//           @train_step against nn.Transformer + embeddings + output layer, backward,
//           torch.optim.Adam;
//   greedy  greedy decoding of a batch of sources, 32 tokens: attnc's @encode and 32 cached
//           @decode_step calls against nn.Transformer's usual loop, the encoder once and the
//           decoder over the whole prefix for every new token (torch.no_grad, eval mode), and
//           against the key/value-cached loop a PyTorch user writes with the same layers;
//           and in int8 (decode.precision: int8) against that cached loop with every decoder
//           projection through PyTorch's dynamic int8 linear (fbgemm, or oneDNN's).
// Not a test; not run by ctest.
//
//   ninja -C build attn-bench-transformer
//   OMP_NUM_THREADS=1 build/bin/attn-bench-transformer
//   OMP_NUM_THREADS=2 build/bin/attn-bench-transformer [--length N] [--warmup N] [--reps N]
//                                                      [--iters N]
//
// Sizes (the issue's): d_model 256, 4 heads, ffn 1024, 2 encoder and 2 decoder layers,
// post-norm, relu, vocabularies 1000, source and target length 64 (--length), batch 32, Adam
// (lr 1e-3), no dropout; greedy decoding of 32 tokens for batch 32. The spec goes through the YAML
// frontend (parseSpecString, importSpec with the vocabularies and lengths set here) and is
// compiled as `attnc train` compiles it. Rows are full length (src_mask all ones).
//
// The train step is also timed in bf16 (train.precision: bf16, docs/precision.md), in turns
// with the f32 one and with PyTorch's torch.autocast('cpu', dtype=torch.bfloat16) step, and
// measured against the bf16 GEMM of this run (attnc's matmul_bf16, 1024^3).
//
// The train step is also timed with the attention unfused (as --no-fuse=attention compiles
// it), in turns with the fused one: what attention fusion buys, and the losses must agree.
//
// Both sides start from the same weights (attn::initParams, handed over by the importer's
// parameter names in a temporary safetensors file); the step-1 loss must agree to 1e-4
// relative and the greedy tokens must be the same (exit status 1 otherwise). Timing: warm-up,
// then interleaved repetitions; medians. The PyTorch side is tests/bench/transformer.py
// (/usr/bin/python3, or $ATTN_BENCH_PYTHON), once per mode.
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "BenchSupport.h"

#include "attn/Program.h"
#include "attn/Tensor.h"
#include "attn/decode/Seq2Seq.h"

#include "compiler/Driver/Measure.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr int NB = 4; // fixed batches, cycled
constexpr float kLr = 1e-3f;
constexpr int kBos = 1;

using bench::die;
using bench::median;
using bench::PyTorchBaseline;
using bench::TrainStepProgram;

struct Sizes {
  int64_t batch = 32, srcLen = 64, tgtLen = 64, vocab = 1000, dModel = 256, heads = 4,
          ffn = 1024, layers = 2, decodeTokens = 32;
};

std::string specText(const Sizes &z) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return "name: transformer-bench\n"
         "task: seq2seq\n"
         "data: {builtin: copy, max_len: " + n(z.srcLen) + "}\n"
         "model:\n"
         "  transformer: {layers: " + n(z.layers) + ", d_model: " + n(z.dModel) +
         ", heads: " + n(z.heads) + ", ffn: " + n(z.ffn) + "}\n"
         "train:\n"
         "  batch_size: " + n(z.batch) + "\n"
         "  optimizer: {type: adam, lr: 0.001}\n"
         "decode: {batch: " + n(z.batch) + "}\n";
}

// The train step as `attnc train` compiles it; with `fuseAttention` false, as
// `attnc train --no-fuse=attention` does (the attention decomposed into batched matmuls, the
// masks and a softmax over [B, H, T, S] scores).
// With `precision` "bf16", as `attnc train --precision bf16` does.
TrainStepProgram compile(const Sizes &z, bool fuseAttention = true,
                         const std::string &precision = "f32") {
  double t0 = bench::seconds();
  ::attn::driver::SessionOptions o;
  o.fuseAttention = fuseAttention;
  o.precision = precision;
  auto session = std::make_unique<::attn::driver::Session>(o);
  if (!session->loadSpecText(specText(z), "transformer-bench.yaml"))
    die("the benchmark's spec does not parse");
  ::attn::yaml::ImportOptions options;
  options.sourceVocab = options.targetVocab = z.vocab;
  options.sourceLength = z.srcLen;
  options.targetLength = z.tgtLen;
  session->setImportOptions(options);
  return TrainStepProgram(std::move(session), /*seed=*/1, t0);
}

// Greedy decoding as attnc's decoder runs it, without stopping at eos: @encode, then `tokens`
// @decode_step calls, each feeding every row's argmax back. Returns the tokens [K, tokens].
std::vector<int32_t> greedyTokens(const ::attn::Program &program,
                                  const std::vector<::attn::Tensor> &params,
                                  const ::attn::Tensor &src, const ::attn::Tensor &mask,
                                  int64_t tokens) {
  ::attn::decode::ProgramStepModel model(program, params, src, mask);
  int64_t rows = model.rows(), vocab = model.vocab();
  std::vector<int32_t> next(rows, kBos), out(rows * tokens);
  std::vector<float> logProbs;
  for (int64_t t = 0; t < tokens; ++t) {
    model.step(next, logProbs);
    for (int64_t k = 0; k < rows; ++k) {
      const float *row = logProbs.data() + k * vocab;
      next[k] = (int32_t)(std::max_element(row, row + vocab) - row);
      out[k * tokens + t] = next[k];
    }
  }
  return out;
}

void usage() {
  std::fprintf(stderr, "usage: attn-bench-transformer [--length N] [--warmup N] [--reps N] "
                       "[--iters N]\n"
                       "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-transformer";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/transformer.py";
  Sizes z;
  bench::Timing timing{/*warmup=*/2, /*reps=*/5, /*iters=*/3};
  for (bench::Args args(argc, argv, usage); args.next();) {
    if (args.flag == "--length") {
      z.srcLen = z.tgtLen = std::atoll(args.value().c_str());
      if (z.srcLen < 2)
        usage();
    } else if (!timing.parse(args)) {
      usage();
    }
  }
  if (!timing.valid())
    usage();
  int threads = bench::threadCount();
  std::string python = bench::benchPython();

  std::printf("Transformer encoder-decoder: d_model %lld, %lld heads, ffn %lld, %lld+%lld layers "
              "(post-norm, relu), vocab %lld, source/target length %lld, batch %lld; train step "
              "with Adam, greedy decoding of %lld tokens\n",
              (long long)z.dModel, (long long)z.heads, (long long)z.ffn, (long long)z.layers,
              (long long)z.layers, (long long)z.vocab, (long long)z.srcLen, (long long)z.batch,
              (long long)z.decodeTokens);
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());

  std::vector<std::vector<::attn::Tensor>> batches =
      bench::seq2seqBatches(NB, z.batch, z.srcLen, z.tgtLen, z.vocab, z.vocab);

  TrainStepProgram side = compile(z);
  std::printf("compiled in %.1f s\n", side.compileSeconds);
  std::vector<::attn::Tensor> initial = side.params(); // decoding uses the initial weights
  std::string dataFile = bench::tempDataFile("attn-bench-transformer");
  bench::writeSeq2SeqData(dataFile, side.weights(), batches);
  auto str = [](int64_t v) { return std::to_string(v); };
  std::vector<std::string> torchArgs = {
      "--data", dataFile, "--threads", str(threads), "--batch", str(z.batch), "--src-len",
      str(z.srcLen), "--tgt-len", str(z.tgtLen), "--vocab", str(z.vocab), "--d-model",
      str(z.dModel), "--heads", str(z.heads), "--ffn", str(z.ffn), "--layers", str(z.layers),
      "--decode-tokens", str(z.decodeTokens), "--batches", str(NB), "--lr", std::to_string(kLr),
      "--warmup", str(timing.warmup), "--iters", str(timing.iters)};
  int rc = 0;

  // Greedy decoding first, with the initial weights on both sides.
  std::vector<int32_t> tokens;
  auto decode = [&] {
    tokens = greedyTokens(*side.program, initial, batches[0][0], batches[0][1], z.decodeTokens);
  };
  // Two PyTorch decoders: nn.Transformer's usual uncached loop, and the key/value-cached loop
  // a PyTorch user writes for fast decoding.
  PyTorchBaseline torchDecode, torchCached;
  for (auto [side, mode] : {std::pair{&torchDecode, "greedy"}, {&torchCached, "greedy-cached"}}) {
    std::vector<std::string> decodeArgs = torchArgs;
    decodeArgs.insert(decodeArgs.end(), {"--mode", mode});
    side->launch(python, script, decodeArgs);
  }
  // And the cached loop through PyTorch's dynamic int8 linear (timed with attnc's int8 below).
  PyTorchBaseline torchInt8;
  std::vector<std::string> int8Args = torchArgs;
  int8Args.insert(int8Args.end(), {"--mode", "greedy-cached", "--precision", "int8"});
  bool int8Runs = bench::runsInt8("int8 decoding and its PyTorch twin");
  if (int8Runs)
    torchInt8.launch(python, script, int8Args);
  bench::Calibration calibration = bench::calibrate(torchDecode);
  calibration.print(threads);
  std::vector<double> dAttn;
  std::vector<std::vector<double>> dTorch;
  bench::timeInterleaved(timing, decode, {&torchDecode, &torchCached}, dAttn, dTorch);
  long long sum = 0;
  for (int32_t t : tokens)
    sum += t;
  std::printf("\ngreedy decoding, %lld tokens for batch %lld (attnc: encoder once, cached "
              "decoder steps)\n",
              (long long)z.decodeTokens, (long long)z.batch);
  std::printf("  token sum: attnc %lld", sum);
  for (auto [side, what] : {std::pair{&torchDecode, "PyTorch"}, {&torchCached, "PyTorch cached"}})
    if (side->ready) {
      if (int code = side->quit())
        std::fprintf(stderr, "note: the %s side exited with %d\n", what, code);
      bool same = (long long)side->firstLoss == sum;
      std::printf(", %s %lld (%s)", what, (long long)side->firstLoss,
                  same ? "same tokens" : "MISMATCH");
      if (!same)
        rc = 1;
    }
  double mdAttn = median(dAttn);
  std::printf("\n  attnc          : %9.1f ms  %s\n", mdAttn * 1e3,
              bench::spread(dAttn, 1e3, 1).c_str());
  // Each PyTorch decoder's median (0 when it could not run).
  auto torchRow = [&](const PyTorchBaseline &side, const std::vector<double> &times,
                      const char *label, const char *how) {
    if (!side.ready) {
      std::printf("note: no %s decoder: %s\n", label, side.note.c_str());
      return 0.0;
    }
    std::printf("  %-15s: %9.1f ms  %s  (%s), at its best\n", label, median(times) * 1e3,
                bench::spread(times, 1e3, 1).c_str(), how);
    side.printAllocators("    ", 1e3, "ms");
    return median(times);
  };
  double mdTorch = torchRow(torchDecode, dTorch[0], "PyTorch",
                            "nn.Transformer, the decoder over the whole prefix per token");
  double mdCached = torchRow(torchCached, dTorch[1], "PyTorch cached",
                             "nn.Transformer's layers, one token per step with a key/value cache");
  // attnc's work: the encoder once and one cached step per token. The uncached PyTorch loop
  // does more (the whole prefix per token), so its rate is not comparable and not shown.
  double decodeFlops = side.flops["encode"] + (double)z.decodeTokens * side.flops["decode_step"];
  std::printf("  FLOPs per decoding (attnc's @encode + %lld x @decode_step): %.3f GFLOP; attnc %s",
              (long long)z.decodeTokens, decodeFlops / 1e9,
              calibration.rate(decodeFlops, mdAttn).c_str());
  if (mdCached > 0)
    std::printf("; PyTorch cached %s", calibration.rate(decodeFlops, mdCached).c_str());
  std::printf("\n");

  // int8 decoding (decode.precision: int8, docs/precision.md): attnc's inference programs
  // compiled in int8 on the same initial weights, timed in turns with PyTorch's cached loop
  // through its dynamic int8 linear, against the f32 decoding above and the int8 GEMM of this
  // run. The tokens are compared with the f32 decoding's, not required equal.
  double mdInt8 = 0, mdTorchInt8 = 0;
  if (auto int8 = int8Runs ? side.session->loadInferenceModel(::attn::yaml::DecodePrecision::Int8)
                           : nullptr) {
    std::vector<::attn::Tensor> int8Params =
        ::attn::paramsFor(*int8->program, *side.program, initial);
    std::vector<int32_t> int8Tokens;
    auto decodeInt8 = [&] {
      int8Tokens = greedyTokens(*int8->program, int8Params, batches[0][0], batches[0][1],
                                z.decodeTokens);
    };
    double int8Peak = ::attn::driver::gemmInt8Gops();
    std::vector<double> dInt8, dTorch8;
    bench::timeInterleaved(timing, decodeInt8, torchInt8, dInt8, dTorch8);
    size_t same = 0;
    for (size_t i = 0; i < tokens.size(); ++i)
      same += int8Tokens[i] == tokens[i];
    mdInt8 = median(dInt8);
    std::printf("\nint8 greedy decoding (decode.precision int8); calibration: int8 GEMM 1024^3: "
                "oneDNN (attnc's dense_int8) %.1f GOP/s\n",
                int8Peak);
    std::printf("  attnc int8     : %9.1f ms  %s = %.2fx attnc's f32 decoding; %zu of %zu tokens "
                "as f32's\n",
                mdInt8 * 1e3, bench::spread(dInt8, 1e3, 1).c_str(), mdAttn / mdInt8, same,
                tokens.size());
    // The products' rate against the int8 peak (attnc's @encode + steps, as for f32 above).
    auto int8Rate = [&](double seconds) { return decodeFlops / seconds / 1e9 / int8Peak * 100; };
    std::printf("  FLOPs per decoding %.3f G: attnc int8 %.1f%% of the int8 peak",
                decodeFlops / 1e9, int8Rate(mdInt8));
    if (torchInt8.ready) {
      if (int code = torchInt8.quit())
        std::fprintf(stderr, "note: the PyTorch int8 side exited with %d\n", code);
      mdTorchInt8 = median(dTorch8);
      std::printf("; PyTorch int8 %.1f%%\n", int8Rate(mdTorchInt8));
      std::printf("  PyTorch int8   : %9.1f ms  %s  (the cached loop, every decoder projection "
                  "through quantized::linear_dynamic), at its best\n",
                  mdTorchInt8 * 1e3, bench::spread(dTorch8, 1e3, 1).c_str());
      torchInt8.printAllocators("    ", 1e3, "ms");
    } else {
      std::printf("\nnote: no PyTorch int8 decoder: %s\n", torchInt8.note.c_str());
    }
  } else if (int8Runs) {
    std::printf("note: no int8 decoding (see the error above)\n");
  }

  // The training step.
  PyTorchBaseline torchTrain;
  std::vector<std::string> trainArgs = torchArgs;
  trainArgs.insert(trainArgs.end(), {"--mode", "train"});
  torchTrain.launch(python, script, trainArgs);
  // PyTorch's autocast step (timed after the f32 one), started while the data file is there.
  PyTorchBaseline torchBf16;
  bool bf16Runs = bench::runsBf16("the bf16 train step and its PyTorch autocast twin");
  std::vector<std::string> bf16Args = torchArgs;
  bf16Args.insert(bf16Args.end(), {"--mode", "train", "--precision", "bf16"});
  if (bf16Runs)
    torchBf16.launch(python, script, bf16Args);
  std::filesystem::remove(dataFile);
  auto step = [&] { side.step(batches[side.steps % NB], kLr); };
  std::vector<double> tAttn, tTorch;
  bench::timeInterleaved(timing, step, torchTrain, tAttn, tTorch);
  std::printf("\ntrain step (forward, backward, Adam)\n  loss at step 1: attnc %.7g",
              side.losses.front());
  if (torchTrain.ready) {
    if (int code = torchTrain.quit())
      std::fprintf(stderr, "note: the PyTorch side exited with %d\n", code);
    if (!bench::printLossAgreement(side.losses.front(), torchTrain.firstLoss))
      rc = 1;
  }
  double mAttn = median(tAttn), mTorch = 0;
  std::printf("\n  attnc   : %9.1f ms/step  %s\n", mAttn * 1e3,
              bench::spread(tAttn, 1e3, 1).c_str());
  if (torchTrain.ready) {
    mTorch = median(tTorch);
    std::printf("  PyTorch : %9.1f ms/step  %s, at its best\n", mTorch * 1e3,
                bench::spread(tTorch, 1e3, 1).c_str());
    torchTrain.printAllocators("    ", 1e3, "ms");
  } else {
    std::printf("note: no PyTorch comparison: %s\n", torchTrain.note.c_str());
  }
  calibration.printRates("step", side.flops["train_step"], mAttn, mTorch);

  // What attention fusion buys: the same step with the attention unfused, timed in turns with
  // the fused one (same batches, same starting weights).
  TrainStepProgram unfused = compile(z, /*fuseAttention=*/false);
  auto unfusedStep = [&] { unfused.step(batches[unfused.steps % NB], kLr); };
  std::vector<double> tFused, tUnfused;
  for (int i = 0; i < timing.warmup; ++i)
    unfusedStep();
  for (int r = 0; r < timing.reps; ++r) {
    bench::settle();
    tUnfused.push_back(bench::perStep(timing.iters, unfusedStep));
    bench::settle();
    tFused.push_back(bench::perStep(timing.iters, step));
  }
  double mFused = median(tFused), mUnfused = median(tUnfused);
  double fusedLoss = side.losses.front(), unfusedLoss = unfused.losses.front();
  bool sameLoss = std::fabs(fusedLoss - unfusedLoss) <= 1e-4 * std::fabs(unfusedLoss);
  if (!sameLoss)
    rc = 1;
  std::printf("  attention fusion: fused %.1f ms/step, unfused (--no-fuse=attention) %.1f "
              "ms/step: %.2fx (step-1 loss %.7g vs %.7g, %s)\n",
              mFused * 1e3, mUnfused * 1e3, mUnfused / mFused, fusedLoss, unfusedLoss,
              sameLoss ? "ok" : "MISMATCH");

  // bf16: attnc's bf16 step in turns with the f32 one and with PyTorch's autocast step.
  if (bf16Runs) {
    TrainStepProgram bf16 = compile(z, /*fuseAttention=*/true, "bf16");
    auto bf16Step = [&] { bf16.step(batches[bf16.steps % NB], kLr); };
    if (!bench::compareBf16Step("Transformer train step (length " + std::to_string(z.srcLen) +
                                    ")",
                                timing, bf16, bf16Step, side, step, torchBf16, {2, 0}))
      rc = 1;
  }

  std::printf("\nsummary (%d thread%s; ratio = PyTorch time / attnc time, above 1: attnc "
              "faster)\n",
              threads, threads == 1 ? "" : "s");
  std::printf("  %-14s %12s %12s %8s %8s\n", "", "attnc ms", "PyTorch ms", "ratio", "target");
  auto row = [&](const char *what, double a, double t, const char *target) {
    if (t > 0)
      std::printf("  %-14s %12.1f %12.1f %8.2f %8s\n", what, a * 1e3, t * 1e3, t / a, target);
    else
      std::printf("  %-14s %12.1f %12s %8s %8s\n", what, a * 1e3, "-", "-", target);
  };
  row("train step", mAttn, mTorch, "1.5");
  row("greedy 32 tok", mdAttn, mdTorch, "5");
  row("greedy, cached", mdAttn, mdCached, "-");
  if (mdInt8 > 0)
    row("greedy int8", mdInt8, mdTorchInt8, "-");

  std::printf("  attention fusion speeds attnc's train step up %.2fx (unfused %.1f ms)\n",
              mUnfused / mFused, mUnfused * 1e3);
  std::printf("  attnc's train step: %.1f%% of the GEMM peak (%.1f GFLOP/s)\n",
              100 * side.flops["train_step"] / mAttn / 1e9 / calibration.peak(), calibration.peak());
  std::string sizes = " (length " + std::to_string(z.srcLen) + ")";
  bench::printTableRow(calibration, "Transformer train step" + sizes, side.flops["train_step"],
                       mAttn, &torchTrain, {1.5, 0});
  bench::printTableRow(calibration, "Transformer greedy decoding vs `nn.Transformer`" + sizes,
                       decodeFlops, mdAttn, &torchDecode, {5, 0}, /*torchSameWork=*/false);
  bench::printTableRow(calibration, "Transformer greedy decoding vs a cached PyTorch loop" + sizes,
                       decodeFlops, mdAttn, &torchCached);
  return rc;
}
