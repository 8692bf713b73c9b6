// What a program compiled with `--device cuda` needs of the CUDA runtime besides its kernels
// (attn/cuda/Offload.h):
//
// - its memory: every block of attn/Alloc.h comes from CUDA managed memory once the program
//   is opened, so the tensors the runtime makes and the compiled code's temporaries that the
//   host touches are addressed by the GPU's kernels and by the CPU's alike (the temporaries
//   only the GPU touches are device memory: launch.cpp's mgpuMemAlloc). Pages move to the
//   device at the GPU's first touch and stay there while only the GPU touches them; the CPU
//   reads a loss or a checkpoint's parameters after the device is synchronised.
// - its matrix products, attn_rt_matmul's and attn_rt_dense's contracts (f32 and bf16 factors)
//   on cuBLASLt, on the operands where they are (no copies; a view cuBLASLt cannot describe is
//   gathered first, on the GPU: an operand may be device memory, attn-device-buffers').
// - decoding's choices (greedy's argmax, beam search's k best per row) and beam search's row
//   gathers, on the GPU, so that a step reads back K or K x k tokens and the state stays there.
//
// The products are queued on the default stream, in order with the generated kernels'
// launches (launch.cpp); the host waits in attn_rt_cuda_synchronize where it touches memory:
// here only to gather an operand the GPU cannot address (host memory), which a --device cuda
// program does not make.
#include "attn/Alloc.h"
#include "attn/cuda/Device.h"
#include "attn/cuda/Kernels.h"
#include "attn/cuda/Matmul.h"
#include "attn/cuda/Offload.h"
#include "runtime/cuda/Fail.h"
#include "runtime/cuda/Gather.h"
#include "runtime/cuda/MatrixView.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <type_traits>

