#include "attn/decode/Sample.h"
#include "attn/Names.h"
#include "attn/decode/Beam.h" // StepModel::kMostRankedOnDevice

#include "attn/Random.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

// attn/cuda/Offload.h's ranking, defined where attnc's CUDA runtime is linked (a --device cuda
// program pulls it in); null elsewhere. Weak, so that the CPU runtime never needs the CUDA one.
extern "C" void attn_cuda_top_k_rows(const float *x, int64_t rows, int64_t cols, int64_t k,
                                     int32_t *index, float *value) __attribute__((weak));

namespace attn::decode {

int32_t drawToken(const float *scores, int64_t vocab, double temperature, int64_t topK,
                  Rng &rng) {
  int64_t best = std::max_element(scores, scores + vocab) - scores;
  if (temperature <= 0)
    return (int32_t)best;
  // The candidates: every token, or the k best (ties: the lower id).
  std::vector<int32_t> ids(vocab);
  for (int64_t i = 0; i < vocab; ++i)
    ids[i] = (int32_t)i;
  if (topK > 0 && topK < vocab) {
    std::partial_sort(ids.begin(), ids.begin() + topK, ids.end(), [&](int32_t a, int32_t b) {
      return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
    });
    ids.resize(topK);
  }
  std::vector<double> p(ids.size());
  double total = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    total += p[i] = std::exp((scores[ids[i]] - scores[best]) / temperature);
  double u = rng.nextDouble() * total;
  for (size_t i = 0; i < ids.size(); ++i)
    if ((u -= p[i]) <= 0)
      return ids[i];
  return ids.back();
}

namespace {

// drawToken over one row of scores [vocab] that `program` wrote: for a --device cuda
// program with a top-k, the GPU ranks the row and only the k likeliest come back. Ranked
// best first (ties: the lower id), they are drawToken's candidates in its order: the same
// weights, the same uniform, the same pick (as sampled() draws from a StepModel's stepTopK).
int32_t drawFrom(const Program &program, const float *scores, int64_t vocab, const SampleOptions &o,
                 Rng &rng) {
  if (program.info().device && attn_cuda_top_k_rows && o.topK > 0 && o.topK < vocab &&
      o.topK <= StepModel::kMostRankedOnDevice) {
    std::vector<int32_t> ids(o.topK);
    std::vector<float> top(o.topK);
    attn_cuda_top_k_rows(scores, 1, vocab, o.topK, ids.data(), top.data());
    return ids[drawToken(top.data(), o.topK, o.temperature, /*topK=*/0, rng)];
  }
  return drawToken(scores, vocab, o.temperature, o.topK, rng);
}

// Without a cache: step_full(tokens [1, L]) -> logits [1, L, V] over the last L tokens at most
// (the window slides by one), read at the last of them.
std::vector<int32_t> sampleFull(const Program &program, const std::vector<Tensor> &params,
                                const std::vector<int32_t> &prime, const SampleOptions &options) {
  const attn_entry_info &full = program.entry(names::kStepFull);
  if (full.num_inputs != 1 || full.num_outputs != 1 || full.inputs[0].dtype != ATTN_I32 ||
      full.inputs[0].rank != 2 || full.inputs[0].shape[0] != 1 || full.outputs[0].rank != 3 ||
      full.outputs[0].shape[1] != full.inputs[0].shape[1])
    throw std::runtime_error("attn: model '" + program.name() + "': entry '" + names::kStepFull +
                             "' must take tokens i32 [1, L] and return logits f32 [1, L, V]");
  int64_t length = full.inputs[0].shape[1], vocab = full.outputs[0].shape[2];
  std::vector<Tensor> inputs = {makeTensor(full.inputs[0])};
  Rng rng(options.seed);
  std::vector<int32_t> history(prime), generated;
  for (int64_t t = 0; t < options.length; ++t) {
    int64_t n = std::min<int64_t>(length, (int64_t)history.size());
    int32_t *ids = inputs[0].data<int32_t>();
    std::fill(ids, ids + length, 0); // after the prefix: never read by a causal network
    std::copy(history.end() - n, history.end(), ids);
    std::vector<Tensor> outputs = program.call(names::kStepFull, params, inputs);
    int32_t token =
        drawFrom(program, outputs[0].data<float>() + (n - 1) * vocab, vocab, options, rng);
    history.push_back(token);
    generated.push_back(token);
  }
  return generated;
}

} // namespace

std::vector<int32_t> sample(const Program &program, const std::vector<Tensor> &params,
                            const std::vector<int32_t> &prime, const SampleOptions &options) {
  if (prime.empty())
    throw std::runtime_error("attn: sampling needs at least one prime token");
  if (program.findEntry(names::kStepFull))
    return sampleFull(program, params, prime, options);
  const attn_entry_info &step = program.entry("step");
  int64_t vocab = step.outputs[0].shape[1];
  int64_t capacity = step.capacity; // 0: the state never fills
  std::vector<Tensor> inputs;
  auto reset = [&] {
    inputs.clear();
    for (int i = 0; i < step.num_inputs; ++i)
      inputs.push_back(makeTensor(step.inputs[i])); // zeros
  };
  auto feed = [&](int32_t token) {
    inputs[0].data<int32_t>()[0] = token;
    std::vector<Tensor> outputs = program.call("step", params, inputs);
    for (int i = 1; i < step.num_inputs; ++i)
      inputs[i] = std::move(outputs[i]);
    return outputs;
  };
  reset();
  Rng rng(options.seed);
  std::vector<int32_t> history, generated; // history: the tokens fed so far
  int64_t fed = 0; // positions in the caches
  int32_t token = prime.back();
  auto slide = [&] {
    // Full: start again from the last capacity / 2 tokens.
    reset();
    fed = 0;
    int64_t keep = std::min<int64_t>(capacity / 2, (int64_t)history.size());
    for (auto it = history.end() - keep; it != history.end(); ++it, ++fed)
      feed(*it);
  };
  for (auto it = prime.begin(); it + 1 != prime.end(); ++it) {
    if (capacity && fed == capacity)
      slide();
    feed(*it);
    ++fed;
    history.push_back(*it);
  }
  for (int64_t t = 0; t < options.length; ++t) {
    if (capacity && fed == capacity)
      slide();
    std::vector<Tensor> outputs = feed(token);
    ++fed;
    history.push_back(token);
    token = drawFrom(program, outputs[0].data<float>(), vocab, options, rng);
    generated.push_back(token);
  }
  return generated;
}

} // namespace attn::decode
