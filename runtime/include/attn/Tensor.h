// A host tensor: dtype, static shape and owned, contiguous, row-major storage.
//
// Storage is 64-byte aligned (cache line / AVX-512), zero-initialised, and has value semantics:
// copying a Tensor copies its elements; moving it moves the buffer. This is what Program::call
// hands to compiled entry points as dense buffers (see attn/abi.h).
#ifndef ATTN_TENSOR_H
#define ATTN_TENSOR_H

#include "attn/abi.h"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// "f32" / "i32".
const char *dtypeName(attn_dtype dtype);
// Bytes per element: 4 for both current dtypes.
size_t dtypeSize(attn_dtype dtype);
// "[2, 3]" ("[]" for a scalar).
std::string shapeToString(const std::vector<int64_t> &shape);
// Product of the dimensions (1 for a scalar). Throws std::runtime_error on a negative dim.
int64_t shapeNumel(const std::vector<int64_t> &shape);

class Tensor {
public:
  // An empty f32 tensor of shape [0] (no storage).
  Tensor();
  // A zero-filled tensor of the given dtype and shape.
  Tensor(attn_dtype dtype, std::vector<int64_t> shape);
  // The same without the zero fill, for a buffer about to be written whole (a compiled
  // entry's outputs): its contents are unspecified until then.
  static Tensor uninitialized(attn_dtype dtype, std::vector<int64_t> shape);

  // Convenience constructors; `values.size()` must equal the shape's element count.
  static Tensor f32(std::vector<int64_t> shape, const std::vector<float> &values);
  static Tensor i32(std::vector<int64_t> shape, const std::vector<int32_t> &values);

  Tensor(const Tensor &other);
  Tensor &operator=(const Tensor &other);
  Tensor(Tensor &&other) noexcept;
  Tensor &operator=(Tensor &&other) noexcept;
  ~Tensor() = default;

  attn_dtype dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtypeSize(dtype_); }

  // Typed element access; T must match the dtype (float <-> f32, int32_t <-> i32), else
  // std::runtime_error. Null for an empty tensor.
  template <typename T> T *data();
  template <typename T> const T *data() const;
  // Untyped access, for the void** ABI.
  void *raw() { return storage_.get(); }
  const void *raw() const { return storage_.get(); }

  // "f32[2, 3] [[1, 2, 3], [4, 5, 6]]"; elements past `maxElements` are elided with "...".
  std::string str(int64_t maxElements = 64) const;

private:
  struct FreeDeleter {
    void operator()(void *p) const;
  };

  Tensor(attn_dtype dtype, std::vector<int64_t> shape, bool zero);
  void allocate(bool zero);

  attn_dtype dtype_ = ATTN_F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::unique_ptr<void, FreeDeleter> storage_;
};

template <> float *Tensor::data<float>();
template <> const float *Tensor::data<float>() const;
template <> int32_t *Tensor::data<int32_t>();
template <> const int32_t *Tensor::data<int32_t>() const;

// Prints Tensor::str().
std::ostream &operator<<(std::ostream &os, const Tensor &t);

} // namespace attn

#endif // ATTN_TENSOR_H
