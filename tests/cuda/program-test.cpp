// What a program compiled with --device cuda calls besides the kernels (attn/cuda/Offload.h),
// on a GPU, through the same C entry points as compiled code:
//
// - its memory: after attn_cuda_use_device_memory(), the runtime's blocks are managed memory
//   the GPU addresses, small and large; attn_cuda_prefetch moves one to the GPU and ignores
//   host memory;
// - its products: attn_rt_cuda_matmul / _dense on strided views (rows apart, column-major,
//   broadcast batches, views cuBLASLt takes no leading dimension for), and the bf16 forms,
//   against the product in double;
// - its generated kernels' launches: a PTX module through MLIR's mgpu* calls, with a memref
//   descriptor's five arguments as gpu-to-llvm passes them;
// - the order: everything is queued on one stream, and attn_rt_cuda_synchronize waits for it;
// - device buffers (mgpuMemAlloc, attn-device-buffers'): the products gather and fill them on
//   the GPU;
// - greedy decoding's choice (attn_cuda_argmax_rows) against std::max_element; beam search's
//   ranking (attn_cuda_top_k_rows) against a stable sort and its row gather
//   (attn_cuda_gather_rows) against memcpy.
//
// A plain program like the other GPU tests (exit 0 pass, 1 fail, 77 no GPU).
#include "attn/Alloc.h"
#include "attn/cuda/Offload.h"

#include "AttentionReference.h" // toBits, fromBits
#include "DecodeReference.h"
#include "GpuTest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using attn::cuda::DType;
using namespace attn::cuda::testing;

namespace {

std::mt19937 rng(7);

// `n` floats of the runtime's memory, normally distributed.
float *values(int64_t n) {
  auto *p = static_cast<float *>(attn::bufferAlloc(size_t(n) * sizeof(float)));
  std::normal_distribution<float> dist;
  for (int64_t i = 0; i < n; ++i)
    p[i] = dist(rng);
  return p;
}

attn_memref3 view3(float *data, int64_t offset, std::initializer_list<int64_t> sizes,
                   std::initializer_list<int64_t> strides) {
  attn_memref3 m{data, data, offset, {}, {}};
  std::copy(sizes.begin(), sizes.end(), m.sizes);
  std::copy(strides.begin(), strides.end(), m.strides);
  return m;
}

float at(const attn_memref3 &m, int64_t b, int64_t r, int64_t c) {
  if (m.sizes[0] == 1)
    b = 0;
  return m.aligned[m.offset + b * m.strides[0] + r * m.strides[1] + c * m.strides[2]];
}

// c = op(a) op(b) (+ bias) through attn_rt_cuda_matmul (or _dense, for rank-2 views with a
// bias), against double.
void checkProduct(const char *name, attn_memref3 a, attn_memref3 b, bool transA, bool transB,
                  const attn_memref1 *bias = nullptr) {
  std::printf("  %s\n", name);
  const int64_t batch = std::max(a.sizes[0], b.sizes[0]);
  const int64_t m = transA ? a.sizes[2] : a.sizes[1], k = transA ? a.sizes[1] : a.sizes[2];
  const int64_t n = transB ? b.sizes[1] : b.sizes[2];
  float *out = static_cast<float *>(attn::bufferAlloc(size_t(batch * m * n) * sizeof(float)));
  for (int64_t i = 0; i < batch * m * n; ++i)
    out[i] = NAN;
  attn_memref3 c = view3(out, 0, {batch, m, n}, {m * n, n, 1});
  if (bias) {
    attn_memref2 x{a.allocated, a.aligned, a.offset, {m, k}, {a.strides[1], a.strides[2]}};
    attn_memref2 w{b.allocated, b.aligned, b.offset, {k, n}, {b.strides[1], b.strides[2]}};
    attn_memref2 y{out, out, 0, {m, n}, {n, 1}};
    _mlir_ciface_attn_rt_cuda_dense(&x, &w, const_cast<attn_memref1 *>(bias), &y);
  } else {
    _mlir_ciface_attn_rt_cuda_matmul(&a, &b, &c, transA, transB);
  }
  // Queued on the stream: the host reads after the wait, as compiled code does.
  attn_rt_cuda_synchronize();
  double num = 0, den = 0;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          want += double(transA ? at(a, i, kk, r) : at(a, i, r, kk)) *
                  double(transB ? at(b, i, j, kk) : at(b, i, kk, j));
        if (bias)
          want += bias->aligned[bias->offset + j * bias->strides[0]];
        const double got = out[(i * m + r) * n + j];
        if (!std::isfinite(got))
          return fail(std::string(name) + ": an element of c is not finite (unwritten?)");
        num += (got - want) * (got - want);
        den += want * want;
      }
  const double error = std::sqrt(num / den);
  std::printf("    relative error %.2e\n", error);
  if (!(error <= 1e-5))
    fail(std::string(name) + ": relative error " + std::to_string(error));
  attn::bufferFree(out);
}

