// attnc bench: the spec's train step (and a seq2seq model's greedy decoding) timed, with the
// FLOPs of the compiled program and the fraction of this run's GEMM peak they reach.
#include "Verbs.h"

#include "compiler/Driver/Measure.h"
#include "compiler/Driver/TaskConfig.h"

#include "attn/Program.h"
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

// decode.precision (bf16 or int8) against f32, on the same weights (`trained`'s) and the same
// sentences: the inference programs compiled both ways, greedy decoding timed in turns.
int benchDecodingPrecision(attn::driver::Session &session, const attn::driver::Model &trained,
                           const attn::task::PairData &data,
                           const std::vector<attn::task::Encoded> &sources, double flops,
                           int64_t decodes) {
  using attn::yaml::DecodePrecision;
  const attn::yaml::Spec &s = session.spec();
  DecodePrecision low = s.decode.precision;
  std::string lowName = attn::yaml::nameOf(low);
  double peak = low == DecodePrecision::Int8 ? attn::driver::gemmInt8Gops()
                                             : attn::driver::gemmGflops(1024, 7, /*bf16=*/true);
  std::printf("calibration: %s GEMM 1024^3: oneDNN (attnc's %s) %.1f G%s/s = the peak "
              "(decode.precision %s)\n",
              lowName.c_str(), low == DecodePrecision::Int8 ? "dense_int8" : "matmul_bf16", peak,
              low == DecodePrecision::Int8 ? "OP" : "FLOP", lowName.c_str());
  struct Side {
    std::unique_ptr<attn::driver::Model> model;
    std::vector<attn::Tensor> params;
    std::unique_ptr<attn::task::Seq2SeqDecoder> decoder;
    std::vector<double> times;
    std::vector<std::vector<attn::decode::Hypothesis>> outputs;
  };
  Side sides[2];
  DecodePrecision precisions[2] = {DecodePrecision::F32, low};
  for (int i = 0; i < 2; ++i) {
    sides[i].model = session.loadInferenceModel(precisions[i]);
    if (!sides[i].model)
      return 1;
    const attn::Program &program = *sides[i].model->program;
    sides[i].params = attn::paramsFor(program, *trained.program, trained.params);
    sides[i].decoder = std::make_unique<attn::task::Seq2SeqDecoder>(program, sides[i].params, data,
                                                                    attn::driver::decodeConfig(s));
  }
  for (int64_t k = 0; k < 1 + decodes; ++k) // in turns, the first untimed
    for (Side &side : sides) {
      double start = attn::driver::seconds();
      side.outputs = side.decoder->decode(sources);
      if (k > 0)
        side.times.push_back(attn::driver::seconds() - start);
    }
  size_t same = 0;
  for (size_t j = 0; j < sources.size(); ++j)
    same += sides[0].outputs[j][0].tokens == sides[1].outputs[j][0].tokens;
  double f32 = median(sides[0].times), lowTime = median(sides[1].times);
  std::printf("greedy decoding by the inference programs, f32: %s\n",
              times(sides[0].times).c_str());
  std::printf("greedy decoding by the inference programs, %s: %s = %.2fx f32; the same "
              "tokens on %zu of %zu sentences\n",
              lowName.c_str(), times(sides[1].times).c_str(), f32 / lowTime, same, sources.size());
  std::printf("  FLOPs per batch (%s): %s\n", lowName.c_str(), rate(flops, lowTime, peak).c_str());
  return 0;
}

} // namespace

int bench(attn::driver::Session &session, const Common &, const BenchOptions &o) {
  const attn::yaml::Spec &s = session.spec();
  attn::task::DataConfig dataConfig = session.dataConfig();
  bool pairs = attn::task::hasVocabularies(dataConfig);
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
    if (s.decode.precision != attn::yaml::DecodePrecision::F32)
      return benchDecodingPrecision(session, *model, *data, sources, decodeFlops, o.decodes);
  }
  return 0;
}

} // namespace attnc
