// The GPU kernels of layer norm, cross-entropy and Adam (runtime/cuda/TrainKernels.cuh)
// compiled as C++ over WarpEmulator.h, launched with the grids train_kernels.cu uses, against
// the ops' definitions in double (TrainReference.h). Runs in CI, where there is no GPU;
// train-kernels-test.cpp runs the same cases on one.
#include "WarpEmulator.h"
// After the emulator: the kernels are written over its primitives.
#include "../../runtime/cuda/TrainKernels.cuh"

#include "TrainReference.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using namespace attn::cuda;
using namespace attn::cuda::testing;
using emulator::Dim3;
using emulator::launch;
namespace k = attn::cuda::train;

std::vector<float> poisoned(size_t n) {
  std::vector<float> v(n);
  std::memset(v.data(), 0xff, n * sizeof(float)); // NaN
  return v;
}

class EmulatedLayerNorm : public ::testing::TestWithParam<LayerNormCase> {};

TEST_P(EmulatedLayerNorm, MatchesTheDefinition) {
  std::mt19937 rng(7);
  const LayerNormProblem p = makeLayerNorm(GetParam(), rng);
  const int64_t R = p.c.rows, D = p.c.dim;
  LayerNormOutputs got{poisoned(R * D), poisoned(R), poisoned(R),
                       poisoned(R * D), poisoned(D), poisoned(D)};
  launch(Dim3{unsigned(R), 1, 1}, k::kReduceShared, k::layerNormForward, D, p.c.epsilon, p.x.data(),
         p.gamma.data(), p.beta.data(), got.y.data(), got.mean.data(), got.rstd.data());
  launch(Dim3{unsigned(R), 1, 1}, k::kReduceShared, k::layerNormBackwardDx, D, p.x.data(),
         p.gamma.data(), static_cast<const float *>(got.mean.data()),
         static_cast<const float *>(got.rstd.data()), p.dy.data(), got.dx.data());
  const int64_t chunks = k::rowChunks(R);
  std::vector<float> partial = poisoned(2 * chunks * D);
  launch(Dim3{k::columnBlocks(D), unsigned(chunks), 1}, 0, k::layerNormBackwardPartials, R, D,
         p.x.data(), static_cast<const float *>(got.mean.data()),
         static_cast<const float *>(got.rstd.data()), p.dy.data(), partial.data(),
         partial.data() + chunks * D);
  launch(Dim3{k::columnBlocks(D), 1, 1}, 0, k::sumChunks, chunks, D,
         static_cast<const float *>(partial.data()), got.dgamma.data());
  launch(Dim3{k::columnBlocks(D), 1, 1}, 0, k::sumChunks, chunks, D,
         static_cast<const float *>(partial.data() + chunks * D), got.dbeta.data());
  for (const std::string &f : compare(p, got))
    ADD_FAILURE() << p.c.name << ": " << f;
}

class EmulatedCrossEntropy : public ::testing::TestWithParam<CrossEntropyCase> {};

TEST_P(EmulatedCrossEntropy, MatchesTheDefinition) {
  std::mt19937 rng(8);
  const CrossEntropyProblem p = makeCrossEntropy(GetParam(), rng);
  const int64_t R = p.c.rows, C = p.c.classes;
  std::vector<float> workspace = poisoned(3 * R + 1);
  const k::CrossEntropyWorkspace ws{workspace.data(), workspace.data() + R,
                                    workspace.data() + 2 * R, workspace.data() + 3 * R};
  CrossEntropyOutputs got{NAN, poisoned(R * C)};
  const CrossEntropyOptions &o = p.c.options;
  launch(Dim3{unsigned(R), 1, 1}, k::kReduceShared, k::crossEntropyRows, C, o.ignoreIndex,
         o.labelSmoothing, p.logits.data(), p.labels.data(), ws);
  launch(Dim3{1, 1, 1}, k::kReduceShared, k::crossEntropyMean, R, ws, &got.loss);
  launch(Dim3{unsigned(R), 1, 1}, 0, k::crossEntropyGrad, C, o.ignoreIndex, o.labelSmoothing,
         p.logits.data(), p.labels.data(), &p.grad, ws, got.dlogits.data());
  for (const std::string &f : compare(p, got))
    ADD_FAILURE() << p.c.name << ": " << f;
}

class EmulatedAdam : public ::testing::TestWithParam<AdamCase> {};

TEST_P(EmulatedAdam, MatchesTheDefinition) {
  std::mt19937 rng(9);
  const AdamProblem p = makeAdam(GetParam(), rng);
  AdamOutputs got{p.param, p.m, p.v};
  const AdamOptions &o = p.c.options;
  const k::AdamStep s{o.beta1,
                      o.beta2,
                      o.epsilon,
                      o.weightDecay,
                      p.c.lr,
                      1.0f - std::pow(o.beta1, float(p.c.step)),
                      1.0f - std::pow(o.beta2, float(p.c.step)),
                      o.decoupled};
  launch(Dim3{k::adamBlocks(p.c.n), 1, 1}, 0, k::adamUpdate, p.c.n, s, got.param.data(),
         p.grad.data(), got.m.data(), got.v.data());
  for (const std::string &f : compare(p, got))
    ADD_FAILURE() << p.c.name << ": " << f;
}

template <typename Case> std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  std::string name;
  for (const char *ch = info.param.name; *ch; ++ch)
    name += std::isalnum(static_cast<unsigned char>(*ch)) ? *ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Conformance, EmulatedLayerNorm, ::testing::ValuesIn(layerNormCases()),
                         caseName<LayerNormCase>);
INSTANTIATE_TEST_SUITE_P(Conformance, EmulatedCrossEntropy,
                         ::testing::ValuesIn(crossEntropyCases()), caseName<CrossEntropyCase>);
INSTANTIATE_TEST_SUITE_P(Conformance, EmulatedAdam, ::testing::ValuesIn(adamCases()),
                         caseName<AdamCase>);

} // namespace
