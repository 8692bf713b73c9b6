#include "attn/Tensor.h"
#include "attn/Alloc.h"

#include <cstdlib>
#include <cstring>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace attn {

namespace {
constexpr size_t kAlignment = 64;
} // namespace

const char *dtypeName(attn_dtype dtype) {
  switch (dtype) {
  case ATTN_F32:
    return "f32";
  case ATTN_I32:
    return "i32";
  }
  return "?";
}

size_t dtypeSize(attn_dtype dtype) {
  switch (dtype) {
  case ATTN_F32:
    return sizeof(float);
  case ATTN_I32:
    return sizeof(int32_t);
  }
  throw std::runtime_error("attn: unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw std::runtime_error("attn: negative dimension in shape " + shapeToString(shape));
    n *= d;
  }
  return n;
}

void Tensor::FreeDeleter::operator()(void *p) const { bufferFree(p); }

Tensor::Tensor() : shape_{0} {}

Tensor::Tensor(attn_dtype dtype, std::vector<int64_t> shape)
    : Tensor(dtype, std::move(shape), /*zero=*/true) {}

Tensor::Tensor(attn_dtype dtype, std::vector<int64_t> shape, bool zero)
    : dtype_(dtype), shape_(std::move(shape)), numel_(shapeNumel(shape_)) {
  dtypeSize(dtype_); // validates the dtype
  allocate(zero);
}

Tensor Tensor::uninitialized(attn_dtype dtype, std::vector<int64_t> shape) {
  return Tensor(dtype, std::move(shape), /*zero=*/false);
}

void Tensor::allocate(bool zero) {
  if (numel_ == 0) {
    storage_.reset();
    return;
  }
  // Recycled buffers (attn/Alloc.h): a step's outputs reuse the last step's pages.
  size_t bytes = (nbytes() + kAlignment - 1) / kAlignment * kAlignment;
  void *p = bufferAlloc(bytes);
  if (zero)
    std::memset(p, 0, bytes);
  storage_.reset(p);
}

Tensor Tensor::f32(std::vector<int64_t> shape, const std::vector<float> &values) {
  Tensor t = uninitialized(ATTN_F32, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::runtime_error("attn: Tensor::f32: " + std::to_string(values.size()) +
                             " values for shape " + shapeToString(t.shape()));
  if (t.numel())
    std::memcpy(t.raw(), values.data(), t.nbytes());
  return t;
}

Tensor Tensor::i32(std::vector<int64_t> shape, const std::vector<int32_t> &values) {
  Tensor t = uninitialized(ATTN_I32, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::runtime_error("attn: Tensor::i32: " + std::to_string(values.size()) +
                             " values for shape " + shapeToString(t.shape()));
  if (t.numel())
    std::memcpy(t.raw(), values.data(), t.nbytes());
  return t;
}

Tensor::Tensor(const Tensor &other)
    : dtype_(other.dtype_), shape_(other.shape_), numel_(other.numel_) {
  allocate(/*zero=*/false);
  if (numel_)
    std::memcpy(raw(), other.raw(), nbytes());
}

Tensor &Tensor::operator=(const Tensor &other) {
  if (this != &other) {
    Tensor copy(other);
    *this = std::move(copy);
  }
  return *this;
}

// A moved-from tensor is left as the empty f32 [0] tensor, so it stays consistent.
Tensor::Tensor(Tensor &&other) noexcept
    : dtype_(other.dtype_), shape_(std::move(other.shape_)), numel_(other.numel_),
      storage_(std::move(other.storage_)) {
  other.dtype_ = ATTN_F32;
  other.shape_ = {0};
  other.numel_ = 0;
}

Tensor &Tensor::operator=(Tensor &&other) noexcept {
  if (this != &other) {
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    numel_ = other.numel_;
    storage_ = std::move(other.storage_);
    other.dtype_ = ATTN_F32;
    other.shape_ = {0};
    other.numel_ = 0;
  }
  return *this;
}

namespace {
void checkDtype(attn_dtype have, attn_dtype want) {
  if (have != want)
    throw std::runtime_error(std::string("attn: Tensor::data: tensor is ") + dtypeName(have) +
                             ", accessed as " + dtypeName(want));
}
} // namespace

template <> float *Tensor::data<float>() {
  checkDtype(dtype_, ATTN_F32);
  return static_cast<float *>(raw());
}
template <> const float *Tensor::data<float>() const {
  checkDtype(dtype_, ATTN_F32);
  return static_cast<const float *>(raw());
}
template <> int32_t *Tensor::data<int32_t>() {
  checkDtype(dtype_, ATTN_I32);
  return static_cast<int32_t *>(raw());
}
template <> const int32_t *Tensor::data<int32_t>() const {
  checkDtype(dtype_, ATTN_I32);
  return static_cast<const int32_t *>(raw());
}

namespace {
// Prints the sub-tensor starting at flat index `base` for dimension `dim` as nested lists.
// `budget` counts the elements still allowed; once it is spent the rest becomes "...".
void printNested(std::ostringstream &os, const Tensor &t, size_t dim, int64_t base,
                 int64_t &budget) {
  const auto &shape = t.shape();
  if (dim == shape.size()) {
    if (t.dtype() == ATTN_F32)
      os << static_cast<const float *>(t.raw())[base];
    else
      os << static_cast<const int32_t *>(t.raw())[base];
    --budget;
    return;
  }
  int64_t inner = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  os << "[";
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i)
      os << ", ";
    if (budget <= 0) {
      os << "...";
      break;
    }
    printNested(os, t, dim + 1, base + i * inner, budget);
  }
  os << "]";
}
} // namespace

std::string Tensor::str(int64_t maxElements) const {
  std::ostringstream os;
  os << dtypeName(dtype_) << shapeToString(shape_) << " ";
  int64_t budget = maxElements;
  if (numel_ == 0)
    os << "[]";
  else
    printNested(os, *this, 0, 0, budget);
  return os.str();
}

std::ostream &operator<<(std::ostream &os, const Tensor &t) { return os << t.str(); }

} // namespace attn
