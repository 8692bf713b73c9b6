// The program manifest: what a compiled module holds (parameters, entry points, tensor
// shapes), read off the lowered module, rendered as the C header of an AOT object, or
// materialised as the runtime's attn_program_info for the JIT.
#pragma once

#include "attn/abi.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::target {

struct TensorDesc {
  std::string name;
  attn_dtype dtype = ATTN_F32;
  std::vector<int64_t> shape;
  std::string init; // parameters only
  float scale = 0.0f;
};

struct EntryDesc {
  std::string name;   // "forward"
  std::string symbol; // "attn_rnn_sine_forward"
  std::vector<TensorDesc> inputs, outputs;
  int64_t capacity = 0; // attn_entry_info::capacity, from the entry's attn.capacity
};

struct Manifest {
  std::string model;  // "rnn-sine"
  std::string cname;  // "rnn_sine"
  // AOT objects: the CPU compiled for and the features its code may use (see attn_program_info);
  // empty for the JIT's host code.
  std::string cpu, cpuFeatures;
  // "cuda" for a program compiled for the GPU (the driver's Session sets it for --device cuda;
  // a lowered module calling an attn_rt_cuda_* entry of attn/cuda/Offload.h says so too),
  // else empty: attn_program_info::device.
  std::string device;
  std::vector<TensorDesc> params;
  std::vector<EntryDesc> entries;
};

/// The symbol prefix of a model's packed entry points: "attn_<cname>_".
std::string entryPrefix(const std::string &cname);

/// Reads the manifest of a module after attn-params-to-args (parameter table in the
/// `attn.params` attribute, entry signatures on tensors). Fails with a diagnostic on types
/// the ABI cannot carry.
mlir::FailureOr<Manifest> readManifest(mlir::ModuleOp module, const std::string &model,
                                       const std::string &cname);

/// The manifest as JSON text and back (the compile cache stores it beside the object);
/// nullopt for text that is not one.
std::string manifestToJson(const Manifest &manifest);
std::optional<Manifest> manifestFromJson(const std::string &text);

/// The C header declaring an AOT object's entry points and its attn_program_info.
std::string renderHeader(const Manifest &manifest, const std::string &source);

/// attn_program_info over a Manifest, with entry functions from `resolve(symbol)`.
/// Owns every array it points to; the Manifest may go away.
class ProgramInfo {
public:
  ProgramInfo(const Manifest &manifest,
              const std::function<attn_entry_fn(const std::string &)> &resolve);
  const attn_program_info *get() const { return &info; }

private:
  attn_tensor_info convert(const TensorDesc &t);
  std::vector<std::unique_ptr<std::string>> strings;
  std::vector<std::vector<attn_tensor_info>> tensorLists;
  std::vector<attn_entry_info> entries;
  attn_program_info info{};
};

} // namespace attn::target
