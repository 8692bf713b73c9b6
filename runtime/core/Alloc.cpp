#include "attn/Alloc.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace attn {
namespace {

constexpr size_t kAlign = 64;
// Blocks below this go to malloc directly (glibc serves them from its heap anyway).
constexpr size_t kSmall = 64 * 1024;
// Free blocks kept at most, in bytes; past it, freed blocks go back to the system.
constexpr size_t kCacheLimit = size_t(2) << 30;

// A block of the system's memory starts with a 64-byte header holding its size class (-1: a
// small block from malloc); the caller's pointer follows it, so it stays 64-byte aligned. A
// class's blocks hold classBytes(c) bytes for the caller plus the header, so a power-of-two
// request fits its class.
//
// A source's blocks (device memory) carry no header: writing one on the host at each
// allocation would move the block's first page from the GPU to the CPU and back. The cache
// keeps their classes in a table instead, which a free looks in first once any source has
// been set.
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

// The free blocks of one source, per class: header addresses for the system's memory, the
// caller's addresses for a source's.
struct Pool {
  const BlockSource *source;
  std::vector<std::vector<void *>> free;
};

// A source's block, by the caller's address.
struct Sourced {
  int sizeClass;
  const BlockSource *source;
};

struct Cache {
  std::mutex mutex;
  std::vector<Pool> pools{Pool{nullptr, {}}}; // the system's first
  std::unordered_map<void *, Sourced> sourced; // every live or pooled block of a source
  size_t cached = 0;                           // bytes in the pools (without headers)
  BufferUse use;                               // large blocks handed out
  std::atomic<const BlockSource *> source{nullptr};
  std::atomic<bool> everSourced{false};
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

void *withHeader(void *block, int64_t sizeClass) {
  static_cast<Header *>(block)->sizeClass = sizeClass;
  return static_cast<char *>(block) + kAlign;
}

// Takes a block of class `c` from `source`'s pool, or null; under the cache's lock.
void *fromPool(Cache &k, const BlockSource *source, int c) {
  Pool &pool = poolOf(k, source);
  if ((size_t)c >= pool.free.size() || pool.free[c].empty())
    return nullptr;
  void *block = pool.free[c].back();
  pool.free[c].pop_back();
  k.cached -= classBytes(c);
  return block;
}

// Puts a freed block of class `c` in its pool, or returns false when the cache is full;
// under the cache's lock.
bool toPool(Cache &k, const BlockSource *source, int c, void *block) {
  if (k.cached + classBytes(c) > kCacheLimit)
    return false;
  Pool &pool = poolOf(k, source);
  if ((size_t)c >= pool.free.size())
    pool.free.resize(c + 1);
  pool.free[c].push_back(block);
  k.cached += classBytes(c);
  return true;
}

} // namespace

void setBlockSource(const BlockSource *source) {
  Cache &k = cache();
  if (source)
    k.everSourced.store(true);
  k.source.store(source);
}
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
    return withHeader(block, -1);
  }
  const int c = classOf(bytes);
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live += classBytes(c);
    k.use.peak = std::max(k.use.peak, k.use.live);
    if (void *block = fromPool(k, source, c))
      return source ? block : withHeader(block, c);
  }
  void *block = source ? source->allocate(classBytes(c)) : systemAllocate(classBytes(c) + kAlign);
  std::lock_guard<std::mutex> lock(k.mutex);
  if (!block) {
    k.use.live -= classBytes(c);
    throw std::bad_alloc();
  }
  if (!source)
    return withHeader(block, c);
  k.sourced[block] = Sourced{c, source};
  return block;
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
  Cache &k = cache();
  if (k.everSourced.load()) {
    std::unique_lock<std::mutex> lock(k.mutex);
    if (auto it = k.sourced.find(p); it != k.sourced.end()) {
      const Sourced b = it->second;
      k.use.live -= classBytes(b.sizeClass);
      if (toPool(k, b.source, b.sizeClass, p))
        return;
      k.sourced.erase(it);
      lock.unlock();
      b.source->release(p);
      return;
    }
  }
  void *block = static_cast<char *>(p) - kAlign;
  const int64_t c = static_cast<Header *>(block)->sizeClass;
  if (c < 0) {
    systemRelease(block);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    k.use.live -= classBytes(c);
    if (toPool(k, nullptr, int(c), block))
      return;
  }
  systemRelease(block);
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
      for (void *block : blocks) {
        if (pool.source) {
          k.sourced.erase(block);
          pool.source->release(block);
        } else {
          systemRelease(block);
        }
      }
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
