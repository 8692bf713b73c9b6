// `attnc train` end to end, as a user runs it: the RNN sine model trains to a low validation
// loss; --resume continues exactly like the uninterrupted run; SIGKILL during checkpoint
// saves never leaves an unreadable checkpoint; a NaN loss stops training and keeps the last
// good checkpoint; early stopping; the character LM learns its text and samples from it.
#include "AttncProcess.h"

#include "attn/Cpu.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/train/MetricsLog.h"
#include "tests/support/CpuFeatures.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kModel = std::string(ATTN_SOURCE_DIR) + "/models/rnn-sine.yaml";

std::string scratch(const std::string &name) { return e2e::scratch("training", name); }
using e2e::attnc;
using e2e::shell;

std::map<int64_t, double> losses(const std::string &dir) {
  std::map<int64_t, double> out;
  for (const attn::train::Record &r : attn::train::readMetrics(dir + "/metrics.jsonl"))
    out[r.step] = r.loss;
  return out;
}

// A regressor's report, "<name>: forecasting N validation windows: MSE X (repeating the last
// value: Y); per step: 1: e1 2: e2 ..." (or "generating from N validation vectors: MSE X
// (predicting 0: Y)"): X, Y and the per-step errors; found is false without such a line.
struct SeriesReport {
  bool found = false;
  double mse = NAN, baseline = NAN;
  std::vector<double> perStep;
};
SeriesReport seriesReport(const std::string &out) {
  SeriesReport r;
  size_t at = out.find(": MSE ");
  if (at == std::string::npos)
    return r;
  std::string line = out.substr(at + 6, out.find('\n', at) - at - 6);
  size_t baseline = line.find(": "), perStep = line.find("per step:");
  if (baseline == std::string::npos)
    return r;
  r.found = true;
  r.mse = std::strtod(line.c_str(), nullptr);
  r.baseline = std::strtod(line.c_str() + baseline + 2, nullptr);
  if (perStep != std::string::npos) {
    std::istringstream steps(line.substr(perStep + 9));
    std::string label;
    for (double err; steps >> label >> err;) // "k:" and step k's MSE
      r.perStep.push_back(err);
  }
  return r;
}

TEST(Training, RnnSineReachesLowValidationLoss) {
  std::string dir = scratch("converge"), out;
  ASSERT_EQ(attnc("train " + kModel + " --steps 800 --out " + dir, &out), 0) << out;
  EXPECT_NE(out.find("done at step 800"), std::string::npos) << out;
  double lastValid = NAN;
  for (const attn::train::Record &r : attn::train::readMetrics(dir + "/metrics.jsonl"))
    if (!std::isnan(r.get("valid_loss")))
      lastValid = r.get("valid_loss");
  // The untrained model's validation MSE is ~0.5 (targets are sin values).
  EXPECT_LT(lastValid, 2e-3);
  for (const char *file : {"last.safetensors", "best.safetensors", "metrics.jsonl", "loss.png"})
    EXPECT_TRUE(fs::exists(dir + "/" + file)) << file;

  out.clear();
  ASSERT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_NE(out.find("rnn-sine: validation loss"), std::string::npos) << out;
}

// The best validation loss a run reports ("best validation loss X"); NaN without one.
double bestValidationLoss(const std::string &out) {
  size_t at = out.find("best validation loss ");
  return at == std::string::npos ? NAN : std::strtod(out.c_str() + at + 21, nullptr);
}

// The accuracy gate of bf16 training for a regressor (docs/precision.md): `name` in models/
// (trained with the overrides `extra`) reaches the f32 run's validation loss within 5%, or
// within what bfloat16 can resolve at all. bfloat16 keeps 8 significant bits, so every product of
// values near 1 is off by up to 2^-9: a prediction of the sine cannot be trusted below ~(2^-9)^2 =
// 4e-6 in MSE, whatever the training. The f32 runs end near 1e-6, on that floor.
void expectBf16RegressorReachesTheF32Loss(const std::string &name, const std::string &extra = "") {
  ATTN_SKIP_WITHOUT_BF16();
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/" + name + ".yaml" + extra;
  std::string f32 = scratch(name + "-f32"), bf16 = scratch(name + "-bf16"), out32, out16;
  ASSERT_EQ(attnc("train " + model + " --out " + f32, &out32), 0) << out32;
  ASSERT_EQ(attnc("train " + model + " --precision bf16 --out " + bf16, &out16), 0) << out16;
  double l32 = bestValidationLoss(out32), l16 = bestValidationLoss(out16);
  constexpr double kBf16Floor = 4e-6;
  EXPECT_LE(l16, std::max(1.05 * l32, kBf16Floor)) << out32 << out16;
  // And bf16 did round: the two runs are not the same computation.
  EXPECT_NE(losses(f32), losses(bf16));
}

// The MLP on the sine: its products all dense layers.
TEST(Precision, Bf16TrainingOfARegressorReachesTheF32ValidationLoss) {
  expectBf16RegressorReachesTheF32Loss("mlp-sine");
}

