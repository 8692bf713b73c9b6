// The runtime's deterministic random numbers (parameter init, builtin datasets).
//
// Everything here is specified bit for bit so that other code (a test, a Python reference)
// can re-derive the same values:
//
//   splitmix64(state):   state += 0x9E3779B97F4A7C15;
//                        z = state;
//                        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//                        z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//                        return z ^ (z >> 31);
//   fnv1a64(bytes):      h = 0xCBF29CE484222325; for each byte b: h = (h ^ b) * 0x100000001B3.
//   Rng(seed):           xoshiro256** (Blackman & Vigna) whose four state words are four
//                        successive splitmix64 outputs starting from state = seed.
//   Rng::nextDouble():   (next() >> 11) * 2^-53, in [0, 1).
#ifndef ATTN_RANDOM_H
#define ATTN_RANDOM_H

#include <cstdint>
#include <string_view>

namespace attn {

// One splitmix64 step: advances `state` and returns the mixed output.
uint64_t splitmix64(uint64_t &state);
// 64-bit FNV-1a hash of the bytes of `s`.
uint64_t fnv1a64(std::string_view s);

// xoshiro256**: fast, small state, good statistical quality; not cryptographic.
class Rng {
public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double nextDouble();

private:
  uint64_t s_[4];
};

} // namespace attn

#endif // ATTN_RANDOM_H
