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
// malloc) and its source (null: the system's memory); the caller's pointer follows it, so it
// stays 64-byte aligned. A class's blocks hold classBytes(c) bytes for the caller plus the
// header, so a power-of-two request fits its class.
struct Header {
  int64_t sizeClass;
  const BlockSource *source;
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

// The free blocks of one source, per class (header addresses).
struct Pool {
  const BlockSource *source;
  std::vector<std::vector<void *>> free;
};

struct Cache {
  std::mutex mutex;
  std::vector<Pool> pools{Pool{nullptr, {}}}; // the system's first
  size_t cached = 0;                          // bytes in the pools (without headers)
  BufferUse use;                              // large blocks handed out
  std::atomic<const BlockSource *> source{nullptr};
};

Cache &cache() {
  static Cache *c = new Cache(); // never destroyed: compiled code may free during exit
  return *c;
}

Pool &poolOf(Cache &k, const BlockSource *source) {
  for (Pool &p : k.pools)
    if (p.source == source)
      return p;
  return k.pools.emplace_back(Pool{source, {}});
}

void *systemAllocate(size_t bytes) { return std::aligned_alloc(kAlign, bytes); }
void systemRelease(void *block) { std::free(block); }
void *allocateFrom(const BlockSource *source, size_t bytes) {
  return source ? source->allocate(bytes) : systemAllocate(bytes);
}
void releaseTo(const BlockSource *source, void *block) {
  source ? source->release(block) : systemRelease(block);
}

void *withHeader(void *block, int64_t sizeClass, const BlockSource *source) {
  *static_cast<Header *>(block) = Header{sizeClass, source};
  return static_cast<char *>(block) + kAlign;
}

} // namespace

void setBlockSource(const BlockSource *source) { cache().source.store(source); }
const BlockSource *blockSource() { return cache().source.load(); }

void *bufferAlloc(size_t bytes) {
  if (bytes > (size_t(1) << 48))
    throw std::bad_alloc();
  Cache &k = cache();
  const BlockSource *source = k.source.load();
  // Small blocks of the system's memory come from malloc's heap. Another source's are
  // recycled like large ones: its allocations are expensive calls (cudaMallocManaged).
  if (bytes < kSmall && !source) {
    void *block = systemAllocate((bytes + 2 * kAlign - 1) / kAlign * kAlign);
    if (!block)
      throw std::bad_alloc();
    return withHeader(block, -1, nullptr);
  }
  int c = classOf(bytes);
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live += classBytes(c);
    k.use.peak = std::max(k.use.peak, k.use.live);
    Pool &pool = poolOf(k, source);
    if ((size_t)c < pool.free.size() && !pool.free[c].empty()) {
      void *block = pool.free[c].back();
      pool.free[c].pop_back();
      k.cached -= classBytes(c);
      return withHeader(block, c, source);
    }
  }
  void *block = allocateFrom(source, classBytes(c) + kAlign);
  if (!block) {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live -= classBytes(c);
    throw std::bad_alloc();
  }
  return withHeader(block, c, source);
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
  const Header header = *static_cast<Header *>(block);
  if (header.sizeClass < 0) {
    systemRelease(block);
    return;
  }
  const int64_t c = header.sizeClass;
  Cache &k = cache();
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live -= classBytes(c);
    if (k.cached + classBytes(c) <= kCacheLimit) {
      Pool &pool = poolOf(k, header.source);
      if ((size_t)c >= pool.free.size())
        pool.free.resize(c + 1);
      pool.free[c].push_back(block);
      k.cached += classBytes(c);
      return;
    }
  }
  releaseTo(header.source, block);
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
  for (Pool &pool : k.pools)
    for (std::vector<void *> &blocks : pool.free) {
      for (void *block : blocks)
        releaseTo(pool.source, block);
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
