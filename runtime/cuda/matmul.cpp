// attn/cuda/Matmul.h over cuBLASLt. cuBLASLt is column-major: a row-major C = op(A) op(B) is
// computed as the column-major C^T = op(B)^T op(A)^T, which reads the same memory: B is passed
// as cuBLASLt's A and A as its B, M and N trade places, and the bias (one per column of C) is
// one per row of C^T, which is what cuBLASLt's bias epilogue adds.
//
// cuBLASLt is opened with dlopen at the first product, not linked: loading its 540 MB shared
// library costs a process about 0.3 s and 200 MB of memory before main (its relocations and
// constructors), which every attnc command and every test paid wherever the toolkit was
// installed, the CPU-only ones included. cudart_static loads the driver the same way.
#include "attn/cuda/Matmul.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <memory>
#include <string>

namespace attn::cuda {
namespace {

// The cuBLASLt entry points this file calls, resolved once. The soname first (run path,
// LD_LIBRARY_PATH, ldconfig), then that name in the toolkit folder attnc was built with.
struct CublasLt {
#define ATTN_CUBLASLT_FUNCTIONS(X)                                                                 \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtMatmul)                                                                                \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatrixLayoutSetAttribute)
#define ATTN_DECLARE(name) decltype(&::name) name = nullptr;
  ATTN_CUBLASLT_FUNCTIONS(ATTN_DECLARE)
#undef ATTN_DECLARE
  Status status;

  CublasLt() {
    const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    void *lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string why = lib ? "" : dlerror();
#ifdef ATTN_CUBLASLT_DIR
    // The same major version: its structs (heuristic results, say) are what this file uses.
    if (!lib) {
      const std::string built = std::string(ATTN_CUBLASLT_DIR) + "/" + soname;
      lib = dlopen(built.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib)
        why += "; " + std::string(dlerror());
    }
#endif
    if (!lib) {
      status = Status::error("attn::cuda matmul: cannot load cuBLASLt: " + why);
      return;
    }
#define ATTN_RESOLVE(name)                                                                         \
  if (!(name = reinterpret_cast<decltype(name)>(dlsym(lib, #name)))) {                             \
    status = Status::error("attn::cuda matmul: " + soname + " has no " #name);                     \
    return;                                                                                        \
  }
    ATTN_CUBLASLT_FUNCTIONS(ATTN_RESOLVE)
#undef ATTN_RESOLVE
  }
#undef ATTN_CUBLASLT_FUNCTIONS
};

// Never unloaded nor destroyed: the per-thread contexts below may outlive any scope that
// could close it.
const CublasLt &lt() {
  static const CublasLt &loaded = *new CublasLt;
  return loaded;
}

// Enough for the heuristics' best algorithms on Hopper (cuBLAS's own default is 32 MiB there).
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

struct Context {
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  Status status;
  Context() {
    if (!lt().status.ok()) {
      status = lt().status;
      return;
    }
    if (lt().cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
      status = Status::error("attn::cuda matmul: cublasLtCreate failed");
      handle = nullptr;
      return;
    }
    if (cudaMalloc(&workspace, kWorkspaceBytes) != cudaSuccess) {
      status = Status::error("attn::cuda matmul: no device memory for the 32 MiB workspace");
      workspace = nullptr;
    }
  }
  ~Context() {
    if (workspace)
      cudaFree(workspace);
    if (handle)
      lt().cublasLtDestroy(handle);
  }
};

Context &context() {
  thread_local Context c;
  return c;
}

// cuBLASLt descriptors, destroyed with the call.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Descriptors() {
    if (preference)
      lt().cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t l : {a, b, c})
      if (l)
        lt().cublasLtMatrixLayoutDestroy(l);
    if (op)
      lt().cublasLtMatmulDescDestroy(op);
  }
};

std::string describe(const MatmulShape &s) {
  auto dim = [](int64_t x) { return std::to_string(x); };
  return "a [" + dim(s.broadcastA ? 1 : s.batch) + ", " + dim(s.transA ? s.k : s.m) + ", " +
         dim(s.transA ? s.m : s.k) + "], b [" + dim(s.broadcastB ? 1 : s.batch) + ", " +
         dim(s.transB ? s.n : s.k) + ", " + dim(s.transB ? s.k : s.n) + "], c [" + dim(s.batch) +
         ", " + dim(s.m) + ", " + dim(s.n) + "]";
}

// A column-major layout of rows x cols (leading dimension ld, 0: rows), `count` of them
// `stride` elements apart (stride 0: one matrix broadcast).
cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType_t type, int64_t rows, int64_t cols,
                      int64_t ld, int64_t count, int64_t stride) {
  cublasStatus_t st =
      lt().cublasLtMatrixLayoutCreate(l, type, uint64_t(rows), uint64_t(cols), ld ? ld : rows);
  if (st != CUBLAS_STATUS_SUCCESS || count == 1)
    return st;
  int32_t batch = int32_t(count);
  st = lt().cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof batch);
  if (st != CUBLAS_STATUS_SUCCESS)
    return st;
  return lt().cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &stride, sizeof stride);
}

} // namespace

