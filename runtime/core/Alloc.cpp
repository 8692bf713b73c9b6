#include "attn/Alloc.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace attn {
namespace {

constexpr size_t kAlign = 64;
// Blocks below this go to malloc directly (glibc serves them from its heap anyway).
constexpr size_t kSmall = 64 * 1024;
// Free blocks kept at most, in bytes; past it, freed blocks go back to the system.
constexpr size_t kCacheLimit = size_t(2) << 30;

// Every block starts with a 64-byte header holding its size class (-1: a small block from
// malloc); the caller's pointer follows it, so it stays 64-byte aligned. A class's blocks hold
// classBytes(c) bytes for the caller plus the header, so a power-of-two request fits its class.
struct Header {
  int64_t sizeClass;
};
static_assert(sizeof(Header) <= kAlign, "the header must fit in the alignment");

// Size classes: four per power of two, class c holding blocks of classBytes(c) bytes.
size_t classBytes(int c) {
  size_t power = size_t(1) << (c / 4 + 16);
  return power + (power / 4) * (c % 4);
}
int classOf(size_t bytes) {
  int c = 0;
  while (classBytes(c) < bytes)
    ++c;
  return c;
}

struct Cache {
  std::mutex mutex;
  std::vector<std::vector<void *>> free; // per class: blocks (header addresses)
  size_t cached = 0;                     // bytes in `free` (without headers)
  BufferUse use;                         // large blocks handed out
};

Cache &cache() {
  static Cache *c = new Cache(); // never destroyed: compiled code may free during exit
  return *c;
}

void *withHeader(void *block, int64_t sizeClass) {
  static_cast<Header *>(block)->sizeClass = sizeClass;
  return static_cast<char *>(block) + kAlign;
}

} // namespace

void *bufferAlloc(size_t bytes) {
  if (bytes > (size_t(1) << 48))
    throw std::bad_alloc();
  if (bytes < kSmall) {
    void *block = std::aligned_alloc(kAlign, (bytes + 2 * kAlign - 1) / kAlign * kAlign);
    if (!block)
      throw std::bad_alloc();
    return withHeader(block, -1);
  }
  int c = classOf(bytes);
  Cache &k = cache();
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live += classBytes(c);
    k.use.peak = std::max(k.use.peak, k.use.live);
    if ((size_t)c < k.free.size() && !k.free[c].empty()) {
      void *block = k.free[c].back();
      k.free[c].pop_back();
      k.cached -= classBytes(c);
      return withHeader(block, c);
    }
  }
  void *block = std::aligned_alloc(kAlign, classBytes(c) + kAlign);
  if (!block) {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live -= classBytes(c);
    throw std::bad_alloc();
  }
  return withHeader(block, c);
}

namespace {
std::atomic<FreeListener> freeListener{nullptr};
} // namespace

void setFreeListener(FreeListener listener) { freeListener.store(listener); }

void bufferFree(void *p) {
  if (!p)
    return;
  if (FreeListener listener = freeListener.load(std::memory_order_acquire))
    listener(p);
  void *block = static_cast<char *>(p) - kAlign;
  int64_t c = static_cast<Header *>(block)->sizeClass;
  if (c < 0) {
    std::free(block);
    return;
  }
  Cache &k = cache();
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live -= classBytes(c);
    if (k.cached + classBytes(c) <= kCacheLimit) {
      if ((size_t)c >= k.free.size())
        k.free.resize(c + 1);
      k.free[c].push_back(block);
      k.cached += classBytes(c);
      return;
    }
  }
  std::free(block);
}

BufferUse bufferUse() {
  Cache &k = cache();
  std::lock_guard<std::mutex> lock(k.mutex);
  return k.use;
}

void resetBufferPeak() {
  Cache &k = cache();
  std::lock_guard<std::mutex> lock(k.mutex);
  k.use.peak = k.use.live;
}

void bufferTrim() {
  Cache &k = cache();
  std::lock_guard<std::mutex> lock(k.mutex);
  for (std::vector<void *> &blocks : k.free) {
    for (void *block : blocks)
      std::free(block);
    blocks.clear();
  }
  k.cached = 0;
}

} // namespace attn

namespace {
// Compiled code cannot take an exception: out of memory ends the process with a message.
void *allocForCompiledCode(size_t bytes) {
  try {
    return attn::bufferAlloc(bytes);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "attn: out of memory allocating %zu bytes for compiled code\n", bytes);
    std::abort();
  }
}
} // namespace

extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes) { return allocForCompiledCode(bytes); }

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  if (alignment > 64) { // attnc's lowering never asks for more
    std::fprintf(stderr, "attn: compiled code asked for %zu-byte alignment (at most 64)\n",
                 alignment);
    std::abort();
  }
  return allocForCompiledCode(bytes);
}

extern "C" void _mlir_memref_to_llvm_free(void *p) { attn::bufferFree(p); }
