// attnc bench: the spec's train step (and a seq2seq model's greedy decoding) timed, with the
// FLOPs of the compiled program and the fraction of this run's GEMM peak they reach.
#include "Verbs.h"

#include "compiler/Driver/Measure.h"
#include "compiler/Driver/TaskConfig.h"

#include "attn/task/Data.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/StepInputs.h"
#include "attn/train/Schedule.h"
#include "attn/train/Trainer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace attnc {
namespace {

int threadCount() {
  const char *omp = std::getenv("OMP_NUM_THREADS");
  return omp && std::atoi(omp) > 0 ? std::atoi(omp)
                                   : (int)std::max(1u, std::thread::hardware_concurrency());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "T ms (min A, max B over N)"
std::string times(const std::vector<double> &v) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.3f ms (min %.3f, max %.3f over %zu)", median(v) * 1e3,
                *std::min_element(v.begin(), v.end()) * 1e3,
                *std::max_element(v.begin(), v.end()) * 1e3, v.size());
  return buf;
}

// "F GFLOP, R GFLOP/s = P% of peak"
std::string rate(double flops, double secs, double peak) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.4f GFLOP, %.1f GFLOP/s = %.1f%% of peak", flops / 1e9,
                flops / secs / 1e9, 100.0 * flops / secs / 1e9 / peak);
  return buf;
}

} // namespace

int bench(attn::driver::Session &session, const Common &, const BenchOptions &o) {
  const attn::yaml::Spec &s = session.spec();
  attn::task::DataConfig dataConfig = session.dataConfig();
  bool pairs = attn::task::usesPairs(dataConfig.task);
  const attn::task::PairData *data = pairs ? &session.trainingData() : nullptr;
  double t0 = attn::driver::seconds();
  if (!session.runTo(attn::driver::Stage::Grad))
    return 1;
  std::map<std::string, double> flops = attn::driver::entryFlops(session.module());
  std::unique_ptr<attn::driver::Model> model = session.loadModel(s.train.seed);
  if (!model)
    return 1;
  double compileSeconds = attn::driver::seconds() - t0;
  int threads = threadCount();
  std::printf("%s: compiled in %.1f s; %d thread%s\n", s.name.c_str(), compileSeconds, threads,
              threads == 1 ? "" : "s");
  // A bf16 program is measured against the bf16 GEMM: its products' own ceiling.
  bool bf16 = s.train.precision == attn::yaml::Precision::Bf16;
  double peak = attn::driver::gemmGflops();
  std::printf("calibration: f32 GEMM 1024^3: oneDNN (attnc's matmul) %.1f GFLOP/s%s\n", peak,
              bf16 ? "" : " = the peak");
  if (bf16) {
    peak = attn::driver::gemmGflops(1024, 7, /*bf16=*/true);
    std::printf("calibration: bf16 GEMM 1024^3: oneDNN (attnc's matmul_bf16) %.1f GFLOP/s = "
                "the peak (train.precision bf16)\n",
                peak);
  }

  attn::train::Split train = attn::task::trainSplit(dataConfig, data);
  attn::train::StepRunner runner(*model->program, model->params, train, s.train.seed,
                                 attn::task::perStepInputs(attn::driver::stepInputConfig(s)));
  attn::train::ScheduleSpec schedule;
  schedule.lr = s.train.optimizer.lr;
  std::vector<double> stepTimes;
  double firstLoss = 0, lastLoss = 0;
  for (int64_t k = 1; k <= o.warmup + o.steps; ++k) {
    double start = attn::driver::seconds();
    attn::train::StepRunner::Result r = runner.step(k, schedule.lr);
    double took = attn::driver::seconds() - start;
    if (k == 1)
      firstLoss = r.loss;
    lastLoss = r.loss;
    if (k > o.warmup)
      stepTimes.push_back(took);
  }
  std::printf("train step (batch %lld): %s; loss %.6g -> %.6g\n", (long long)s.train.batchSize,
              times(stepTimes).c_str(), firstLoss, lastLoss);
  std::printf("  FLOPs per step: %s\n",
              rate(flops["train_step"], median(stepTimes), peak).c_str());

  if (dataConfig.task == attn::task::Task::Seq2Seq) {
    attn::task::Seq2SeqDecoder decoder(*model->program, model->params, *data,
                                       attn::driver::decodeConfig(s));
    attn::task::DecodeConfig greedy = decoder.config();
    std::vector<attn::task::Encoded> sources;
    for (const attn::data::Pair &p : data->valid) {
      if ((int64_t)sources.size() == decoder.batchRows())
        break;
      try {
        sources.push_back(decoder.encode(p.source));
      } catch (const std::exception &) {
        // too long a source: not one the model reads
      }
    }
    if (sources.empty() || greedy.beam > 1) {
      std::printf("decoding: not timed (%s)\n",
                  sources.empty() ? "no validation source fits" : "beam search: decode.beam > 1");
      return 0;
    }
    std::vector<double> decodeTimes;
    size_t longest = 0;
    for (int64_t k = 0; k < 1 + o.decodes; ++k) {
      double start = attn::driver::seconds();
      auto decoded = decoder.decode(sources);
      double took = attn::driver::seconds() - start;
      if (k > 0)
        decodeTimes.push_back(took);
      for (const auto &h : decoded)
        longest = std::max(longest, h[0].tokens.size());
    }
    // Greedy decoding runs decode_step until every row has ended: the longest output and its
    // end token.
    double decodeFlops = flops["encode"] + (double)(longest + 1) * flops["decode_step"];
    std::printf("greedy decoding of %zu sentences (%lld rows, %zu steps): %s\n", sources.size(),
                (long long)decoder.batchRows(), longest + 1, times(decodeTimes).c_str());
    std::printf("  FLOPs per batch: %s\n", rate(decodeFlops, median(decodeTimes), peak).c_str());
  }
  return 0;
}

} // namespace attnc