// bf16 factors (attn_rt_cuda_matmul_bf16 / _dense_bf16: rounded factors, f32 bias and result),
// against the product in double of the rounded values: a transposed view of b, then a dense
// with a bias.
void checkBf16Products() {
  std::printf("  bf16 factors: b transposed, then a dense with a bias\n");
  const int64_t m = 6, k = 40, n = 24;
  float *x = values(m * k), *w = values(k * n), *bias = values(n);
  auto *xb = static_cast<uint16_t *>(attn::bufferAlloc(m * k * 2));
  auto *wb = static_cast<uint16_t *>(attn::bufferAlloc(k * n * 2));
  for (int64_t i = 0; i < m * k; ++i)
    xb[i] = toBits(x[i], DType::BF16);
  for (int64_t i = 0; i < k * n; ++i)
    wb[i] = toBits(w[i], DType::BF16);
  float *out = static_cast<float *>(attn::bufferAlloc(m * n * 4));
  for (int withBias = 0; withBias < 2; ++withBias) {
    for (int64_t i = 0; i < m * n; ++i)
      out[i] = NAN;
    if (withBias) { // w as [k, n]
      attn_memref_bf16_2 xv{xb, xb, 0, {m, k}, {k, 1}}, wv{wb, wb, 0, {k, n}, {n, 1}};
      attn_memref1 bv{bias, bias, 0, {n}, {1}};
      attn_memref2 yv{out, out, 0, {m, n}, {n, 1}};
      _mlir_ciface_attn_rt_cuda_dense_bf16(&xv, &wv, &bv, &yv);
    } else { // w's memory read as b^T [n, k] with trans_b: b[j][kk] = w[kk * n + j]
      attn_memref_bf16_3 av{xb, xb, 0, {1, m, k}, {m * k, k, 1}};
      attn_memref_bf16_3 bv{wb, wb, 0, {1, n, k}, {n * k, 1, n}};
      attn_memref3 cv{out, out, 0, {1, m, n}, {m * n, n, 1}};
      _mlir_ciface_attn_rt_cuda_matmul_bf16(&av, &bv, &cv, 0, 1);
    }
    attn_rt_cuda_synchronize();
    double num = 0, den = 0;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double want = withBias ? bias[j] : 0.0;
        for (int64_t kk = 0; kk < k; ++kk)
          want += double(fromBits(xb[r * k + kk], DType::BF16)) *
                  double(fromBits(wb[kk * n + j], DType::BF16));
        const double got = out[r * n + j];
        if (!std::isfinite(got))
          return fail("bf16: an element of the result is not finite (unwritten?)");
        num += (got - want) * (got - want);
        den += want * want;
      }
    const double error = std::sqrt(num / den);
    std::printf("    relative error %.2e\n", error);
    if (!(error <= 1e-5)) // the products of bf16 values are exact in f32; only the sums round
      fail("bf16 " + std::string(withBias ? "dense" : "matmul") + ": relative error " +
           std::to_string(error));
  }
}

