// Sampling from a compiled language model, one token at a time.
//
// The program's `step` entry point takes the current token and the recurrent state and
// returns the next-token logits and the new state:
//   step(token: i32 [1], state_0: f32 [1, H0], ...) -> (logits: f32 [1, V], state_0', ...)
// States start at zero; the prime tokens are fed first, then each sampled token.
// A step whose entry has a capacity L (attn_entry_info::capacity: a cached Transformer's, whose
// states are its position and key/value caches [1, H, L, D]) holds at most L positions. When
// they are full, the states start again at zero and the last L / 2 tokens are fed again (a
// sliding window).
// A program with the uncached `step_full` (the graph form's language models, a Transformer's
// compiled with --no-cache; attn/Names.h) samples with it instead: each token runs the
// network over the last L tokens at most (a window sliding by one) and reads the logits at
// the last. Within the first L positions it draws what the cached step draws.
#ifndef ATTN_DECODE_SAMPLE_H
#define ATTN_DECODE_SAMPLE_H

#include "attn/Program.h"
#include "attn/Random.h"
#include "attn/Tensor.h"

#include <cstdint>
#include <vector>

namespace attn::decode {

struct SampleOptions {
  int64_t length = 200;      // tokens to generate after the prime
  double temperature = 1.0;  // logits / temperature before the softmax; 0 means greedy
  int64_t topK = 0;          // draw among the k likeliest tokens only; 0: among all
  uint64_t seed = 1;
};

// A token drawn from softmax(scores / temperature) over the `topK` highest scores (all when
// topK is 0 or >= vocab); the argmax (lowest id on ties) when temperature is 0. `scores` are
// logits or log-probabilities [vocab].
int32_t drawToken(const float *scores, int64_t vocab, double temperature, int64_t topK,
                  Rng &rng);

// The generated tokens (without the prime, which must not be empty). A --device cuda
// program's GPU ranks each step's top-k (SampleOptions::topK), and only those come back.
std::vector<int32_t> sample(const Program &program, const std::vector<Tensor> &params,
                            const std::vector<int32_t> &prime, const SampleOptions &options);

} // namespace attn::decode

#endif // ATTN_DECODE_SAMPLE_H
