// The recycling buffer allocator (runtime/include/attn/Alloc.h) and its MLIR-facing symbols.
#include "attn/Alloc.h"
#include "attn/Tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

namespace {

bool aligned64(const void *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(Alloc, LargeBlocksAreReused) {
  attn::bufferTrim();
  void *a = attn::bufferAlloc(1 << 20);
  ASSERT_TRUE(aligned64(a));
  std::memset(a, 1, 1 << 20); // the whole block is usable
  attn::bufferFree(a);
  // A size of the same class (above 768 KiB, up to 1 MiB) comes back from the free list.
  void *b = attn::bufferAlloc((1 << 20) - 100000);
  EXPECT_EQ(a, b);
  attn::bufferFree(b);
  attn::bufferTrim();
}

TEST(Alloc, SizesAndAlignment) {
  std::set<void *> live;
  for (size_t bytes : {1ul, 63ul, 64ul, 4000ul, 70000ul, 300001ul, 5000000ul}) {
    void *p = attn::bufferAlloc(bytes);
    EXPECT_TRUE(aligned64(p)) << bytes;
    std::memset(p, 0xab, bytes);
    EXPECT_TRUE(live.insert(p).second) << "a live block was handed out twice";
  }
  for (void *p : live)
    attn::bufferFree(p);
  attn::bufferFree(nullptr);
}

// What compiled code calls (use-generic-functions).
TEST(Alloc, MlirGenericFunctions) {
  void *p = _mlir_memref_to_llvm_alloc(256 * 1024);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned64(p));
  _mlir_memref_to_llvm_free(p);
  void *q = _mlir_memref_to_llvm_aligned_alloc(64, 100);
  EXPECT_TRUE(aligned64(q));
  _mlir_memref_to_llvm_free(q);
}

// Tensors draw from the same lists and are still zero-initialised when reused.
TEST(Alloc, ReusedTensorStorageIsZeroed) {
  const void *first;
  {
    attn::Tensor t(ATTN_F32, {512, 512});
    first = t.raw();
    std::fill(t.data<float>(), t.data<float>() + t.numel(), 3.0f);
  }
  attn::Tensor u(ATTN_F32, {512, 512});
  EXPECT_EQ(u.raw(), first);
  for (int64_t i = 0; i < u.numel(); ++i)
    ASSERT_EQ(u.data<float>()[i], 0.0f) << i;
}

// A source of blocks that counts what it hands out, over the system's memory: what the CUDA
// runtime's managed memory is to a --device cuda program (attn/Alloc.h, BlockSource).
int sourceBlocks = 0;
size_t lastSourceBytes = 0;
void *countedAllocate(size_t bytes) {
  ++sourceBlocks;
  lastSourceBytes = bytes;
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  std::memset(p, 0xa5, bytes);
  return p;
}
void countedRelease(void *block) {
  --sourceBlocks;
  std::free(block);
}
const attn::BlockSource counted{"counted", countedAllocate, countedRelease};

TEST(Alloc, BlocksOfASourceAreRecycledForItAlone) {
  attn::bufferTrim();
  attn::setBlockSource(&counted);
  EXPECT_EQ(attn::blockSource(), &counted);
  // Small blocks come from the source too, and are recycled.
  void *small = attn::bufferAlloc(100);
  EXPECT_TRUE(aligned64(small));
  EXPECT_EQ(sourceBlocks, 1);
  attn::bufferFree(small);
  EXPECT_EQ(attn::bufferAlloc(100), small);
  void *large = attn::bufferAlloc(1 << 20);
  EXPECT_EQ(sourceBlocks, 2);
  attn::bufferFree(large);

  // Back to the system's memory: the source's free blocks are not handed out for it ...
  attn::setBlockSource(nullptr);
  void *system = attn::bufferAlloc(1 << 20);
  EXPECT_NE(system, large);
  EXPECT_EQ(sourceBlocks, 2);
  // ... and a source's block freed now goes back to the source's list.
  attn::bufferFree(small);
  attn::bufferFree(system);
  attn::setBlockSource(&counted);
  EXPECT_EQ(attn::bufferAlloc(100), small);
  EXPECT_EQ(attn::bufferAlloc(1 << 20), large);
  EXPECT_EQ(sourceBlocks, 2);
  attn::bufferFree(small);
  attn::bufferFree(large);
  attn::setBlockSource(nullptr);
  // Trimming returns every cached block to its source.
  attn::bufferTrim();
  EXPECT_EQ(sourceBlocks, 0);
}

// The allocator writes nothing into a source's blocks (a header written on the host would
// move a device block's first page to the CPU at every allocation): the caller gets the
// source's own address, and a block freed and handed out again is as the source made it.
TEST(Alloc, ASourcesBlocksHoldNoHeader) {
  attn::bufferTrim();
  attn::setBlockSource(&counted);
  for (size_t bytes : {size_t(100), size_t(300000)}) {
    auto *p = static_cast<unsigned char *>(attn::bufferAlloc(bytes));
    const size_t size = lastSourceBytes;
    EXPECT_GE(size, bytes);
    attn::bufferFree(p);
    EXPECT_EQ(attn::bufferAlloc(bytes), p);
    attn::bufferFree(p);
    for (size_t i = 0; i < size; ++i)
      ASSERT_EQ(p[i], 0xa5) << "byte " << i << " of a " << bytes << "-byte block";
  }
  attn::setBlockSource(nullptr);
  attn::bufferTrim();
  EXPECT_EQ(sourceBlocks, 0);
}

} // namespace