// Greedy decoding's choice on the GPU against std::max_element, on DecodeReference.h's cases:
// ties to the lowest index, rows wider than a block, a NaN first (it wins) and elsewhere (it
// does not).
void checkArgmax() {
  std::printf("  attn_cuda_argmax_rows against std::max_element\n");
  const int64_t rows = kDecodeCaseRows, cols = 1000;
  float *x = values(rows * cols);
  writeDecodeCases(x, cols);
  std::vector<int32_t> index(rows, -7);
  std::vector<float> value(rows);
  attn_cuda_argmax_rows(x, rows, cols, index.data(), value.data());
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * cols;
    const int32_t want = int32_t(std::max_element(row, row + cols) - row);
    if (index[r] != want ||
        !(value[r] == row[want] || (value[r] != value[r] && row[want] != row[want])))
      fail("row " + std::to_string(r) + ": index " + std::to_string(index[r]) + ", expected " +
           std::to_string(want));
  }
  attn::bufferFree(x);
}

// Beam search's ranking on the GPU against a stable sort (NaN as -inf), on the same cases:
// ties to the lowest index, across threads and across passes, rows wider than a block, NaNs,
// k = 1 and k = cols.
void checkTopK() {
  std::printf("  attn_cuda_top_k_rows against a stable sort\n");
  const int64_t rows = kDecodeCaseRows, cols = 1000;
  float *x = values(rows * cols);
  writeDecodeCases(x, cols);
  for (int64_t k : {int64_t(1), int64_t(6), cols}) {
    std::vector<int32_t> index(size_t(rows * k), -7);
    std::vector<float> value(size_t(rows * k));
    attn_cuda_top_k_rows(x, rows, cols, k, index.data(), value.data());
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = x + r * cols;
      std::vector<int32_t> order = ranking(row, cols);
      for (int64_t i = 0; i < k; ++i)
        if (index[r * k + i] != order[i] || value[r * k + i] != rankedValue(row[order[i]])) {
          fail("k " + std::to_string(k) + ", row " + std::to_string(r) + ", rank " +
               std::to_string(i) + ": index " + std::to_string(index[r * k + i]) + ", expected " +
               std::to_string(order[i]));
          break;
        }
    }
  }
  attn::bufferFree(x);

  std::printf("  attn_cuda_gather_rows against memcpy\n");
  const int64_t width = 37; // bytes per row: no alignment to count on
  auto *from = static_cast<char *>(attn::bufferAlloc(rows * width));
  auto *to = static_cast<char *>(attn::bufferAlloc(rows * width));
  for (int64_t i = 0; i < rows * width; ++i)
    from[i] = char(i * 7 + 1);
  const std::vector<int32_t> parents = {4, 0, 0, 2, 4};
  attn_cuda_gather_rows(from, to, width, parents.data(), rows);
  for (int64_t r = 0; r < rows; ++r)
    if (std::memcmp(to + r * width, from + parents[r] * width, width) != 0)
      fail("gathered row " + std::to_string(r) + " is not row " + std::to_string(parents[r]));
  attn::bufferFree(from);
  attn::bufferFree(to);
}

// out[i] = 2 * in[i] for i < size, over a memref<?xf32> descriptor (allocated, aligned,
// offset, size, stride): the parameters a generated kernel of one 1-D memref takes.
const char *const kTwicePtx = R"(.version 7.8
.target sm_90
.address_size 64
.visible .entry twice(.param .u64 p_allocated, .param .u64 p_aligned, .param .u64 p_offset,
                      .param .u64 p_size, .param .u64 p_stride)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .b64 %rd<9>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [p_aligned];
  ld.param.u64 %rd2, [p_offset];
  ld.param.u64 %rd3, [p_size];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  cvt.u64.u32 %rd4, %r4;
  setp.ge.u64 %p, %rd4, %rd3;
  @%p bra DONE;
  add.s64 %rd5, %rd4, %rd2;
  shl.b64 %rd6, %rd5, 2;
  cvta.to.global.u64 %rd7, %rd1;
  add.s64 %rd8, %rd7, %rd6;
  ld.global.f32 %f1, [%rd8];
  add.rn.f32 %f2, %f1, %f1;
  st.global.f32 [%rd8], %f2;