namespace {

using namespace attn::cuda;

using internal::fail;

void *managedAllocate(size_t bytes) {
  void *p = nullptr;
  if (cudaMallocManaged(&p, bytes, cudaMemAttachGlobal) != cudaSuccess) {
    (void)cudaGetLastError(); // out of memory is bufferAlloc's to report
    return nullptr;
  }
  return p;
}

void managedRelease(void *block) { (void)cudaFree(block); }

const attn::BlockSource kManaged{"CUDA managed memory", managedAllocate, managedRelease};

// A rank-3 view as cuBLASLt takes it: in place, or gathered into a packed block (freed by the
// caller with attn::bufferFree). M: attn_memref3 (f32) or attn_memref_bf16_3 (bf16 bits).
struct Operand {
  const void *data;
  MatrixView view;
  void *gathered = nullptr;
};

template <typename M> Operand operand(const char *kernel, const M &m) {
  using Element = std::remove_pointer_t<decltype(m.aligned)>;
  Operand o{m.aligned + m.offset, matrixView(m.sizes, m.strides)};
  if (o.view.direct)
    return o;
  const int64_t n = m.sizes[0] * m.sizes[1] * m.sizes[2];
  auto *packed = static_cast<Element *>(attn::bufferAlloc(size_t(n) * sizeof(Element)));
  if (deviceAddressable(m.aligned)) {
    // Queued after the work that writes the view (device memory: the host cannot read it).
    internal::gatherOnGpu(kernel, m, packed);
  } else {
    attn_rt_cuda_synchronize();
    for (int64_t b = 0, i = 0; b < m.sizes[0]; ++b)
      for (int64_t r = 0; r < m.sizes[1]; ++r)
        for (int64_t c = 0; c < m.sizes[2]; ++c)
          packed[i++] =
              m.aligned[m.offset + b * m.strides[0] + r * m.strides[1] + c * m.strides[2]];
  }
  const int64_t packedStrides[3] = {m.sizes[1] * m.sizes[2], m.sizes[2], 1};
  o.data = packed;
  o.gathered = packed;
  o.view = matrixView(m.sizes, packedStrides);
  return o;
}

template <typename M> std::string shapeOf(const M &m) {
  return "[" + std::to_string(m.sizes[0]) + ", " + std::to_string(m.sizes[1]) + ", " +
         std::to_string(m.sizes[2]) + "]";
}

// c = op(a) op(b) (+ bias), the operands as attn_rt_matmul takes them (M: attn_memref3) or
// attn_rt_matmul_bf16 (M: attn_memref_bf16_3; c and the bias f32 either way).
template <typename M>
void product(const char *kernel, const M &a, const M &b, attn_memref3 &c, bool transA, bool transB,
             const float *bias) {
  constexpr MatmulType type =
      std::is_same_v<M, attn_memref3> ? MatmulType::F32 : MatmulType::BF16Factors;
  const int64_t batch = c.sizes[0], m = c.sizes[1], n = c.sizes[2];
  const int64_t k = transA ? a.sizes[1] : a.sizes[2];
  if ((a.sizes[0] != 1 && a.sizes[0] != batch) || (b.sizes[0] != 1 && b.sizes[0] != batch) ||
      (transA ? a.sizes[2] : a.sizes[1]) != m || (transB ? b.sizes[1] : b.sizes[2]) != n ||
      (transB ? b.sizes[2] : b.sizes[1]) != k)
    fail(kernel, "shapes do not multiply: a " + shapeOf(a) + (transA ? "^T" : "") + ", b " +
                     shapeOf(b) + (transB ? "^T" : "") + ", c " + shapeOf(c));
  if (batch == 0 || m == 0 || n == 0)
    return;
  const MatrixView vc = matrixView(c.sizes, c.strides);
  if (!vc.direct || vc.transposed)
    fail(kernel, "the result " + shapeOf(c) + " is not a row-major view");
  float *out = c.aligned + c.offset;
  if (k == 0) { // an empty sum (cuBLASLt takes no zero-sized dimension): c = bias, or 0
    // Queued copies: c and the bias may be device memory, which the host cannot touch.
    for (int64_t i = 0; i < batch; ++i) {
      float *rows = out + i * vc.batchStride;
      cudaError_t err =
          bias ? cudaSuccess
               : cudaMemset2DAsync(rows, size_t(vc.ld) * sizeof(float), 0, n * sizeof(float), m);
      for (int64_t r = 0; bias && r < m && err == cudaSuccess; ++r)
        err = cudaMemcpyAsync(rows + r * vc.ld, bias, n * sizeof(float), cudaMemcpyDefault);
      if (err != cudaSuccess)
        fail(kernel, std::string("filling an empty product: ") + cudaGetErrorString(err));
    }
    return;
  }
  Operand oa = operand(kernel, a), ob = operand(kernel, b);
  MatmulShape s;
  s.batch = batch;
  s.m = m;
  s.n = n;
  s.k = k;
  s.transA = transA != oa.view.transposed;
  s.transB = transB != ob.view.transposed;
  s.broadcastA = a.sizes[0] == 1 && batch > 1;
  s.broadcastB = b.sizes[0] == 1 && batch > 1;
  s.lda = oa.view.ld;
  s.ldb = ob.view.ld;
  s.ldc = vc.ld;
  s.batchStrideA = oa.view.batchStride;
  s.batchStrideB = ob.view.batchStride;
  s.batchStrideC = vc.batchStride;
  // Queued: a gathered copy freed below is written again by the GPU in stream order, or by
  // the host after a wait.
  const Status st =
      matmul(s, type, oa.data, ob.data, out, bias, bias ? Epilogue::Bias : Epilogue::None);
  attn::bufferFree(oa.gathered);
  attn::bufferFree(ob.gathered);
  if (!st.ok())
    fail(kernel, st.message());
}

// [R, C] as [1, R, C].
template <typename M2, typename M3 = std::conditional_t<std::is_same_v<M2, attn_memref2>,
                                                        attn_memref3, attn_memref_bf16_3>>
M3 asRank3(const M2 &m) {
  return M3{m.allocated,
            m.aligned,
            m.offset,
            {1, m.sizes[0], m.sizes[1]},
            {m.sizes[0] * m.strides[0], m.strides[0], m.strides[1]}};
}

// y = x w + bias, attn_rt_dense's contract (M2: attn_memref2) or attn_rt_dense_bf16's
// (M2: attn_memref_bf16_2).
template <typename M2>
void dense(const char *kernel, const M2 &x, const M2 &w, const attn_memref1 &bias,
           attn_memref2 &y) {
  const int64_t n = bias.sizes[0];
  const float *b = bias.aligned + bias.offset;
  void *packedBias = nullptr;
  if (n > 1 && bias.strides[0] != 1) { // cuBLASLt's bias epilogue reads a packed vector
    auto *packed = static_cast<float *>(attn::bufferAlloc(size_t(n) * sizeof(float)));
    if (deviceAddressable(bias.aligned)) {
      internal::gatherOnGpu(kernel, bias, packed);
    } else {
      attn_rt_cuda_synchronize();
      for (int64_t j = 0; j < n; ++j)
        packed[j] = b[j * bias.strides[0]];
    }
    b = packed;
    packedBias = packed;
  }
  attn_memref3 y3 = asRank3(y);
  product(kernel, asRank3(x), asRank3(w), y3, false, false, b);
  attn::bufferFree(packedBias);
}

} // namespace

// The functions the CPU runtime reaches through weak references (attn::Program's probes in
// runtime/core/Program.cpp, the decoders' choices and row gathers in runtime/decode/Seq2Seq.cpp),
// all in this object: a program's products pull it in, and a link of a --device cuda bundle names
// attn_cuda_device_unavailable (compiler/Driver/Executable.cpp).
extern "C" const char *attn_cuda_device_unavailable(void) {
  static thread_local std::string why;
  why = deviceUnavailable();
  return why.c_str();
}

extern "C" void attn_cuda_use_device_memory(void) { attn::setBlockSource(&kManaged); }

