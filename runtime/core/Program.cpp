#include "attn/Program.h"
#include "attn/Cpu.h"

#include <cstring>
#include <stdexcept>

// attn/cuda/Offload.h's probes, defined where attnc's CUDA runtime is linked (a program
// compiled with --device cuda calls its kernels, which pull them in); null elsewhere. Weak, so
// that the CPU runtime never needs the CUDA one.
extern "C" const char *attn_cuda_device_unavailable(void) __attribute__((weak));
extern "C" void attn_cuda_use_device_memory(void) __attribute__((weak));
extern "C" int attn_cuda_device_addressable(const void *p) __attribute__((weak));
extern "C" void attn_cuda_prefetch(const void *p, size_t bytes) __attribute__((weak));

namespace attn {

std::vector<int64_t> infoShape(const attn_tensor_info &info) {
  if (info.rank < 0 || info.rank > ATTN_MAX_RANK)
    throw std::runtime_error(std::string("attn: tensor '") + (info.name ? info.name : "?") +
                             "' has invalid rank " + std::to_string(info.rank));
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

Tensor makeTensor(const attn_tensor_info &info) { return Tensor(info.dtype, infoShape(info)); }

std::vector<Tensor> paramsFor(const Program &to, const Program &from,
                              const std::vector<Tensor> &fromParams) {
  const attn_program_info &mine = to.info(), &its = from.info();
  std::vector<Tensor> params;
  for (int i = 0; i < mine.num_params; ++i) {
    int j = 0;
    while (j < its.num_params && std::strcmp(its.params[j].name, mine.params[i].name) != 0)
      ++j;
    if (j == its.num_params || infoShape(its.params[j]) != infoShape(mine.params[i]))
      throw std::runtime_error(
          "attn: the program '" + to.name() + "' has the parameter '" + mine.params[i].name + "' " +
          shapeToString(infoShape(mine.params[i])) + ", which '" + from.name() + "' has not");
    params.push_back(fromParams.at(j));
  }
  return params;
}

namespace {

std::string describe(attn_dtype dtype, const std::vector<int64_t> &shape) {
  return dtypeName(dtype) + shapeToString(shape);
}

std::string safeName(const char *name) { return name ? name : "<unnamed>"; }

// `tensors` must match `infos` one to one; `what` is "parameter" / "input".
void checkTensors(const std::string &where, const char *what, const attn_tensor_info *infos,
                  int32_t count, const std::vector<Tensor> &tensors) {
  if (static_cast<int64_t>(tensors.size()) != count)
    throw std::runtime_error(where + ": expected " + std::to_string(count) + " " + what +
                             "s, got " + std::to_string(tensors.size()));
  for (int32_t i = 0; i < count; ++i) {
    const attn_tensor_info &info = infos[i];
    const Tensor &t = tensors[i];
    std::vector<int64_t> want = infoShape(info);
    if (t.dtype() != info.dtype || t.shape() != want)
      throw std::runtime_error(where + ": " + what + " '" + safeName(info.name) + "' is " +
                               describe(t.dtype(), t.shape()) + ", expected " +
                               describe(info.dtype, want));
  }
}

} // namespace

Program::Program(const attn_program_info *info) : info_(info) {
  if (!info)
    throw std::runtime_error("attn: Program: null program info");
  if ((info->num_params && !info->params) || (info->num_entries && !info->entries))
    throw std::runtime_error("attn: Program '" + safeName(info->name) +
                             "': manifest has counts but null arrays");
  for (int32_t i = 0; i < info->num_entries; ++i)
    if (!info->entries[i].name || !info->entries[i].fn)
      throw std::runtime_error("attn: Program '" + safeName(info->name) + "': entry " +
                               std::to_string(i) + " has no name or function");
  if (info->cpu_features) {
    std::vector<std::string> missing = missingCpuFeatures(info->cpu_features);
    if (!missing.empty()) {
      std::string list;
      for (const std::string &f : missing)
        list += (list.empty() ? "" : ", ") + f;
      throw std::runtime_error(
          "attn: model '" + safeName(info->name) + "' was compiled for the CPU '" +
          safeName(info->cpu) + "', whose instructions this CPU lacks: " + list +
          "; compile it again for this machine (attnc compile --cpu native) or for an older "
          "CPU (--cpu x86-64-v3)");
    }
  }
  if (info->device) {
    std::string why;
    if (std::strcmp(info->device, "cuda") != 0)
      why = "this runtime knows no device '" + std::string(info->device) + "'";
    else if (!attn_cuda_device_unavailable)
      why = "it was linked without attnc's CUDA runtime (libAttnRuntimeCuda)";
    else
      why = attn_cuda_device_unavailable();
    if (!why.empty())
      throw std::runtime_error("attn: model '" + safeName(info->name) +
                               "' was compiled with --device " + info->device +
                               " and cannot run here: " + why);
    // Before the program's tensors are made: the GPU's kernels take them where they are.
    if (attn_cuda_use_device_memory)
      attn_cuda_use_device_memory();
  }
}

std::string Program::name() const { return safeName(info_->name); }

const attn_entry_info *Program::findEntry(const std::string &name) const {
  for (int32_t i = 0; i < info_->num_entries; ++i)
    if (name == info_->entries[i].name)
      return &info_->entries[i];
  return nullptr;
}

const attn_entry_info &Program::entry(const std::string &name) const {
  if (const attn_entry_info *e = findEntry(name))
    return *e;
  std::string known;
  for (const std::string &n : entryNames())
    known += (known.empty() ? "" : ", ") + n;
  throw std::runtime_error("attn: model '" + this->name() + "' has no entry '" + name +
                           "' (entries: " + (known.empty() ? "none" : known) + ")");
}

std::vector<std::string> Program::entryNames() const {
  std::vector<std::string> names;
  for (int32_t i = 0; i < info_->num_entries; ++i)
    names.emplace_back(info_->entries[i].name);
  return names;
}

std::vector<Tensor> Program::call(const std::string &entryName, const std::vector<Tensor> &params,
                                  const std::vector<Tensor> &inputs) const {
  const attn_entry_info &e = entry(entryName);
  std::string where = "attn: model '" + name() + "', entry '" + entryName + "'";
  checkTensors(where, "parameter", info_->params, info_->num_params, params);
  checkTensors(where, "input", e.inputs, e.num_inputs, inputs);
  std::vector<Tensor> outputs;
  outputs.reserve(e.num_outputs);
  // The entry writes every output whole: no zero fill.
  for (int32_t i = 0; i < e.num_outputs; ++i)
    outputs.push_back(Tensor::uninitialized(e.outputs[i].dtype, infoShape(e.outputs[i])));

  // A tensor made before a --device cuda program was opened lies in memory the GPU cannot
  // address: the call reads a copy in the runtime's (managed) memory, as a batch is uploaded.
  const bool onGpu = info_->device && attn_cuda_device_addressable;
  std::vector<Tensor> staged;
  staged.reserve(onGpu ? params.size() + inputs.size() : 0);
  auto operand = [&](const Tensor &t) {
    if (onGpu && t.raw() && !attn_cuda_device_addressable(t.raw())) {
      staged.push_back(t);
      return staged.back().raw();
    }
    return const_cast<void *>(t.raw());
  };
  // args = params..., inputs..., outputs... (attn/abi.h).
  std::vector<void *> args;
  args.reserve(params.size() + inputs.size() + outputs.size());
  for (const Tensor &t : params)
    args.push_back(operand(t));
  for (const Tensor &t : inputs) {
    args.push_back(operand(t));
    // The batch goes up in one transfer, not a page fault at a time.
    if (onGpu && attn_cuda_prefetch && args.back())
      attn_cuda_prefetch(args.back(), t.nbytes());
  }
  for (Tensor &t : outputs)
    args.push_back(t.raw());
  e.fn(args.data());
  return outputs;
}

} // namespace attn
