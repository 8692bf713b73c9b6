// The buffers of tensors and of compiled code's temporaries, recycled.
//
// A training step allocates and frees the same large buffers (activations, gradients, new
// weights) at every step. With plain malloc each of them above glibc's mmap threshold is a
// fresh mapping, and every first touch of every page is a page fault the kernel zeroes: for
// a Transformer's step that was three quarters of the time. bufferAlloc keeps freed large
// blocks in per-size-class free lists (sizes rounded up to a quarter of a power of two) and
// hands them out again; small blocks go to malloc. Thread-safe.
//
// Compiled code allocates through the same lists: it is lowered with MLIR's generic
// allocation functions, which the runtime defines (extern "C" below), for the JIT and for
// ahead-of-time objects alike.
#ifndef ATTN_ALLOC_H
#define ATTN_ALLOC_H

#include <cstddef>

namespace attn {

// At least `bytes` bytes, 64-byte aligned, uninitialised; throws std::bad_alloc on failure.
void *bufferAlloc(size_t bytes);
// Returns a block of bufferAlloc (or null) to its free list.
void bufferFree(void *p);
// Frees every cached block (tests; a process that is done with its models).
void bufferTrim();

// Where blocks come from. By default the system's memory; a program compiled for a GPU
// (`--device cuda`) has the CUDA runtime switch to memory that the CPU and the GPU both
// address (CUDA managed memory, runtime/cuda), so that the tensors the runtime makes (the
// parameters, the optimizer's state, a batch) and compiled code's temporaries are the GPU
// kernels' operands as they are, on the device once the GPU has touched them.
struct BlockSource {
  const char *name;                // for messages ("CUDA managed memory")
  void *(*allocate)(size_t bytes); // at least 64-byte aligned; null when out of memory
  void (*release)(void *block);
};
// Every block from now on comes from `source` (null: the system's memory again), small ones
// too, recycled in lists of their own: a free block is handed out again only for its source.
// The allocator writes nothing into a source's blocks (it keeps their size classes in a table
// of its own), so a device block's pages stay where the device put them.
// Blocks from an earlier source stay valid and go back to it when freed. `source` must live
// as long as the process.
void setBlockSource(const BlockSource *source);
const BlockSource *blockSource(); // null: the system's memory

// Bytes of the large blocks (64 KiB and more, rounded up to their size class) handed out and
// not yet freed, and the most there have been since the last resetBufferPeak(): what a test
// reads to check that a computation never held a buffer of some size (flash attention's
// [T, S] scores, say).
struct BufferUse {
  size_t live = 0, peak = 0;
};
BufferUse bufferUse();
void resetBufferPeak();

// Data derived from a buffer's contents and kept across calls (the int8 copy of a weight that
// runtime/cpu's attn_rt_dense_int8 keeps) must be dropped when the buffer is freed: a
// recycled block's next contents are another tensor's. The listener runs in bufferFree(p) for
// every block, before it can be handed out again. One listener per process (null: none).
using FreeListener = void (*)(void *p);
void setFreeListener(FreeListener listener);

// A standard allocator on bufferAlloc, for the runtime kernels' own temporaries: recycled and
// 64-byte aligned. Alignment matters beyond speed: oneDNN's small-GEMM paths and vectorised
// row loops can round differently at another alignment, and where malloc puts a buffer
// differs from process to process, while an executable must train bit for bit as the JIT
// does.
template <typename T> struct BufferAllocator {
  using value_type = T;
  BufferAllocator() = default;
  template <typename U> BufferAllocator(const BufferAllocator<U> &) {}
  T *allocate(size_t n) { return static_cast<T *>(bufferAlloc(n * sizeof(T))); }
  void deallocate(T *p, size_t) { bufferFree(p); }
  template <typename U> bool operator==(const BufferAllocator<U> &) const { return true; }
  template <typename U> bool operator!=(const BufferAllocator<U> &) const { return false; }
};

} // namespace attn

extern "C" {
// MLIR's memref-to-LLVM generic allocation functions (use-generic-functions).
void *_mlir_memref_to_llvm_alloc(size_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes);
void _mlir_memref_to_llvm_free(void *p);
}

#endif // ATTN_ALLOC_H
