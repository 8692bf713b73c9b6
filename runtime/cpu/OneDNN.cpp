#include "OneDNN.h"

#include "attn/Alloc.h"
#include "attn/cpu/Matmul.h"

#include <map>
#include <mutex>
#include <string>

namespace attn::cpu::onednn {

dnnl::engine &engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream &stream() {
  static thread_local dnnl::stream s(engine());
  return s;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The scratchpad on a 64-byte boundary (attn/Alloc.h): oneDNN's kernels may round
// differently at another alignment, and where malloc puts a buffer differs from process to
// process, while an executable must train bit for bit as the JIT does.
void addScratchpad(std::unordered_map<int, dnnl::memory> &args, const dnnl::memory::desc &desc) {
  static thread_local std::vector<char, attn::BufferAllocator<char>> scratch;
  if (desc.get_size() > scratch.size())
    scratch.resize(desc.get_size());
  args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(desc, engine(), scratch.data());
}

void execute(const dnnl::primitive &prim, std::unordered_map<int, dnnl::memory> args,
             const dnnl::memory::desc &scratch) {
  addScratchpad(args, scratch);
  prim.execute(stream(), args);
  stream().wait();
}

namespace {

std::mutex cacheMutex;
std::map<Key, std::shared_ptr<void>> &entries() {
  static std::map<Key, std::shared_ptr<void>> all;
  return all;
}

} // namespace

std::shared_ptr<void> findOrMake(const Key &key,
                                 const std::function<std::shared_ptr<void>()> &make) {
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = entries().find(key);
    if (it != entries().end())
      return it->second;
  }
  // Outside the lock: creating a primitive can take a while. Two threads missing the same key
  // both make one; the first inserted wins.
  std::shared_ptr<void> made = make();
  std::lock_guard<std::mutex> lock(cacheMutex);
  if (entries().size() >= kMaxCached)
    entries().clear();
  return entries().emplace(key, std::move(made)).first->second;
}

size_t cachedCount() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return entries().size();
}

void clearCache() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  entries().clear();
}

} // namespace attn::cpu::onednn

namespace attn::cpu {

std::string oneDnnDescription() {
  const dnnl_version_t *v = dnnl_version();
  // As ONEDNN_MAX_CPU_ISA spells them, so that what this prints can be set there.
  static const std::pair<dnnl::cpu_isa, const char *> kNames[] = {
      {dnnl::cpu_isa::sse41, "SSE41"},
      {dnnl::cpu_isa::avx, "AVX"},
      {dnnl::cpu_isa::avx2, "AVX2"},
      {dnnl::cpu_isa::avx2_vnni, "AVX2_VNNI"},
      {dnnl::cpu_isa::avx512_mic, "AVX512_MIC"},
      {dnnl::cpu_isa::avx512_mic_4ops, "AVX512_MIC_4OPS"},
      {dnnl::cpu_isa::avx512_core, "AVX512_CORE"},
      {dnnl::cpu_isa::avx512_core_vnni, "AVX512_CORE_VNNI"},
      {dnnl::cpu_isa::avx512_core_bf16, "AVX512_CORE_BF16"},
      {dnnl::cpu_isa::avx512_core_amx, "AVX512_CORE_AMX"},
  };
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  std::string name = "unknown (" + std::to_string((int)isa) + ")";
  for (auto [value, text] : kNames)
    if (value == isa)
      name = text;
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", effective ISA " + name;
}

} // namespace attn::cpu