// Recurrent regressors, their layers on oneDNN's bf16 RNN primitives, forward and backward:
// the vanilla RNN on the sine (measured: 3.5e-6 against f32's 2.2e-6, both on the floor), and
// the two-layer LSTM forecasting 12 steps of a sum of sines over its first 500 steps (0.0801
// against 0.0806; its whole 2000 steps: 0.0604 against 0.0602).
TEST(Precision, Bf16TrainingOfRecurrentRegressorsReachesTheF32ValidationLoss) {
  expectBf16RegressorReachesTheF32Loss("rnn-sine");
  expectBf16RegressorReachesTheF32Loss("sines-forecast", " --steps 500");
}

// char-transformer over windows of 128 (full tiles) with the overrides `extra`, trained 40
// steps in f32 and in bf16: the bf16 program calls `kernel` (_bf16) and its backward, and its
// losses are the f32 run's within 1% at every step.
void expectBf16AttentionTrainsAsF32Does(const std::string &extra, const std::string &kernel,
                                        const std::string &name) {
  ATTN_SKIP_WITHOUT_BF16();
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/char-transformer.yaml", out;
  std::string sets = " --set data.window=128 --set train.batch_size=8 "
                     "--set model.transformer.dropout=0 --set train.eval_every=1000" +
                     extra;
  ASSERT_EQ(attnc("emit " + model + " --stage lowered --train --precision bf16" + sets, &out), 0)
      << out;
  EXPECT_NE(out.find("call @" + kernel + "_bf16("), std::string::npos);
  EXPECT_NE(out.find("call @" + kernel + "_backward_bf16("), std::string::npos);
  std::string f32 = scratch(name + "-f32"), bf16 = scratch(name + "-bf16");
  ASSERT_EQ(attnc("train " + model + sets + " --steps 40 --out " + f32, &out), 0) << out;
  ASSERT_EQ(attnc("train " + model + sets + " --steps 40 --precision bf16 --out " + bf16, &out), 0)
      << out;
  auto a = losses(f32), b = losses(bf16);
  ASSERT_EQ(a.size(), 40u);
  ASSERT_EQ(b.size(), 40u);
  for (int64_t s = 1; s <= 40; ++s)
    EXPECT_NEAR(b[s], a[s], 0.01 * a[s]) << "step " << s;
  EXPECT_NE(a, b); // bf16 did round
}

// The bf16 flash attention composed with autodiff: the decoder-only Transformer's attention
// forward and backward on the bf16 flash kernels (measured: within 1e-4).
TEST(Precision, Bf16FlashAttentionTrainsAsF32Does) {
  expectBf16AttentionTrainsAsF32Does("", "attn_rt_flash_attention", "window128");
}

// The same with an attention of the spec's own (ALiBi with a slope per head, a sliding window
// of 64): the _regions kernels' bf16 form, forward and backward, the slopes' gradients included.
TEST(Precision, Bf16RegionsTrainAsF32Does) {
  expectBf16AttentionTrainsAsF32Does(
      " --set 'model.transformer.attention.score_mod=\"score - slope[h] * abs(i - j)\"'"
      " --set 'model.transformer.attention.params={slope: {shape: [heads], init: alibi}}'"
      " --set model.transformer.attention.sliding_window=64",
      "attn_rt_flash_attention_regions", "regions");
}