DONE:
  ret;
}
)";

void checkLaunch() {
  std::printf("  a PTX kernel through mgpuModuleLoadJIT and mgpuLaunchKernel\n");
  const int64_t n = 1000, offset = 3;
  float *data = values(n + offset);
  std::vector<float> before(data, data + n + offset);
  // Loaded at the first launch, kept after: the same module for the same PTX, wherever it
  // lies (a JIT's memory is reused by the next program's).
  void *module = mgpuModuleLoadJIT(const_cast<char *>(kTwicePtx), 2);
  std::string copy = kTwicePtx;
  if (mgpuModuleLoadJIT(copy.data(), 2) != module)
    fail("the same PTX was loaded twice");
  void *kernel = mgpuModuleGetFunction(module, "twice");
  void *stream = mgpuStreamCreate();
  void *allocated = data, *aligned = data;
  int64_t off = offset, size = n, stride = 1;
  void *params[] = {&allocated, &aligned, &off, &size, &stride};
  mgpuLaunchKernel(kernel, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params, nullptr, 5);
  mgpuStreamSynchronize(stream); // does not wait (launch.cpp) ...
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
  attn_rt_cuda_synchronize(); // ... this does
  for (int64_t i = 0; i < n + offset; ++i) {
    const float want = i < offset ? before[i] : 2 * before[i];
    if (data[i] != want)
      return fail("element " + std::to_string(i) + " is " + std::to_string(data[i]) +
                  ", expected " + std::to_string(want));
  }
  attn::bufferFree(data);
}

// attn-device-buffers' buffers (mgpuMemAlloc / mgpuMemFree, device memory the host must not
// touch) as the products' operands: a view gathered on the GPU, an empty sum's result filled
// there, against the same product of managed memory.
void checkDeviceBuffers() {
  std::printf("  device buffers: the pool's blocks, products reading and writing them\n");
  const int64_t m = 3, k = 4, n = 5;
  void *empty = mgpuMemAlloc(0, nullptr, false);
  if (!empty || !attn_cuda_device_addressable(empty))
    fail("an empty device buffer has no address the GPU takes");
  mgpuMemFree(empty, nullptr);
  // a: [1, 3, 4] as a view with strides no leading dimension describes, so it is gathered.
  float *a = values(48), *b = values(k * n), *out = values(m * n);
  auto *da = static_cast<float *>(mgpuMemAlloc(48 * sizeof(float), nullptr, false));
  auto *dc = static_cast<float *>(mgpuMemAlloc(m * n * sizeof(float), nullptr, false));
  if (!attn_cuda_device_addressable(da))
    fail("a device buffer is not addressed by the GPU");
  cudaMemcpyAsync(da, a, 48 * sizeof(float), cudaMemcpyDefault, nullptr);
  attn_memref3 va = view3(da, 0, {1, 3, 4}, {48, 2, 7}), vb = view3(b, 0, {1, 4, 5}, {20, 5, 1});
  attn_memref3 vc = view3(dc, 0, {1, m, n}, {m * n, n, 1});
  _mlir_ciface_attn_rt_cuda_matmul(&va, &vb, &vc, false, false);
  std::vector<float> got(m * n);
  cudaMemcpyAsync(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDefault, nullptr);
  attn_rt_cuda_synchronize();
  const attn_memref3 ha = view3(a, 0, {1, 3, 4}, {48, 2, 7});
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        want += double(at(ha, 0, r, kk)) * double(at(vb, 0, kk, j));
      if (!(std::abs(got[r * n + j] - want) <= 1e-5 * (1 + std::abs(want))))
        return fail("a product of a gathered device view: c[" + std::to_string(r) + ", " +
                    std::to_string(j) + "] = " + std::to_string(got[r * n + j]) + ", want " +
                    std::to_string(want));
    }
  // An empty sum (k = 0) into device memory: c = the bias, or 0.
  attn_memref2 x{da, da, 0, {m, 0}, {1, 1}}, w{b, b, 0, {0, n}, {n, 1}}, y{dc, dc, 0, {m, n}, {n, 1}};
  attn_memref1 bias{out, out, 0, {n}, {1}};
  _mlir_ciface_attn_rt_cuda_dense(&x, &w, &bias, &y);
  cudaMemcpyAsync(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDefault, nullptr);
  attn_rt_cuda_synchronize();
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j)
      if (got[r * n + j] != out[j])
        return fail("an empty product's result in device memory is not the bias");
  mgpuMemFree(da, nullptr);
  mgpuMemFree(dc, nullptr);
  attn_rt_cuda_synchronize();
  attn::bufferFree(a);
  attn::bufferFree(b);
  attn::bufferFree(out);
}

} // namespace

