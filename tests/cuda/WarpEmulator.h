// The primitives of runtime/cuda/Warp.cuh on CPU threads, so that the fused attention kernels
// (FlashKernels.cuh, compiled here as plain C++) run in CI, where there is no GPU. A block is
// 128 std::threads; __syncthreads is a barrier over them, and every warp-collective primitive
// (ldmatrix, mma.sync, shuffles) is an exchange through per-warp slots between two barriers
// over the warp's 32 threads, each lane computing its own registers from the others' as the
// PTX ISA lays fragments out (mma.m16n8k16 .bf16/.f16, ldmatrix .m8n8.x4 [.trans]).
//
// What it checks: the kernels' tiling, indexing, masking, online softmax and cp.async
// pipelining (a copy lands only at the cp.async.wait_group that covers its group, and shared
// memory starts as NaN, so a tile read before its wait or never staged shows). What it cannot:
// speed, the hardware's rounding inside mma (f32 here), races the barriers here hide, and
// whether this file reads the ISA as the hardware does; tests/cuda/flash-attention-test.cpp
// on a GPU checks those (scripts/gpu-check.sh).
#ifndef ATTN_TESTS_CUDA_WARPEMULATOR_H
#define ATTN_TESTS_CUDA_WARPEMULATOR_H

#include <cuda_fp16.h>
#include <pthread.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

// CUDA's headers (included above for the element types) define these for host compilers.
#undef __global__
#undef __device__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)

namespace attn::cuda::emulator {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

constexpr int kThreadsPerBlock = 128, kWarpSize = 32;

class Barrier {
public:
  explicit Barrier(unsigned count) { pthread_barrier_init(&barrier_, nullptr, count); }
  ~Barrier() { pthread_barrier_destroy(&barrier_); }
  void wait() { pthread_barrier_wait(&barrier_); }

private:
  pthread_barrier_t barrier_;
};

// What one lane puts on the table for a warp-collective primitive.
struct Slot {
  const void *address;
  uint32_t a[4], b[2];
  float value;
};

struct Block {
  explicit Block(size_t sharedBytes) : shared((sharedBytes + 15) / 16 + 1), all(kThreadsPerBlock) {
    // NaN in every 16-bit and 32-bit float: a tile read before it is staged shows.
    std::memset(shared.data(), 0xff, shared.size() * 16);
    for (auto &w : warp)
      w = std::make_unique<Barrier>(kWarpSize);
  }
  struct alignas(16) Chunk {
    unsigned char bytes[16];
  };
  std::vector<Chunk> shared;
  Barrier all;
  std::unique_ptr<Barrier> warp[kThreadsPerBlock / kWarpSize];
  Slot slots[kThreadsPerBlock / kWarpSize][kWarpSize];
};

// A thread's cp.async copies not yet landed, by commit group (the last one open).
struct Copy {
  void *dst;
  const void *src;
  bool valid;
};

inline thread_local Block *currentBlock = nullptr;
inline thread_local std::vector<std::vector<Copy>> pendingGroups;
inline thread_local std::vector<Copy> openGroup;

} // namespace attn::cuda::emulator

// CUDA's built-in variables, as the kernels name them.
inline thread_local attn::cuda::emulator::Dim3 threadIdx, blockIdx;
inline attn::cuda::emulator::Dim3 gridDim;
inline const attn::cuda::emulator::Dim3 blockDim{attn::cuda::emulator::kThreadsPerBlock, 1, 1};