// bf16 on a CPU without AVX512_BF16 is refused where it was asked for, not run slowly: here
// for the target of an ahead-of-time compile (Skylake-AVX512 has AVX-512 but no bf16).
TEST(Precision, Bf16ForACpuWithoutTheInstructionsIsRefused) {
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/mlp-sine.yaml", out;
  std::string object = scratch("bf16-skx") + "/mlp.o";
  EXPECT_NE(attnc("compile " + model + " --precision bf16 --cpu skylake-avx512 -o " + object,
                  &out),
            0);
  EXPECT_NE(out.find("decode.precision is bf16, but the target CPU skylake-avx512 has no "
                     "AVX512_BF16 instructions"),
            std::string::npos)
      << out;
  // Where it was asked, as typed; and no second, vaguer error after it.
  EXPECT_NE(out.find("--precision bf16: error: decode.precision is bf16"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("does not compile"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(object));
  // f32 for the same CPU compiles.
  EXPECT_EQ(attnc("compile " + model + " --cpu skylake-avx512 -o " + object, &out), 0) << out;
}

// On a CPU without AVX512_BF16 (here one capped at x86-64-v3 by ATTN_MAX_CPU, as .ci/run's
// pass without AVX-512 does), `check` refuses a bf16 spec as `train` would, at the key that
// asked; and `train --precision bf16` names the flag as typed.
TEST(Precision, CheckRefusesWhatTrainWouldRefuseOnThisCpu) {
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/mlp-sine.yaml", out;
  std::string capped = "env ATTN_MAX_CPU=x86-64-v3 " + std::string(ATTNC) + " ";
  EXPECT_NE(shell(capped + "check " + model + " --set train.precision=bf16", &out), 0) << out;
  EXPECT_NE(out.find("--set train.precision:1:1: error: train.precision is bf16, but this CPU"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("has no AVX512_BF16 instructions"), std::string::npos) << out;
  EXPECT_EQ(out.find(": ok: "), std::string::npos) << out;
  std::string run = scratch("bf16-capped");
  EXPECT_NE(shell(capped + "train " + model + " --steps 1 --precision bf16 --out " + run, &out), 0);
  EXPECT_NE(out.find("--precision bf16: error: train.precision is bf16"), std::string::npos) << out;
  // And f32 checks fine there.
  EXPECT_EQ(shell(capped + "check " + model, &out), 0) << out;
}

// int8 needs AVX512_VNNI (skylake-avx512 has none; cascadelake has), and is for inference:
// train.precision has no int8.
TEST(Precision, Int8ForACpuWithoutTheInstructionsOrForTrainingIsRefused) {
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/mlp-sine.yaml", out;
  std::string object = scratch("int8-skx") + "/mlp.o";
  EXPECT_NE(attnc("compile " + model + " --precision int8 --cpu skylake-avx512 -o " + object, &out),
            0);
  EXPECT_NE(out.find("decode.precision is int8, but the target CPU skylake-avx512 has no "
                     "AVX512_VNNI instructions (avx512vnni)"),
            std::string::npos)
      << out;
  EXPECT_FALSE(fs::exists(object));
  EXPECT_EQ(attnc("compile " + model + " --precision int8 --cpu cascadelake -o " + object, &out), 0)
      << out;
  out.clear();
  EXPECT_NE(
      attnc("train " + model + " --precision int8 --steps 1 --out " + scratch("int8-train"), &out),
      0);
  EXPECT_NE(out.find("train.precision"), std::string::npos) << out;
  EXPECT_NE(out.find("int8"), std::string::npos) << out;
}

// The uninterrupted run and the resumed one of `model` (with `extra` options) agree exactly.
void expectResumeEqualsTheUninterruptedRun(const std::string &model, const std::string &name,
                                           const std::string &extra) {
  std::string whole = scratch(name + "-whole"), parts = scratch(name + "-parts"), out;
  std::string common = " --set train.checkpoint.every=50 --set train.eval_every=50" + extra;
  ASSERT_EQ(attnc("train " + model + " --steps 200 --out " + whole + common, &out), 0) << out;
  ASSERT_EQ(attnc("train " + model + " --steps 120 --out " + parts + common, &out), 0) << out;
  ASSERT_EQ(attnc("train " + model + " --steps 200 --resume --out " + parts + common, &out), 0)
      << out;
  EXPECT_NE(out.find("resuming from"), std::string::npos) << out;
  auto a = losses(whole), b = losses(parts);
  ASSERT_EQ(a.size(), 200u);
  ASSERT_EQ(b.size(), 200u);
  for (int64_t s = 1; s <= 200; ++s)
    EXPECT_EQ(a[s], b[s]) << "step " << s;
  // And the final parameters are bit-identical.
  auto x = attn::checkpoint::load(whole + "/last.safetensors");
  auto y = attn::checkpoint::load(parts + "/last.safetensors");
  ASSERT_EQ(x.tensors.size(), y.tensors.size());
  for (size_t i = 0; i < x.tensors.size(); ++i)
    EXPECT_EQ(0, std::memcmp(x.tensors[i].second.raw(), y.tensors[i].second.raw(),
                             x.tensors[i].second.nbytes()))
        << x.tensors[i].first;
}

// The seed's peephole LSTM ((3-3) and (3-4): full peephole matrices and a projection) runs as
// a generic scan and learns the sine: 1500 steps (about 10 s) bring the validation MSE from
// ~0.5 to below 1e-5 (2e-7 measured).
TEST(Training, SeedPeepholeLstmLearnsTheSine) {
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/seed-lstm-sine.yaml";
  std::string dir = scratch("seed-lstm"), out;
  ASSERT_EQ(attnc("train " + model + " --out " + dir, &out), 0) << out;
  double lastValid = NAN;
  for (const attn::train::Record &r : attn::train::readMetrics(dir + "/metrics.jsonl"))
    if (!std::isnan(r.get("valid_loss")))
      lastValid = r.get("valid_loss");
  EXPECT_LT(lastValid, 1e-5);
  auto ckpt = attn::checkpoint::load(dir + "/last.safetensors");
  const attn::Tensor *peephole = ckpt.find("rnn.layer1.w_peephole");
  ASSERT_NE(peephole, nullptr);
  EXPECT_EQ(peephole->shape(), (std::vector<int64_t>{32, 128}));
}

// The forecaster (models/sines-forecast.yaml: 48 samples in, 12 out, fed back) learns in a
// short run to beat the naive forecast (repeat the last value) by 3x over the horizon, and
// reports the error of every horizon step; `attnc run` prints 12 predictions per window.
// (The full 2000 steps reach MSE 0.06 against the naive 0.38; step 1: 0.006, the noise
// floor is 0.0025.)
TEST(Training, ForecasterBeatsTheNaiveForecastAtEveryHorizon) {
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/sines-forecast.yaml";
  std::string dir = scratch("forecast"), out;
  ASSERT_EQ(attnc("train " + model + " --steps 600 --set train.eval_every=300 --out " + dir, &out),
            0)
      << out;
  SeriesReport report = seriesReport(out);
  ASSERT_TRUE(report.found && out.find("validation windows") != std::string::npos) << out;
  EXPECT_GT(report.baseline, 0.2) << out;
  EXPECT_LT(report.mse, report.baseline / 3) << out;
  ASSERT_EQ(report.perStep.size(), 12u) << out;
  EXPECT_LT(report.perStep[0], 0.03) << out;

  out.clear();
  ASSERT_EQ(attnc("run " + model + " --ckpt " + dir, &out), 0) << out;
  EXPECT_NE(out.find("target[11]"), std::string::npos) << out;
  EXPECT_NE(out.find("output[11]"), std::string::npos) << out;
}

// A forecaster trained on the user's own series (data.path: a CSV with a header): it reads the
// file's windows, validates on its end and beats the naive forecast there; a series too short
// for its splits is an error that names the file, not a crash.
TEST(Training, ForecasterLearnsAUsersSeriesFile) {
  std::string dir = scratch("series"), out;
  std::filesystem::create_directories(dir);
  {
    std::ofstream csv(dir + "/series.csv");
    csv << "value,note\n";
    for (int t = 0; t < 1500; ++t)
      csv << std::sin(0.07 * t) + 0.5 * std::sin(0.23 * t + 1) << ",x\n";
  }
  std::ofstream(dir + "/model.yaml")
      << "name: series-forecast\ntask: regress\n"
         "data: {path: series.csv, window: 24, horizon: 6, valid: 100}\n"
         "model:\n  rnn: {cell: lstm, hidden: 32}\n"
         "train: {batch_size: 32, steps: 400, optimizer: {type: adam, lr: 0.005}, "
         "eval_every: 200}\n";
  ASSERT_EQ(attnc("train " + dir + "/model.yaml --out " + dir + "/run", &out), 0) << out;
  SeriesReport report = seriesReport(out);
  ASSERT_TRUE(report.found && out.find("forecasting 100 validation windows") != std::string::npos)
      << out;
  EXPECT_LT(report.mse, report.baseline / 3) << out;

  out.clear();
  EXPECT_NE(
      attnc("train " + dir + "/model.yaml --set data.valid=1500 --out " + dir + "/short", &out), 0);
  EXPECT_NE(out.find("series.csv: error: 1500 values hold 1471 windows"), std::string::npos) << out;
}

// One to many (models/wave-generator.yaml: a wave of 32 samples from (a, w, cos phi, sin phi)),
// with the vector at the first step only and at every step: both learn it, to below 1/30 of
// the error of predicting 0 (measured: MSE 0.0017 and 0.0021 against 0.285).
TEST(Training, OneToManyGeneratesTheWaveFromItsVector) {
  std::string model = std::string(ATTN_SOURCE_DIR) + "/models/wave-generator.yaml";
  for (const char *feed : {"first_step", "every_step"}) {
    std::string dir = scratch(std::string("wave-") + feed), out;
    ASSERT_EQ(attnc("train " + model + " --set model.rnn.feed=" + feed + " --out " + dir, &out), 0)
        << out;
    SeriesReport report = seriesReport(out);
    ASSERT_TRUE(report.found && out.find("(predicting 0: ") != std::string::npos) << out;
    EXPECT_GT(report.baseline, 0.2) << feed << "\n" << out;
    EXPECT_LT(report.mse, report.baseline / 30) << feed << "\n" << out;
  }
}

// One to many from a file (data.path with data.features): lines of a vector (a, w, cos phi,
// sin phi) and its 32 samples a sin(w t + phi), written here, comma-separated with a comment
// line; the model learns them as it learns the builtin wave, and runs on a file of vectors.
TEST(Training, OneToManyLearnsFromAFileOfVectors) {
  std::string dir = scratch("wave-file"), out;
  fs::create_directories(dir);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  {
    std::ofstream csv(dir + "/waves.csv");
    csv << "# a, w, cos phi, sin phi, then 32 samples\n";
    for (int i = 0; i < 2400; ++i) {
      double a = 0.5 + 0.5 * u(rng), w = 0.1 + 0.4 * u(rng), phi = 2 * M_PI * u(rng);
      csv << a << "," << w << "," << std::cos(phi) << "," << std::sin(phi);
      for (int t = 0; t < 32; ++t)
        csv << "," << a * std::sin(w * t + phi);
      csv << "\n";
    }
    std::ofstream(dir + "/vectors.txt") << "0.8 0.3 1 0\n0.6, 0.2, 0, 1\n";
    std::ofstream(dir + "/wave-file.yaml")
        << "name: wave-file\ntask: regress\n"
           "data: {path: waves.csv, features: 4, horizon: 32, valid: 400}\n"
           "model:\n  rnn: {cell: lstm, hidden: 64, feed: first_step}\n  output: {size: 1}\n"
           "train:\n  batch_size: 32\n  steps: 1000\n  optimizer: {type: adam, lr: 0.003}\n"
           "  schedule: {type: cosine, warmup: 100, min_lr: 0.0001}\n  clip_norm: 1.0\n"
           "  eval_every: 500\n";
  }
  std::string spec = dir + "/wave-file.yaml";
  ASSERT_EQ(attnc("train " + spec + " --out " + dir + "/run", &out), 0) << out;
  SeriesReport report = seriesReport(out);
  ASSERT_TRUE(report.found &&
              out.find("generating from 400 validation vectors") != std::string::npos)
      << out;
  EXPECT_GT(report.baseline, 0.2) << out;
  EXPECT_LT(report.mse, report.baseline / 30) << out;
  ASSERT_EQ(attnc("run " + spec + " --ckpt " + dir + "/run --input " + dir + "/vectors.txt", &out),
            0)
      << out;
  EXPECT_NE(out.find("forward on 2 examples"), std::string::npos) << out;
  // A line of another width is an error at its line.
  std::ofstream(dir + "/short.csv") << "0.8,0.3,1,0,0.1\n";
  EXPECT_NE(
      attnc("train " + spec + " --set data.path=" + dir + "/short.csv --out " + dir + "/r2", &out),
      0);
  EXPECT_NE(out.find("short.csv:1: error: expected 36 numbers, got 5"), std::string::npos) << out;
}

TEST(Training, ResumeEqualsTheUninterruptedRun) {
  expectResumeEqualsTheUninterruptedRun(kModel, "resume", "");
}

// Dropout masks are drawn from (seed, step): a resumed run draws the same ones.
TEST(Training, ResumeWithDropoutEqualsTheUninterruptedRun) {
  std::string lstm = std::string(ATTN_SOURCE_DIR) + "/models/lstm-sine.yaml";
  expectResumeEqualsTheUninterruptedRun(lstm, "dropout", " --set model.rnn.dropout=0.3");
}

TEST(Training, KilledDuringCheckpointSavesStillResumes) {
  std::string dir = scratch("killed"), out;
  std::string args = "train " + kModel + " --steps 100000 --out " + dir +
                     " --set train.checkpoint.every=1 --set train.eval_every=1000000";
  std::mt19937 rng(3);
  int kills = 0;
  for (int round = 0; round < 5; ++round) {
    pid_t pid = fork();
    if (pid == 0) {
      std::string cmd = std::string(ATTNC) + " " + args + (round ? " --resume" : "");
      execl("/bin/sh", "sh", "-c", ("exec " + cmd + " > /dev/null 2>&1").c_str(), nullptr);
      _exit(127);
    }
    // Wait until this run has saved a checkpoint of its own (compiling takes a moment), then
    // kill it at a random moment: with a save every step, most likely during one.
    auto savedStep = [&]() -> int64_t {
      if (!fs::exists(dir + "/last.safetensors"))
        return 0;
      return std::stoll(attn::checkpoint::load(dir + "/last.safetensors").metadata.at("step"));
    };
    int64_t before = savedStep();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (savedStep() <= before && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    kills += WIFSIGNALED(status);
    if (!fs::exists(dir + "/last.safetensors"))
      continue;
    auto ckpt = attn::checkpoint::load(dir + "/last.safetensors"); // throws if torn
    EXPECT_GT(std::stoll(ckpt.metadata.at("step")), 0);
  }
  EXPECT_GE(kills, 4);
  ASSERT_TRUE(fs::exists(dir + "/last.safetensors"));
  int64_t saved = std::stoll(attn::checkpoint::load(dir + "/last.safetensors").metadata.at("step"));
  out.clear();
  ASSERT_EQ(attnc("train " + kModel + " --steps " + std::to_string(saved + 5) + " --resume --out " +
                      dir + " --set train.checkpoint.every=1 --set train.eval_every=1000000",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("resuming from"), std::string::npos) << out;
  EXPECT_EQ(std::stoll(attn::checkpoint::load(dir + "/last.safetensors").metadata.at("step")),
            saved + 5);
  // The killed saves' temporaries are gone (their writers are dead).
  for (const auto &entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << entry.path();
}

// A run killed at random moments and resumed each time, with validation and early stopping
// on, ends exactly where the uninterrupted run does: the same last and best checkpoints, bit
// for bit, and the same metrics (but the wall-clock times). best_valid used to be stored with
// 6 decimals, so a resumed run could stop early at another step. ATTN_KILL_ROUNDS sets the
// number of kills (default 6; the closing note of the robustness issue ran 25).
// `args` (an attnc train command without --out) run whole into scratch(name + "-whole"), and
// killed and resumed into scratch(name + "-parts").
void expectKilledAndResumedRunEqualsTheWholeOne(const std::string &args, const std::string &name) {
  const char *env = std::getenv("ATTN_KILL_ROUNDS");
  int rounds = env ? std::atoi(env) : 6;
  std::string whole = scratch(name + "-whole"), parts = scratch(name + "-parts"), out;
  ASSERT_EQ(attnc(args + " --out " + whole, &out), 0) << out;
  auto stepOf = [](const std::string &file) -> int64_t {
    return fs::exists(file) ? std::stoll(attn::checkpoint::load(file).metadata.at("step")) : 0;
  };
  std::mt19937 rng(11);
  int kills = 0;
  bool finished = false;
  for (int round = 0; round < rounds && !finished; ++round) {
    pid_t pid = fork();
    if (pid == 0) {
      std::string cmd = std::string(ATTNC) + " " + args + " --out " + parts +
                        (round ? " --resume" : "");
      execl("/bin/sh", "sh", "-c", ("exec " + cmd + " > /dev/null 2>&1").c_str(), nullptr);
      _exit(127);
    }
    // Let it save once more (compiling takes a moment), then kill it at a random moment.
    int64_t before = stepOf(parts + "/last.safetensors");
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (stepOf(parts + "/last.safetensors") <= before &&
           std::chrono::steady_clock::now() < deadline && waitpid(pid, &status, WNOHANG) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // A few milliseconds: a dozen steps, so that many rounds fit in the run.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 8000));
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    kills += WIFSIGNALED(status);
    finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!finished)
    ASSERT_EQ(attnc(args + " --out " + parts + " --resume", &out), 0) << out;
  std::printf("killed %d times in %d rounds\n", kills, rounds);
  EXPECT_GE(kills, rounds / 2);

  for (const char *name : {"last.safetensors", "best.safetensors"}) {
    auto a = attn::checkpoint::load(whole + "/" + name), b = attn::checkpoint::load(parts + "/" + name);
    EXPECT_EQ(a.metadata.at("step"), b.metadata.at("step")) << name;
    EXPECT_EQ(a.metadata.at("best_valid"), b.metadata.at("best_valid")) << name;
    ASSERT_EQ(a.tensors.size(), b.tensors.size()) << name;
    for (size_t i = 0; i < a.tensors.size(); ++i)
      EXPECT_EQ(0, std::memcmp(a.tensors[i].second.raw(), b.tensors[i].second.raw(),
                               a.tensors[i].second.nbytes()))
          << name << ": " << a.tensors[i].first;
  }
  auto ra = attn::train::readMetrics(whole + "/metrics.jsonl");
  auto rb = attn::train::readMetrics(parts + "/metrics.jsonl");
  ASSERT_EQ(ra.size(), rb.size());
  for (size_t i = 0; i < ra.size(); ++i) {
    ra[i].time = rb[i].time = 0;
    EXPECT_EQ(attn::train::formatRecord(ra[i]), attn::train::formatRecord(rb[i]));
  }
}

TEST(Training, KilledAndResumedRunsEqualTheUninterruptedOne) {
  expectKilledAndResumedRunEqualsTheWholeOne(
      "train " + kModel + " --steps 3000 --set train.checkpoint.every=7" +
          " --set train.eval_every=10 --set train.early_stopping.patience=4" +
          " --set train.early_stopping.min_delta=0.00001",
      "kill");
}

// The same for a streamed corpus (data.stream): its batches come from the file through the
// index the first round built in the run directory, in blocks smaller than an epoch, and
// the resumed rounds read the same pairs at the same steps.
TEST(Training, KilledAndResumedStreamedRunEqualsTheUninterruptedOne) {
  std::string dir = scratch("stream-data");
  std::mt19937 rng(4);
  std::ofstream tsv(dir + "/pairs.tsv");
  for (int i = 0; i < 2000; ++i) {
    int n = 1 + (int)(rng() % 6); // 6: longer than max_len, dropped
    std::string source, target;
    for (int k = 0; k < n; ++k) {
      int w = (int)(rng() % 9);
      source += (k ? " s" : "s") + std::to_string(w);
      target = "t" + std::to_string(w) + (k ? " " : "") + target;
    }
    tsv << source << "\t" << target << (i % 3 ? "\n" : "\r\n");
  }
  tsv.close();
  std::ofstream(dir + "/stream.yaml")
      << "name: stream\ntask: seq2seq\n"
      << "data: {path: pairs.tsv, valid: 100, max_len: 5, stream: true, stream_buffer: 300}\n"
      << "model:\n  embedding: {dim: 16}\n  rnn: {cell: gru, hidden: 32}\n"
      << "train:\n  batch_size: 16\n  steps: 1500\n  eval_every: 10\n"
      << "  checkpoint: {every: 7}\n";
  expectKilledAndResumedRunEqualsTheWholeOne("train " + dir + "/stream.yaml", "stream");
}

// The run directory belongs to one run: a finished run is not replaced without --overwrite,
// --resume needs something to resume, a second trainer is refused while one runs, and a
// resume under another model or other training settings is refused naming the keys.
TEST(Training, RunDirectoriesAreNotLostOrMixed) {
  std::string dir = scratch("guard"), out;
  std::string common = " --out " + dir + " --set train.checkpoint.every=10";
  EXPECT_EQ(attnc("train " + kModel + " --steps 10 --resume" + common, &out), 1);
  EXPECT_NE(out.find("nothing to resume"), std::string::npos) << out;
  ASSERT_EQ(attnc("train " + kModel + " --steps 20" + common, &out), 0) << out;
  out.clear();
  EXPECT_EQ(attnc("train " + kModel + " --steps 20" + common, &out), 1);
  EXPECT_NE(out.find("already holds a run"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(attnc("train " + kModel + " --steps 30 --resume" + common +
                      " --set train.optimizer.lr=0.25",
                  &out),
            1);
  EXPECT_NE(out.find("train.optimizer.lr: 0.002 in the checkpoint, 0.25 from --set "
                     "train.optimizer.lr"),
            std::string::npos)
      << out;
  out.clear();
  EXPECT_EQ(attnc("train " + kModel + " --steps 30 --resume" + common +
                      " --set model.rnn.hidden=8",
                  &out),
            1);
  EXPECT_NE(out.find("model.rnn.hidden: 32 in the checkpoint, 8 from --set model.rnn.hidden"),
            std::string::npos)
      << out;
  // --steps below the run's: nothing trained, nothing rewritten.
  auto metricsBefore = fs::last_write_time(dir + "/metrics.jsonl");
  out.clear();
  EXPECT_EQ(attnc("train " + kModel + " --steps 5 --resume" + common, &out), 0) << out;
  EXPECT_NE(out.find("nothing to train"), std::string::npos) << out;
  EXPECT_EQ(fs::last_write_time(dir + "/metrics.jsonl"), metricsBefore);
  EXPECT_EQ(losses(dir).size(), 20u);
  // A torn last line (a power loss) and rows past the checkpoint are dropped on resume.
  {
    std::ofstream log(dir + "/metrics.jsonl", std::ios::app);
    log << "{\"step\": 21, \"loss\": 0.5, \"lr\": 0.001, \"grad_norm\": 1, \"time\": 1}\n{\"step\": 2";
  }
  out.clear();
  ASSERT_EQ(attnc("train " + kModel + " --steps 30 --resume" + common, &out), 0) << out;
  auto records = attn::train::readMetrics(dir + "/metrics.jsonl");
  ASSERT_EQ(records.size(), 30u);
  for (size_t i = 0; i < records.size(); ++i)
    EXPECT_EQ(records[i].step, (int64_t)i + 1);
  // Two trainers, one directory: the second is refused while the first runs. The first is
  // known to run (and to hold the directory) once it has written a new metrics file; the old
  // one goes first, or a slow start (a loaded machine) would pass for a running trainer.
  fs::remove(dir + "/metrics.jsonl");
  pid_t pid = fork();
  if (pid == 0) {
    std::string cmd = std::string(ATTNC) + " train " + kModel + " --steps 200000 --overwrite" +
                      common;
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " > /dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(dir + "/metrics.jsonl") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  out.clear();
  EXPECT_EQ(attnc("train " + kModel + " --steps 10 --overwrite" + common, &out), 1);
  EXPECT_NE(out.find("another attnc train is writing this run directory"), std::string::npos)
      << out;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(Training, NanLossStopsAndKeepsTheLastGoodCheckpoint) {
  std::string dir = scratch("nan"), out;
  std::string common = " --out " + dir + " --set train.checkpoint.every=10 --set train.eval_every=10";
  ASSERT_EQ(attnc("train " + kModel + " --steps 20" + common, &out), 0) << out;
  out.clear();
  // SGD with an absurd learning rate diverges within a few steps.
  int rc = attnc("train " + kModel + " --steps 60 --resume --accept-changes" + common +
                     " --set train.optimizer.type=sgd --set train.optimizer.lr=1e30",
                 &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("the loss became"), std::string::npos) << out;
  auto ckpt = attn::checkpoint::load(dir + "/last.safetensors");
  int64_t step = std::stoll(ckpt.metadata.at("step"));
  EXPECT_GE(step, 20);
  for (auto &[name, t] : ckpt.tensors)
    for (int64_t i = 0; i < t.numel(); ++i)
      ASSERT_TRUE(std::isfinite(t.data<float>()[i])) << name << " at step " << step;
}

// train.eval_every: 0 turns validation off: no valid_loss, no best.safetensors, and the verbs
// read last.safetensors; early stopping, which needs validation, is refused with it.
TEST(Training, EvalEveryZeroTurnsValidationOff) {
  std::string dir = scratch("no-validation"), out;
  ASSERT_EQ(attnc("train " + kModel + " --steps 4 --set train.eval_every=0 --out " + dir, &out), 0)
      << out;
  EXPECT_FALSE(fs::exists(dir + "/best.safetensors"));
  EXPECT_TRUE(fs::exists(dir + "/last.safetensors"));
  for (const attn::train::Record &r : attn::train::readMetrics(dir + "/metrics.jsonl"))
    EXPECT_TRUE(std::isnan(r.get("valid_loss"))) << "step " << r.step;
  EXPECT_EQ(attnc("eval --ckpt " + dir, &out), 0) << out;
  EXPECT_NE(attnc("check " + kModel +
                      " --set train.eval_every=0 --set train.early_stopping.patience=2",
                  &out),
            0);
  EXPECT_NE(out.find("train.eval_every: 0 turns off"), std::string::npos) << out;
}

TEST(Training, EarlyStoppingEndsARunThatStopsImproving) {
  std::string dir = scratch("early"), out;
  // No validation pass can improve on the first by 10: the run stops at the second.
  ASSERT_EQ(attnc("train " + kModel + " --steps 500 --out " + dir +
                      " --set train.eval_every=10 --set train.early_stopping.patience=1"
                      " --set train.early_stopping.min_delta=10",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("done at step 20 (early stop)"), std::string::npos) << out;
  EXPECT_EQ(losses(dir).size(), 20u);
  auto best = attn::checkpoint::load(dir + "/best.safetensors");
  EXPECT_EQ(best.metadata.at("step"), "10");
  EXPECT_EQ(attn::checkpoint::load(dir + "/last.safetensors").metadata.at("step"), "20");
}

TEST(Training, CharRnnLearnsTheTextAndSamplesFromIt) {
  std::string lm = std::string(ATTN_SOURCE_DIR) + "/models/char-rnn.yaml";
  std::string dir = scratch("char-rnn"), out;
  ASSERT_EQ(attnc("train " + lm + " --steps 400 --out " + dir +
                      " --set train.eval_every=100 --set train.checkpoint.every=400",
                  &out),
            0)
      << out;
  auto records = attn::train::readMetrics(dir + "/metrics.jsonl");
  ASSERT_EQ(records.size(), 400u);
  // A uniform guess over the ~40 characters costs ln(40) = 3.7 nats; the model must do far
  // better on the text it trains on.
  double early = 0, late = 0;
  for (int i = 0; i < 20; ++i) {
    early += records[i].loss / 20;
    late += records[records.size() - 1 - i].loss / 20;
  }
  EXPECT_GT(early, 3.0);
  EXPECT_LT(late, 1.6);

  // Sampling: the requested length, characters of the corpus, the same text for the same seed.
  std::string a, b, c;
  ASSERT_EQ(attnc("run " + lm + " --ckpt " + dir + "/last.safetensors --count 120 --sample-seed 5", &a), 0) << a;
  ASSERT_EQ(attnc("run " + lm + " --ckpt " + dir + "/last.safetensors --count 120 --sample-seed 5", &b), 0) << b;
  ASSERT_EQ(attnc("run " + lm + " --ckpt " + dir + "/last.safetensors --count 120 --sample-seed 6", &c), 0) << c;
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::string text = a.substr(a.find('\n') + 1);
  ASSERT_EQ(text.rfind("The ", 0), 0u) << text;
  EXPECT_EQ(text.size(), std::string("The ").size() + 120 + 1) << text; // + the newline
}

// A language model of a text of the user's (data.path): a small language whose lines follow
// one pattern, learned as words (validation loss far below a uniform guess over the
// vocabulary, on the held-out last tenth) and sampled from a prime, the same text for the
// same seed; the checkpoint carries the vocabulary, so `run --ckpt` needs no spec, and an
// executable samples what attnc samples. Characters and BPE subwords train and sample too.
TEST(Training, ALanguageModelLearnsItsOwnText) {
  std::string dir = scratch("own-text"), out;
  {
    std::ofstream text(dir + "/story.txt");
    const char *who[] = {"the cat", "a dog", "the bird", "my friend"};
    const char *does[] = {"sat on the mat", "ran to the park", "sang a song", "ate the bread"};
    for (int i = 0; i < 800; ++i)
      text << who[i % 4] << " " << does[(i / 4) % 4] << " .\n";
  }
  std::string spec = dir + "/lm.yaml";
  std::ofstream(spec) << "name: own-text\ntask: lm\n"
                         "data: {path: story.txt, tokens: word, window: 12, train: 2000, "
                         "valid: 100}\n"
                         "model: {embedding: {dim: 16}, rnn: {cell: gru, hidden: 48}}\n"
                         "train: {batch_size: 32, steps: 300, optimizer: {type: adam, "
                         "lr: 0.01}, eval_every: 100}\n"
                         "sample: {length: 8, temperature: 0.1, prime: \"the cat \"}\n";
  ASSERT_EQ(attnc("train " + spec + " --out " + dir + "/run", &out), 0) << out;
  EXPECT_NE(out.find("2000 training and 100 validation windows of 12 tokens"), std::string::npos)
      << out;
  // 17 words, "." and the end of line (and the 4 specials): a uniform guess costs ln(23) = 3.1.
  EXPECT_NE(out.find("a vocabulary of 23 word tokens"), std::string::npos) << out;
  std::string eval;
  ASSERT_EQ(attnc("eval --ckpt " + dir + "/run", &eval), 0) << eval;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(eval, m, std::regex("validation loss ([0-9.e+-]+)"))) << eval;
  EXPECT_LT(std::stod(m[1]), 0.8) << eval;
  std::string a, b;
  ASSERT_EQ(attnc("run --ckpt " + dir + "/run --sample-seed 4", &a), 0) << a;
  ASSERT_EQ(attnc("run --ckpt " + dir + "/run --sample-seed 4", &b), 0) << b;
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("own-text: 8 word tokens"), std::string::npos) << a;
  std::string text = a.substr(a.find('\n') + 1);
  EXPECT_EQ(text.rfind("the cat ", 0), 0u) << text;
  EXPECT_TRUE(text.find("sat on the mat") != std::string::npos ||
              text.find("ran to the park") != std::string::npos ||
              text.find("sang a song") != std::string::npos ||
              text.find("ate the bread") != std::string::npos)
      << text;
  // The executable: the same sample.
  ASSERT_EQ(attnc("compile --ckpt " + dir + "/run --exe -o " + dir + "/lm", &out), 0) << out;
  std::string viaExe;
  ASSERT_EQ(shell(dir + "/lm run --sample-seed 4", &viaExe), 0) << viaExe;
  EXPECT_EQ(viaExe.substr(viaExe.find('\n') + 1), text);
  // Characters and subwords: they train and sample from a prime.
  for (const char *tokens : {"char", "bpe"}) {
    std::string run = dir + "/run-" + tokens;
    ASSERT_EQ(attnc("train " + spec + " --steps 5 --set data.tokens=" + tokens +
                        (std::string(tokens) == "bpe" ? " --set data.vocab_size=30" : "") +
                        " --out " + run,
                    &out),
              0)
        << out;
    ASSERT_EQ(attnc("run --ckpt " + run + " --prime \"the dog\"", &out), 0) << out;
    EXPECT_NE(out.find(std::string(tokens) + " tokens at temperature"), std::string::npos) << out;
  }
}

} // namespace