Status loadMatmulLibrary() { return lt().status; }

Status matmul(const MatmulShape &s, MatmulType type, const void *a, const void *b, void *c,
              const void *bias, Epilogue epilogue, void *stream) {
  auto fail = [&](const std::string &why) {
    return Status::error("attn::cuda matmul " + describe(s) + ": " + why);
  };
  if (s.batch < 1 || s.m < 1 || s.n < 1 || s.k < 1 || s.batch > 0x7fffffff)
    return fail("every dimension must be >= 1");
  if (epilogue != Epilogue::None && !bias)
    return fail("a bias epilogue without a bias");
  Context &ctx = context();
  if (!ctx.status.ok())
    return ctx.status;

  // The factors' type, and the result's (the bias is the result's type).
  const cudaDataType_t data = type == MatmulType::F32   ? CUDA_R_32F
                              : type == MatmulType::F16 ? CUDA_R_16F
                                                        : CUDA_R_16BF;
  const cudaDataType_t result = type == MatmulType::BF16Factors ? CUDA_R_32F : data;
  const cublasComputeType_t compute =
      type == MatmulType::F32 && s.allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  Descriptors d;
  auto check = [&](cublasStatus_t st, const char *what) {
    return st == CUBLAS_STATUS_SUCCESS ? Status()
                                       : fail(std::string(what) + " failed (cuBLAS status " +
                                              std::to_string(int(st)) + ")");
  };
  if (Status st =
          check(lt().cublasLtMatmulDescCreate(&d.op, compute, CUDA_R_32F), "the descriptor");
      !st)
    return st;
  // cuBLASLt's A is our B, its B our A (see the top of the file).
  const cublasOperation_t opA = s.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  lt().cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
  lt().cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
  if (epilogue != Epilogue::None) {
    const cublasLtEpilogue_t e =
        epilogue == Epilogue::Bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_RELU_BIAS;
    lt().cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e);
    lt().cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                        sizeof bias);
  }
  // Column-major views: our B [K, N] row-major is N x K (ld N), or K x N (ld K) when transB.
  const int64_t m = s.n, n = s.m;
  // (A row-major matrix's leading dimension is its column-major view's.)
  auto stride = [](bool broadcast, int64_t given, int64_t packed) {
    return broadcast ? 0 : given ? given : packed;
  };
  if (Status st = check(layout(&d.a, data, s.transB ? s.k : m, s.transB ? m : s.k, s.ldb, s.batch,
                               stride(s.broadcastB, s.batchStrideB, s.k * m)),
                        "the layout of b");
      !st)
    return st;
  if (Status st = check(layout(&d.b, data, s.transA ? n : s.k, s.transA ? s.k : n, s.lda, s.batch,
                               stride(s.broadcastA, s.batchStrideA, s.k * n)),
                        "the layout of a");
      !st)
    return st;
  if (Status st =
          check(layout(&d.c, result, m, n, s.ldc, s.batch, stride(false, s.batchStrideC, m * n)),
                "the layout of c");
      !st)
    return st;

  if (Status st = check(lt().cublasLtMatmulPreferenceCreate(&d.preference), "the preference"); !st)
    return st;
  lt().cublasLtMatmulPreferenceSetAttribute(d.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &kWorkspaceBytes, sizeof kWorkspaceBytes);
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  if (lt().cublasLtMatmulAlgoGetHeuristic(ctx.handle, d.op, d.a, d.b, d.c, d.c, d.preference, 1,
                                          &best, &found) != CUBLAS_STATUS_SUCCESS ||
      found == 0)
    return fail("cuBLASLt has no algorithm for it");
  const float one = 1.0f, zero = 0.0f;
  return check(lt().cublasLtMatmul(ctx.handle, d.op, &one, b, d.a, a, d.b, &zero, c, d.c, c, d.c,
                                   &best.algo, ctx.workspace, kWorkspaceBytes,
                                   static_cast<cudaStream_t>(stream)),
               "cublasLtMatmul");
}

} // namespace attn::cuda
