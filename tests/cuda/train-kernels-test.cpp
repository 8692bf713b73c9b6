// The GPU kernels of layer norm, cross-entropy and Adam (attn/cuda/Kernels.h) on a GPU, against
// the ops' definitions in double (TrainReference.h), every output poisoned with NaN first and
// every case run twice for the same bits. A plain program, like flash-attention-test.cpp (the
// GPU machine has no GoogleTest): exit 0 pass, 1 fail, 77 no GPU.
#include "GpuTest.h"
#include "TrainReference.h"

#include <cuda_runtime_api.h>

#include <cstring>

using namespace attn::cuda;
using namespace attn::cuda::testing;

namespace {

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

LayerNormOutputs runLayerNorm(const LayerNormProblem &p) {
  const int64_t R = p.c.rows, D = p.c.dim;
  DeviceBuffer x = uploaded(p.x), gamma = uploaded(p.gamma), beta = uploaded(p.beta),
               dy = uploaded(p.dy);
  DeviceBuffer y = poisonedFloats(R * D), mean = poisonedFloats(R), rstd = poisonedFloats(R),
               dx = poisonedFloats(R * D), dgamma = poisonedFloats(D), dbeta = poisonedFloats(D),
               workspace(layerNormBackwardWorkspace(R, D));
  check(layerNormForward(R, D, p.c.epsilon, x.as<float>(), gamma.as<float>(), beta.as<float>(),
                         y.as<float>(), mean.as<float>(), rstd.as<float>()),
        "layer_norm");
  check(layerNormBackward(R, D, x.as<float>(), gamma.as<float>(), mean.as<float>(),
                          rstd.as<float>(), dy.as<float>(), dx.as<float>(), dgamma.as<float>(),
                          dbeta.as<float>(), workspace.data()),
        "layer_norm backward");
  check(synchronize(), "layer_norm");
  return {downloaded<float>(y, R * D),  downloaded<float>(mean, R),   downloaded<float>(rstd, R),
          downloaded<float>(dx, R * D), downloaded<float>(dgamma, D), downloaded<float>(dbeta, D)};
}

CrossEntropyOutputs runCrossEntropy(const CrossEntropyProblem &p) {
  const int64_t R = p.c.rows, C = p.c.classes;
  DeviceBuffer logits = uploaded(p.logits), labels = uploaded(p.labels),
               grad = uploaded(std::vector<float>{p.grad}), loss = poisonedFloats(1),
               dlogits = poisonedFloats(R * C), workspace(crossEntropyWorkspace(R));
  check(crossEntropyForward(R, C, p.c.options, logits.as<float>(), labels.as<int32_t>(),
                            loss.as<float>(), workspace.data()),
        "cross_entropy");
  check(crossEntropyBackward(R, C, p.c.options, logits.as<float>(), labels.as<int32_t>(),
                             grad.as<float>(), workspace.data(), dlogits.as<float>()),
        "cross_entropy_grad");
  check(synchronize(), "cross_entropy");
  return {downloaded<float>(loss, 1)[0], downloaded<float>(dlogits, R * C)};
}

AdamOutputs runAdam(const AdamProblem &p) {
  DeviceBuffer param = uploaded(p.param), grad = uploaded(p.grad), m = uploaded(p.m),
               v = uploaded(p.v);
  check(adamUpdate(p.c.n, p.c.options, p.c.lr, p.c.step, param.as<float>(), grad.as<float>(),
                   m.as<float>(), v.as<float>()),
        "adam_update");
  check(synchronize(), "adam_update");
  return {downloaded<float>(param, p.c.n), downloaded<float>(m, p.c.n),
          downloaded<float>(v, p.c.n)};
}

} // namespace

int main() {
  if (skipWithoutDevice())
    return 77;
  std::mt19937 rng(20261203);
  for (const LayerNormCase &c : layerNormCases()) {
    std::printf("  layer_norm %s: [%lld, %lld]\n", c.name, (long long)c.rows, (long long)c.dim);
    const LayerNormProblem p = makeLayerNorm(c, rng);
    const LayerNormOutputs a = runLayerNorm(p), b = runLayerNorm(p);
    for (const std::string &f : compare(p, a))
      fail(f);
    if (!sameBits(a.dx, b.dx) || !sameBits(a.dgamma, b.dgamma) || !sameBits(a.dbeta, b.dbeta))
      fail("layer_norm: two runs gave different bits");
  }
  for (const CrossEntropyCase &c : crossEntropyCases()) {
    std::printf("  cross_entropy %s: [%lld, %lld]\n", c.name, (long long)c.rows,
                (long long)c.classes);
    const CrossEntropyProblem p = makeCrossEntropy(c, rng);
    const CrossEntropyOutputs a = runCrossEntropy(p), b = runCrossEntropy(p);
    for (const std::string &f : compare(p, a))
      fail(f);
    if (!sameBits({a.loss}, {b.loss}) || !sameBits(a.dlogits, b.dlogits))
      fail("cross_entropy: two runs gave different bits");
  }
  for (const AdamCase &c : adamCases()) {
    std::printf("  adam_update %s: %lld elements\n", c.name, (long long)c.n);
    const AdamProblem p = makeAdam(c, rng);
    for (const std::string &f : compare(p, runAdam(p)))
      fail(f);
  }
  // Bad shapes are refused with the shape in the message, before any launch.
  Status bad = layerNormForward(0, 8, 1e-5f, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (bad.ok() || bad.message().find("[0, 8]") == std::string::npos)
    fail("layer_norm of [0, 8] must be refused by shape: " + bad.message());

  return finish();
}
