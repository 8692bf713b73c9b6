// A compiled program, as seen from C++: its manifest (attn/abi.h) plus a checked call path.
#ifndef ATTN_PROGRAM_H
#define ATTN_PROGRAM_H

#include "attn/Tensor.h"
#include "attn/abi.h"

#include <string>
#include <vector>

namespace attn {

// The shape of a manifest entry as a vector.
std::vector<int64_t> infoShape(const attn_tensor_info &info);
// A zero-filled tensor with the dtype and shape of a manifest entry.
Tensor makeTensor(const attn_tensor_info &info);

class Program;
// The parameters `to` takes, in its manifest's order, copied by name from `from`'s (a bucket
// or another precision of the same model). Throws std::runtime_error naming a parameter
// `from` has not, or has in another shape.
std::vector<Tensor> paramsFor(const Program &to, const Program &from,
                              const std::vector<Tensor> &fromParams);

class Program {
public:
  // Wraps a manifest; it must outlive the Program (it normally is static data of the compiled
  // module). Throws std::runtime_error on a null or inconsistent manifest.
  explicit Program(const attn_program_info *info);

  const attn_program_info &info() const { return *info_; }
  std::string name() const;

  // Entry lookup by name: null if absent / throws std::runtime_error listing the entries.
  const attn_entry_info *findEntry(const std::string &name) const;
  const attn_entry_info &entry(const std::string &name) const;
  std::vector<std::string> entryNames() const;

  // Runs `entry`: checks the parameter and input counts and each tensor's dtype + shape against
  // the manifest (std::runtime_error naming the entry, the tensor and both shapes, e.g.
  // "attn: model 'm', entry 'forward': input 'x' is f32[2, 4], expected f32[2, 3]"),
  // allocates the outputs, passes params..., inputs..., outputs... as void* and calls the entry.
  // Params and inputs are passed as mutable pointers (the C ABI has no const) but compiled
  // code never writes them.
  std::vector<Tensor> call(const std::string &entry, const std::vector<Tensor> &params,
                           const std::vector<Tensor> &inputs) const;

private:
  const attn_program_info *info_;
};

} // namespace attn

#endif // ATTN_PROGRAM_H
