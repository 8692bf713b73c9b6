// The GPU kernels of layer norm, cross-entropy and Adam (attn/cuda/Kernels.h) on a GPU, against
// the ops' definitions in double (TrainReference.h), every output poisoned with NaN first and
// every case run twice for the same bits. A plain program, like flash-attention-test.cpp (the
// GPU machine has no GoogleTest): exit 0 pass, 1 fail, 77 no GPU.
#include "TrainReference.h"

#include <cuda_runtime_api.h>

#include <cstring>

using namespace attn::cuda;
using namespace attn::cuda::testing;

namespace {

int failures = 0;

void fail(const std::string &what) {
  std::printf("    FAIL %s\n", what.c_str());
  ++failures;
}

bool ok(const Status &st, const char *what) {
  if (!st.ok())
    fail(std::string(what) + ": " + st.message());
  return st.ok();
}

template <typename T> DeviceBuffer upload(const std::vector<T> &host) {
  DeviceBuffer buf(host.size() * sizeof(T));
  ok(buf.status(), "allocate");
  ok(buf.upload(host.data(), host.size() * sizeof(T)), "upload");
  return buf;
}

DeviceBuffer poisoned(size_t floats) {
  DeviceBuffer buf(floats * sizeof(float));
  ok(buf.status(), "allocate");
  cudaMemset(buf.data(), 0xff, floats * sizeof(float));
  return buf;
}

std::vector<float> download(const DeviceBuffer &buf, size_t floats) {
  std::vector<float> host(floats);
  ok(buf.download(host.data(), floats * sizeof(float)), "download");
  return host;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

LayerNormOutputs runLayerNorm(const LayerNormProblem &p) {
  const int64_t R = p.c.rows, D = p.c.dim;
  DeviceBuffer x = upload(p.x), gamma = upload(p.gamma), beta = upload(p.beta), dy = upload(p.dy);
  DeviceBuffer y = poisoned(R * D), mean = poisoned(R), rstd = poisoned(R), dx = poisoned(R * D),
               dgamma = poisoned(D), dbeta = poisoned(D),
               workspace(layerNormBackwardWorkspace(R, D));
  ok(layerNormForward(R, D, p.c.epsilon, x.as<float>(), gamma.as<float>(), beta.as<float>(),
                      y.as<float>(), mean.as<float>(), rstd.as<float>()),
     "layer_norm");
  ok(layerNormBackward(R, D, x.as<float>(), gamma.as<float>(), mean.as<float>(), rstd.as<float>(),
                       dy.as<float>(), dx.as<float>(), dgamma.as<float>(), dbeta.as<float>(),
                       workspace.data()),
     "layer_norm backward");
  ok(synchronize(), "layer_norm");
  return {download(y, R * D),  download(mean, R),   download(rstd, R),
          download(dx, R * D), download(dgamma, D), download(dbeta, D)};
}

CrossEntropyOutputs runCrossEntropy(const CrossEntropyProblem &p) {
  const int64_t R = p.c.rows, C = p.c.classes;
  DeviceBuffer logits = upload(p.logits), labels = upload(p.labels),
               grad = upload(std::vector<float>{p.grad}), loss = poisoned(1),
               dlogits = poisoned(R * C), workspace(crossEntropyWorkspace(R));
  ok(crossEntropyForward(R, C, p.c.options, logits.as<float>(), labels.as<int32_t>(),
                         loss.as<float>(), workspace.data()),
     "cross_entropy");
  ok(crossEntropyBackward(R, C, p.c.options, logits.as<float>(), labels.as<int32_t>(),
                          grad.as<float>(), workspace.data(), dlogits.as<float>()),
     "cross_entropy_grad");
  ok(synchronize(), "cross_entropy");
  return {download(loss, 1)[0], download(dlogits, R * C)};
}

AdamOutputs runAdam(const AdamProblem &p) {
  DeviceBuffer param = upload(p.param), grad = upload(p.grad), m = upload(p.m), v = upload(p.v);
  ok(adamUpdate(p.c.n, p.c.options, p.c.lr, p.c.step, param.as<float>(), grad.as<float>(),
                m.as<float>(), v.as<float>()),
     "adam_update");
  ok(synchronize(), "adam_update");
  return {download(param, p.c.n), download(m, p.c.n), download(v, p.c.n)};
}

} // namespace

int main() {
  if (std::string why = deviceUnavailable(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  std::printf("device: %s\n", deviceDescription().c_str());
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

  std::printf("%s (%d failures)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