extern "C" int attn_cuda_device_addressable(const void *p) { return deviceAddressable(p); }

extern "C" void attn_cuda_prefetch(const void *p, size_t bytes) {
  int device = 0;
  if (bytes == 0 || cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  cudaMemLocation to{};
  to.type = cudaMemLocationTypeDevice;
  to.id = device;
  if (cudaMemPrefetchAsync(p, bytes, to, 0, nullptr) != cudaSuccess)
    (void)cudaGetLastError(); // not managed memory: a hint, not an error
}

extern "C" void _mlir_ciface_attn_rt_cuda_matmul(attn_memref3 *a, attn_memref3 *b, attn_memref3 *c,
                                                 int64_t trans_a, int64_t trans_b) {
  product("attn_rt_cuda_matmul", *a, *b, *c, trans_a != 0, trans_b != 0, nullptr);
}

extern "C" void _mlir_ciface_attn_rt_cuda_dense(attn_memref2 *x, attn_memref2 *w,
                                                attn_memref1 *bias, attn_memref2 *y) {
  dense("attn_rt_cuda_dense", *x, *w, *bias, *y);
}

extern "C" void _mlir_ciface_attn_rt_cuda_matmul_bf16(attn_memref_bf16_3 *a, attn_memref_bf16_3 *b,
                                                      attn_memref3 *c, int64_t trans_a,
                                                      int64_t trans_b) {
  product("attn_rt_cuda_matmul_bf16", *a, *b, *c, trans_a != 0, trans_b != 0, nullptr);
}

extern "C" void _mlir_ciface_attn_rt_cuda_dense_bf16(attn_memref_bf16_2 *x, attn_memref_bf16_2 *w,
                                                     attn_memref1 *bias, attn_memref2 *y) {
  dense("attn_rt_cuda_dense_bf16", *x, *w, *bias, *y);
}

namespace {
// Runs `choose` into a device buffer of `count` indices and `count` values, then reads them back
// into index and value (host memory): queued after the step that wrote the scores.
template <typename Choose>
void readBackChoices(const char *kernel, int64_t count, int32_t *index, float *value,
                     Choose choose) {
  // Kept per thread, grown when a step asks more: a decoding step, not a cudaMalloc and a
  // cudaFree (which waits for the device) each.
  thread_local DeviceBuffer choices;
  if (size_t bytes = size_t(count) * (sizeof(int32_t) + sizeof(float)); choices.bytes() < bytes) {
    choices = DeviceBuffer(bytes);
    if (!choices.status().ok())
      fail(kernel, choices.status().message());
  }
  auto *deviceIndex = static_cast<int32_t *>(choices.data());
  auto *deviceValue = reinterpret_cast<float *>(deviceIndex + count);
  Status st = choose(deviceIndex, deviceValue);
  if (st.ok())
    if (cudaError_t err =
            cudaMemcpy(index, deviceIndex, size_t(count) * sizeof(int32_t), cudaMemcpyDeviceToHost);
        err != cudaSuccess || (err = cudaMemcpy(value, deviceValue, size_t(count) * sizeof(float),
                                                cudaMemcpyDeviceToHost)) != cudaSuccess)
      st = Status::error(cudaGetErrorString(err));
  if (!st.ok())
    fail(kernel, st.message());
}
} // namespace

extern "C" void attn_cuda_argmax_rows(const float *x, int64_t rows, int64_t cols, int32_t *index,
                                      float *value) {
  if (rows <= 0)
    return;
  readBackChoices("attn_cuda_argmax_rows", rows, index, value,
                  [&](int32_t *i, float *v) { return argmaxRows(rows, cols, x, i, v); });
}

extern "C" void attn_cuda_top_k_rows(const float *x, int64_t rows, int64_t cols, int64_t k,
                                     int32_t *index, float *value) {
  if (rows <= 0)
    return;
  readBackChoices("attn_cuda_top_k_rows", rows * k, index, value,
                  [&](int32_t *i, float *v) { return topKRows(rows, cols, k, x, i, v); });
}

extern "C" void attn_cuda_gather_rows(const void *from, void *to, int64_t row_bytes,
                                      const int32_t *parents, int64_t rows) {
  const char *kernel = "attn_cuda_gather_rows";
  // One copy per row, queued in order after the step that wrote `from` (a beam's few rows).
  for (int64_t r = 0; r < rows; ++r)
    if (cudaError_t err = cudaMemcpyAsync(static_cast<char *>(to) + r * row_bytes,
                                          static_cast<const char *>(from) + parents[r] * row_bytes,
                                          size_t(row_bytes), cudaMemcpyDefault, nullptr);
        err != cudaSuccess)
      fail(kernel, cudaGetErrorString(err));
  // The host may read the rows next (a decoder's attention weights for a plot).
  if (cudaError_t err = cudaStreamSynchronize(nullptr); err != cudaSuccess)
    fail(kernel, cudaGetErrorString(err));
}