int main() {
  if (skipWithoutDevice())
    return 77;
  attn_cuda_use_device_memory();

  std::printf("  the runtime's blocks are managed memory\n");
  std::vector<float> host(16);
  for (size_t bytes : {size_t(100), size_t(1) << 20}) {
    void *p = attn::bufferAlloc(bytes);
    if (!attn_cuda_device_addressable(p))
      fail("a block of " + std::to_string(bytes) + " bytes is not addressed by the GPU");
    attn::bufferFree(p);
  }
  if (attn_cuda_device_addressable(host.data()))
    fail("a std::vector's memory is said to be addressed by the GPU");

  std::printf("  a prefetch moves a block to the GPU and leaves host memory alone\n");
  float *batch = values(1 << 18);
  std::vector<float> before(batch, batch + (1 << 18));
  attn_cuda_prefetch(batch, sizeof(float) << 18);
  attn_cuda_prefetch(host.data(), host.size() * sizeof(float)); // a hint only: ignored
  attn_rt_cuda_synchronize(); // a failed prefetch would leave an error for this wait
  if (std::memcmp(before.data(), batch, sizeof(float) << 18) != 0)
    fail("a prefetched block changed");
  attn::bufferFree(batch);

  float *a = values(2 * 3 * 4 * 4), *b = values(2 * 5 * 8), *bias = values(10);
  checkProduct("packed, b transposed", view3(a, 0, {2, 3, 4}, {12, 4, 1}),
               view3(b, 0, {2, 5, 4}, {20, 4, 1}), false, true);
  checkProduct("a a column-major view, b broadcast", view3(a, 0, {2, 3, 4}, {12, 1, 3}),
               view3(b, 0, {1, 4, 5}, {20, 5, 1}), false, false);
  checkProduct("rows apart (a slice of wider rows), an offset", view3(a, 2, {1, 3, 4}, {24, 8, 1}),
               view3(b, 1, {1, 4, 5}, {40, 8, 1}), false, false);
  checkProduct("gathered: strides no leading dimension describes",
               view3(a, 0, {1, 3, 4}, {48, 2, 7}), view3(b, 0, {1, 3, 5}, {40, 8, 1}), true, false);
  attn_memref1 packedBias{bias, bias, 0, {5}, {1}}, stridedBias{bias, bias, 1, {5}, {2}};
  checkProduct("dense, rows apart", view3(a, 0, {1, 6, 4}, {48, 8, 1}),
               view3(b, 0, {1, 4, 5}, {20, 5, 1}), false, false, &packedBias);
  checkProduct("dense, a strided bias", view3(a, 0, {1, 6, 4}, {24, 4, 1}),
               view3(b, 0, {1, 4, 5}, {20, 5, 1}), false, false, &stridedBias);
  checkBf16Products();
  checkArgmax();
  checkTopK();
  checkLaunch();
  checkDeviceBuffers();
  return finish();
}