namespace attn::cuda {

namespace emulator {
inline int lane() { return int(threadIdx.x) & 31; }
inline Slot *warpSlots() { return currentBlock->slots[threadIdx.x >> 5]; }
inline void warpSync() { currentBlock->warp[threadIdx.x >> 5]->wait(); }
inline uint16_t half16(const void *row, int element) {
  uint16_t v;
  std::memcpy(&v, static_cast<const unsigned char *>(row) + 2 * element, 2);
  return v;
}
} // namespace emulator

inline unsigned char *dynamicShared() { return emulator::currentBlock->shared.data()->bytes; }

inline void syncBlock() { emulator::currentBlock->all.wait(); }

inline float shuffleXor(float v, int laneMask) {
  using namespace emulator;
  warpSlots()[lane()].value = v;
  warpSync();
  float r = warpSlots()[lane() ^ laneMask].value;
  warpSync();
  return r;
}

inline void copyAsync16(void *dst, const void *src, bool valid) {
  emulator::openGroup.push_back({dst, src, valid});
}
inline void commitCopies() {
  emulator::pendingGroups.push_back(std::move(emulator::openGroup));
  emulator::openGroup.clear();
}
template <int Pending> inline void waitCopies() {
  auto &groups = emulator::pendingGroups;
  while (groups.size() > size_t(Pending)) {
    for (const emulator::Copy &c : groups.front()) {
      if (c.valid)
        std::memcpy(c.dst, c.src, 16);
      else
        std::memset(c.dst, 0, 16);
    }
    groups.erase(groups.begin());
  }
}

// Lane l gets, of each matrix m (rows addressed by lanes 8m .. 8m + 7), row l / 4, elements
// 2 (l % 4) and 2 (l % 4) + 1, the lower in the low half.
inline void loadMatrices(uint32_t r[4], const void *p) {
  using namespace emulator;
  warpSlots()[lane()].address = p;
  warpSync();
  const int l = lane();
  for (int m = 0; m < 4; ++m) {
    const void *row = warpSlots()[8 * m + l / 4].address;
    r[m] = half16(row, 2 * (l % 4)) | uint32_t(half16(row, 2 * (l % 4) + 1)) << 16;
  }
  warpSync();
}

// Transposed: element l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
inline void loadMatricesTransposed(uint32_t r[4], const void *p) {
  using namespace emulator;
  warpSlots()[lane()].address = p;
  warpSync();
  const int l = lane();
  for (int m = 0; m < 4; ++m) {
    const void *row0 = warpSlots()[8 * m + 2 * (l % 4)].address;
    const void *row1 = warpSlots()[8 * m + 2 * (l % 4) + 1].address;
    r[m] = half16(row0, l / 4) | uint32_t(half16(row1, l / 4)) << 16;
  }
  warpSync();
}

namespace emulator {
// mma.m16n8k16.row.col: lane (g = l / 4, t = l % 4) holds A's rows g and g + 8, columns
// 2t, 2t + 1 (a0: row g, a1: row g + 8) and 2t + 8, 2t + 9 (a2: row g, a3: row g + 8); B's
// column g, rows 2t, 2t + 1 (b0) and 2t + 8, 2t + 9 (b1); C's rows g (c0, c1) and g + 8
// (c2, c3), columns 2t, 2t + 1.
template <typename ToFloat>
inline void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1, ToFloat toFloat) {
  Slot *slots = warpSlots();
  const int l = lane();
  std::memcpy(slots[l].a, a, sizeof slots[l].a);
  slots[l].b[0] = b0;
  slots[l].b[1] = b1;
  warpSync();
  float A[16][16], B[16][8];
  for (int src = 0; src < kWarpSize; ++src) {
    const int g = src / 4, t = src % 4;
    const Slot &s = slots[src];
    for (int half = 0; half < 2; ++half) {
      A[g][2 * t + half] = toFloat(uint16_t(s.a[0] >> (16 * half)));
      A[g + 8][2 * t + half] = toFloat(uint16_t(s.a[1] >> (16 * half)));
      A[g][2 * t + 8 + half] = toFloat(uint16_t(s.a[2] >> (16 * half)));
      A[g + 8][2 * t + 8 + half] = toFloat(uint16_t(s.a[3] >> (16 * half)));
      B[2 * t + half][g] = toFloat(uint16_t(s.b[0] >> (16 * half)));
      B[2 * t + 8 + half][g] = toFloat(uint16_t(s.b[1] >> (16 * half)));
    }
  }
  const int g = l / 4, t = l % 4;
  for (int e = 0; e < 4; ++e) {
    const int row = g + (e >> 1) * 8, col = 2 * t + (e & 1);
    float sum = c[e];
    for (int k = 0; k < 16; ++k)
      sum += A[row][k] * B[k][col];
    c[e] = sum;
  }
  warpSync();
}
} // namespace emulator

inline void mmaBf16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  emulator::mma(c, a, b0, b1, [](uint16_t bits) {
    uint32_t f = uint32_t(bits) << 16;
    float x;
    std::memcpy(&x, &f, 4);
    return x;
  });
}
inline void mmaF16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  emulator::mma(c, a, b0, b1, [](uint16_t bits) {
    __half h;
    std::memcpy(&h, &bits, 2);
    return __half2float(h);
  });
}

inline float exp2Approx(float x) { return std::exp2(x); }

namespace emulator {
// Runs kernel(args...) over the grid, a block at a time, each block on 128 threads.
template <typename Kernel, typename... Args>
void launch(Dim3 grid, size_t sharedBytes, Kernel kernel, Args... args) {
  gridDim = grid;
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      Block block(sharedBytes);
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < kThreadsPerBlock; ++t)
        threads.emplace_back([&, t] {
          currentBlock = &block;
          threadIdx = {t, 0, 0};
          blockIdx = {bx, by, 0};
          pendingGroups.clear();
          openGroup.clear();
          kernel(args...);
        });
      for (std::thread &th : threads)
        th.join();
    }
}
} // namespace emulator

} // namespace attn::cuda

#endif // ATTN_TESTS_CUDA_WARPEMULATOR_H
