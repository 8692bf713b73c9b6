// What every oneDNN-backed kernel of runtime/cpu shares (private to AttnRuntimeCpu): the CPU
// engine, one stream per thread, user-managed scratchpads, and one bounded cache of
// primitives for all kernels.
#ifndef ATTN_CPU_ONEDNN_H
#define ATTN_CPU_ONEDNN_H

#include "oneapi/dnnl/dnnl.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace attn::cpu::onednn {

dnnl::engine &engine();

/// One stream per thread: oneDNN streams are not meant to be shared between threads that
/// execute concurrently, and a CPU stream is cheap.
dnnl::stream &stream();

/// Primitives are created with a user-managed scratchpad and every call brings its own (a
/// thread-local buffer): with the library's default, primitives share a global scratchpad
/// unless oneDNN was built for concurrent execution (Debian's is not), and two threads running
/// cached primitives at once overwrote each other's temporaries (Matmul.ConcurrentCalls
/// failed about one run in ten).
dnnl::primitive_attr userScratchpad();

/// Adds this thread's scratchpad, sized for `desc`, to `args`.
void addScratchpad(std::unordered_map<int, dnnl::memory> &args, const dnnl::memory::desc &desc);

/// Runs `prim` with `args` plus this thread's scratchpad for `scratch`, then waits for it.
void execute(const dnnl::primitive &prim, std::unordered_map<int, dnnl::memory> args,
             const dnnl::memory::desc &scratch);

/// A cache key: a kind tag of the kernel family first, then whatever fixes its primitive
/// (ranks, sizes, strides, flags).
using Key = std::vector<int64_t>;

/// Kind tags, one per kernel family, so their keys never collide.
enum Kind : int64_t {
  kMatmul = 0,
  kDense = 1,
  kRnn = 2,
  kGru = 3,
  kLstm = 4,
  kMatmulBf16 = 5,
  kDenseBf16 = 6,
  kFlashTileBf16 = 8, // a bf16 tile product of the flash attention kernels
  kDenseInt8 = 9,
};

/// The primitives of every kernel, by key. Bounded (a pathological caller cannot grow it
/// without limit; compiled programs have a handful of configurations): when full it is
/// emptied. Entries are shared_ptrs, so a caller running an entry keeps it alive even if it is
/// evicted meanwhile. Lookup and insertion are under a mutex; `make` runs outside it.
constexpr size_t kMaxCached = 1024;

std::shared_ptr<void> findOrMake(const Key &key,
                                 const std::function<std::shared_ptr<void>()> &make);

/// The entry of type T for `key`, made by `make()` (returning a T) on a miss.
template <typename T, typename Make> std::shared_ptr<T> cached(const Key &key, Make make) {
  return std::static_pointer_cast<T>(
      findOrMake(key, [&]() -> std::shared_ptr<void> { return std::make_shared<T>(make()); }));
}

size_t cachedCount();
void clearCache();

} // namespace attn::cpu::onednn

#endif
