// Sampling from a compiled language model, one token at a time.
//
// The program's `step` entry point takes the current token and the recurrent state and
// returns the next-token logits and the new state:
//   step(token: i32 [1], state_0: f32 [1, H0], ...) -> (logits: f32 [1, V], state_0', ...)
// States start at zero; the prime tokens are fed first, then each sampled token.
#ifndef ATTN_DECODE_SAMPLE_H
#define ATTN_DECODE_SAMPLE_H

#include "attn/Program.h"
#include "attn/Tensor.h"

#include <cstdint>
#include <vector>

namespace attn::decode {

struct SampleOptions {
  int64_t length = 200;      // tokens to generate after the prime
  double temperature = 1.0;  // logits / temperature before the softmax; 0 means greedy
  uint64_t seed = 1;
};

// The generated tokens (without the prime, which must not be empty).
std::vector<int32_t> sample(const Program &program, const std::vector<Tensor> &params,
                            const std::vector<int32_t> &prime, const SampleOptions &options);

} // namespace attn::decode

#endif // ATTN_DECODE_SAMPLE_H
