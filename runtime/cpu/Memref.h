// Memref descriptors as the runtime's hand-written kernels read them (private to runtime/cpu):
// row-major access to strided views, and failure from compiled code, which cannot catch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define ATTN_EXPORT __attribute__((visibility("default")))

// Row loops come in AVX-512, AVX2 and baseline builds, picked at load time for the CPU.
// (By feature, not by CPU model: "arch=" clones are chosen only on that very model.)
#define ATTN_ROW_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))
// The same for loops that write 16-bit values (bfloat16): AVX-512 has 16-bit lanes only with
// AVX512BW, without which GCC vectorises them at half width or not at all. GCC 12 dispatches
// on no single extension but AVX512F; x86-64-v4 is an ISA level (AVX512F, BW, CD, DQ, VL),
// checked by features, not a CPU model.
#define ATTN_ROW_KERNEL_16 __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

namespace attn::cpu::memref {

[[noreturn]] inline void fail(const char *kernel, const std::string &msg) {
  std::fprintf(stderr, "attn runtime: %s: %s\n", kernel, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

// Whether a memref's elements lie in row-major order (sizes of 1 may have any stride).
template <typename M> bool isRowMajor(const M &m, int rank) {
  int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (m.sizes[d] != 1 && m.strides[d] != expected)
      return false;
    expected *= m.sizes[d];
  }
  return true;
}

template <typename M> int64_t numElements(const M &m, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= m.sizes[d];
  return n;
}

// The offset of row-major element `i` in a strided memref.
template <typename M> int64_t stridedOffset(const M &m, int rank, int64_t i) {
  int64_t at = 0;
  for (int d = rank - 1; d >= 0; --d) {
    at += (i % m.sizes[d]) * m.strides[d];
    i /= m.sizes[d];
  }
  return at;
}

// A memref's elements in row-major order: the buffer itself when it already is (the usual
// case), else a packed copy in `buffer`.
template <typename M>
const float *rowMajor(const M &m, int rank, std::vector<float> &buffer) {
  const float *base = m.aligned + m.offset;
  if (isRowMajor(m, rank))
    return base;
  buffer.resize(numElements(m, rank));
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer[i] = base[stridedOffset(m, rank, (int64_t)i)];
  return buffer.data();
}

// An output memref written in row-major order: directly when it is, else through `buffer`
// and scattered by finish().
template <typename M> struct RowMajorOut {
  M &m;
  int rank;
  std::vector<float> buffer;
  float *data;
  RowMajorOut(M &m, int rank) : m(m), rank(rank) {
    if (!isRowMajor(m, rank))
      buffer.resize(numElements(m, rank));
    data = buffer.empty() ? m.aligned + m.offset : buffer.data();
  }
  void finish() {
    for (size_t i = 0; i < buffer.size(); ++i)
      m.aligned[m.offset + stridedOffset(m, rank, (int64_t)i)] = buffer[i];
  }
};

} // namespace attn::cpu::memref
