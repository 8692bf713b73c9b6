#include "attn/decode/Sample.h"

#include "attn/Random.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attn::decode {
namespace {

// An index drawn from softmax(logits / temperature); the argmax when temperature is 0.
int32_t draw(const float *logits, int64_t vocab, double temperature, Rng &rng) {
  int64_t best = std::max_element(logits, logits + vocab) - logits;
  if (temperature <= 0)
    return (int32_t)best;
  std::vector<double> p(vocab);
  double total = 0;
  for (int64_t i = 0; i < vocab; ++i)
    total += p[i] = std::exp((logits[i] - logits[best]) / temperature);
  double u = rng.nextDouble() * total;
  for (int64_t i = 0; i < vocab; ++i)
    if ((u -= p[i]) <= 0)
      return (int32_t)i;
  return (int32_t)(vocab - 1);
}

} // namespace

std::vector<int32_t> sample(const Program &program, const std::vector<Tensor> &params,
                            const std::vector<int32_t> &prime, const SampleOptions &options) {
  if (prime.empty())
    throw std::runtime_error("attn: sampling needs at least one prime token");
  const attn_entry_info &step = program.entry("step");
  int64_t vocab = step.outputs[0].shape[1];
  // inputs: token, then the states (zeros to start).
  std::vector<Tensor> inputs;
  inputs.push_back(makeTensor(step.inputs[0]));
  for (int i = 1; i < step.num_inputs; ++i)
    inputs.push_back(makeTensor(step.inputs[i]));
  Rng rng(options.seed);
  std::vector<int32_t> generated;
  int32_t token = prime[0];
  for (int64_t t = 0; t + 1 < (int64_t)prime.size() + options.length; ++t) {
    inputs[0].data<int32_t>()[0] = token;
    std::vector<Tensor> outputs = program.call("step", params, inputs);
    for (int i = 1; i < step.num_inputs; ++i)
      inputs[i] = std::move(outputs[i]);
    if (t + 1 < (int64_t)prime.size()) {
      token = prime[t + 1]; // still reading the prime
      continue;
    }
    token = draw(outputs[0].data<float>(), vocab, options.temperature, rng);
    generated.push_back(token);
  }
  return generated;
}

} // namespace attn::decode
