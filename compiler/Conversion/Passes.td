//===- Passes.td - lowerings out of the attn dialect ------------------------------------===//
#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnToOneDNN : Pass<"attn-to-onednn", "mlir::ModuleOp"> {
  let summary = "lowers matmul and dense to calls of the runtime's cached oneDNN kernels";
  let description = [{
    `attn.matmul` and `attn.dense` become `func.call`s of `@attn_rt_matmul` /
    `@attn_rt_dense` (declared `llvm.emit_c_interface`, implemented in runtime/cpu) on
    memrefs of the operands and a fresh output buffer. Shapes are folded to the kernels'
    rank-3 (matmul: batch, rows, cols) and rank-2 (dense) forms with reshapes. The sequence
    ops `attn.rnn`, `attn.gru`, `attn.lstm` become calls of `@attn_rt_rnn_forward` (oneDNN's
    RNN primitives; `training` forwards keep their workspace) and their `*_grad` ops calls
    of `@attn_rt_rnn_backward`. An `attn.fused_attention` (and its `_grad`) whose score is a
    plain dot product `c * sum(q * k)`, with no captures, centre, window, mask region or
    weights, calls the runtime's FlashAttention-2 kernels (`@attn_rt_flash_attention[_backward]`, GEMM tiles,
    the scale `c` an f32 argument). One whose score is a dot product followed by scalar code,
    `f(sum(q * k), i, j, captures)` with scalar captures (ALiBi, a relative bias, softcapping,
    a learned temperature), under an optional mask region of scalar code, and with no centre,
    window or weights, calls the same kernels' `_regions` form
    (`@attn_rt_flash_attention_regions[_backward]`): the products stay GEMM tiles, and the
    regions become private tile functions, `@attn_score_tile_N`, `@attn_mask_tile_N` and
    `@attn_score_grad_tile_N` (the score's derivative with respect to the product, and its
    captures' gradients summed per tile), whose addresses the call passes. A mask region
    that is a sliding window (`e < c` or `e <= c` of a constant, e one of `i - j`, `j - i`,
    `abs(i - j)`: the spec's `sliding_window`) gets no tile function: the call passes the
    window's sides (`window_left`, `window_right`), and the kernels skip and band its tiles
    from the indices, as they do the causal mask's, with no pass over the tile pairs to
    classify them (a window of `W` then costs `O(S W)` in full). Every other
    `attn.fused_attention` and
    `attn.fused_attention_grad` calls a kernel generated for it, `@attn_fused_attention_N` / `@attn_fused_attention_grad_N`, a private
    function over the op's static shapes, one query row at a time: a loop over the keys
    evaluates the score region, inlined (its scalar ops in order, each chain of row ops as
    one loop over the head width, so `v . tanh(q + k)` keeps no row buffer), the masks
    (key padding, causal as the loop's end, the local window as a predicate), the softmax
    over one row of `S` scores and the weighted sum; the backward recomputes the weights
    from the saved log-sum-exp and runs the derived `score_grad` region, adding into the
    query, key and capture gradients. No kernel is written per attention family. It runs last in `attn-lower`, after attn-to-linalg and the
    clean-ups, and rewrites only the attn ops: a later fold or CSE of the `to_memref` / `to_tensor` pairs would hide a kernel's
    reads from one-shot bufferization, which could then let an in-place write clobber an
    operand before the kernel reads it.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::tensor::TensorDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::linalg::LinalgDialect"];
}

def AttnToCUDA : Pass<"attn-to-cuda", "mlir::ModuleOp"> {
  let summary = "runs the products, the fused attention and the recurrent layers on the GPU: calls of the runtime's CUDA kernels and generated attention kernels";
  let description = [{
    `--device cuda` (docs/cuda.md). Each op a runtime kernel of the GPU computes becomes a
    call of it, with the CPU kernel's operands, so that the same memrefs (CUDA managed memory
    in such a program) go in and out:

    - an `attn.matmul` or `attn.dense` in f32 or bf16: `@attn_rt_cuda_matmul` /
      `@attn_rt_cuda_dense`, `_bf16` for bf16 factors (cuBLASLt, exact f32 or bf16 tensor
      cores summed in f32, on the operands where they lie);
    - an `attn.fused_attention` and its `_grad` that the GPU's FlashAttention-2 kernels
      compute (a plain dot-product score `c * sum(q * k)` with no captures, centre, window,
      mask region or read weights, head dim 64 or 128 for both keys and values):
      `@attn_rt_cuda_flash_attention[_backward]`, with causality and scale; the runtime
      computes in bf16 and writes f32;
    - an `attn.lstm`, `attn.gru` or `attn.rnn` and its `_grad`, masked or not:
      `@attn_rt_cuda_rnn_forward` / `_backward` with the CPU RNN kernels' kind; the runtime
      runs the GPU's sequence loop in f32 (cuBLASLt GEMMs, one kernel per step for the gates,
      a GEMM for an LSTM's projection, a mask's blend per step).

    Every other `attn.fused_attention` and its `_grad` (another score: additive, concat, a
    written score region or mask region, captures; a local window or Gaussian; read weights;
    another head dim) becomes a call of the kernel attn-to-onednn would generate for it, in
    its GPU form: the same loops with the score regions inlined, as `gpu.launch` ops of one
    thread per row, so that no two threads add into one element. The forward runs a thread
    per (query row, key) for the scores, a thread per query row for their softmax and a
    thread per output element for the weighted sum; the backward a thread per query row
    (`d_q`, `d_center`, each row's share of the captures' gradients), then a thread per key
    row (`d_k`, `d_v`, over the queries that see the key), then a thread per element of each
    capture's gradient, summing the rows' shares in order. These kernels are slower than the
    flash kernels (no tiles, no tensor cores), but nothing leaves the GPU.

    An `attn.embedding_grad` (which attn-to-linalg leaves for a GPU program) becomes a call
    of a kernel generated for it, `@attn_embedding_grad_N(ids [N], dy [N, D], d_table [V,
    D])`: a launch of a thread per column, each zeroing its column and adding the positions'
    rows in order (positions may share an id: rows in parallel would race). These are the
    sums of attn-to-linalg's loop form, in its order; that form would run on the host, with
    a launch and a wait per position.

    Without `runtime-kernels` (`--device cuda-on-cpu`, the CPU's check of the GPU program)
    only the generated attention kernels are built, and the CPU's kernels stand in for the
    runtime's (attn-to-onednn takes those ops). Every other op stays for attn-to-onednn,
    which runs right after it: an int8 product. With `remarks`, each attention that does not
    go to the flash kernels says why (once). Like attn-to-onednn it rewrites only attn ops,
    and runs last but one in `attn-lower`. The loop nests around these calls become the
    program's generated kernels later (attn-linalg-to-gpu), and so does the generated
    attention kernels' zero fill.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "say why each fused attention is not on the flash kernels">,
    Option<"runtimeKernels", "runtime-kernels", "bool", "true",
           "call the GPU's runtime kernels; false: only the generated attention kernels "
           "(the CPU's kernels standing in, --device cuda-on-cpu)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::arith::ArithDialect", "mlir::gpu::GPUDialect",
                           "mlir::scf::SCFDialect", "mlir::math::MathDialect",
                           "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def AttnToLinalg : Pass<"attn-to-linalg", "mlir::ModuleOp"> {
  let summary = "lowers the remaining attn ops to linalg, tensor, arith, math and scf";
  let description = [{
    Elementwise ops (with broadcasting), softmax, layer_norm, reductions and embedding become
    `linalg.generic`s; shape ops become tensor ops; `attn.scan` becomes an `scf.for` over
    time whose iteration arguments are the carried values and the stacked outputs. Matmuls,
    dense layers and the sequence ops (rnn, gru, lstm and their backward ops) are left for
    attn-to-onednn, and so are the regions of runtime-kernel ops (a fused attention's score
    region is its kernel's recipe, not code to lower here). Composite ops must have been
    decomposed first: any other attn op left over is an error naming it.

    With `gpu` (`--device cuda` and `cuda-on-cpu`), `attn.embedding_grad` is left for
    attn-to-cuda too. Its loop form here (a loop over the positions adding one row each)
    would run on the host of a GPU program, reading each position's id there: a launch and a
    wait per position. And `attn.adam_update` computes its bias corrections `1 - beta^t` in
    its kernel, from the rank-0 step and learning rate, rather than once on the host, which
    would wait there for the whole backward before it queued the update.
  }];
  let options = [
    Option<"gpu", "gpu", "bool", /*default=*/"false",
           "a program for the GPU: leave attn.embedding_grad for attn-to-cuda, compute "
           "Adam's scalars in its kernel">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect"];
}

def AttnLinalgToGPU : Pass<"attn-linalg-to-gpu"> {
  let summary = "makes each linalg op on buffers a GPU kernel: a gpu.launch of one thread per point";
  let description = [{
    The compiler's generated kernels (docs/cuda.md, "Generated kernels"). Runs on bufferized
    code, where every elementwise chain, reduction, transpose, fill and copy that no runtime
    kernel computes is one linalg op. Each becomes a `gpu.launch` of 1-D blocks of
    `block-size` threads, one thread per point of the op's parallel loops: the thread turns
    its number into the loop indices (the last loop fastest, so that neighbouring threads
    touch neighbouring elements), and runs the op's reductions itself, innermost, in the
    order the CPU's loops take them, so each output element is the CPU's sum (up to the
    reassociation the CPU's vectorised loops may apply). Where a
    reduction loop comes before a parallel one (a bias gradient's column sums), the op is
    interchanged first. An op with no parallel loop (a sum to one value) runs in one thread,
    unless it is large (more than 16384 points, static) and its body is `out <combiner>
    f(inputs)` for an f32 add, multiply, max or min: then a first launch has each of up to
    264 blocks' threads combine a strided share of the points (thread p: points p, p +
    threads, ...; neighbouring threads read neighbouring elements) from the combiner's
    identity into a buffer of shares, and a second launch has one thread combine the
    output's value with the shares in order. A gradient's squared norm over a large
    embedding table so takes thousands of threads instead of one; the sum reassociates as
    the CPU's vectorised loops may.
    The launch's grid has at least one block (CUDA refuses an empty one); threads past the
    last point do nothing. Ops already inside a launch or a gpu.module are left alone.

    With `--device cuda` the launches are compiled to PTX and launched on the GPU
    (gpu-kernel-outlining, the NVVM lowering, gpu-module-to-binary, gpu-to-llvm).
    attn-gpu-launch-to-loops lowers the same launches to CPU loops (`--device
    cuda-on-cpu`): the check that the kernels compute what the CPU program computes runs
    on machines without a GPU.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256", "threads per block">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::affine::AffineDialect", "mlir::memref::MemRefDialect"];
}

def AttnDeviceBuffers : Pass<"attn-device-buffers", "mlir::ModuleOp"> {
  let summary = "puts each buffer only the GPU touches in device memory, each small one only the host touches on its stack";
  let description = [{
    `--device cuda` (and `cuda-on-cpu`, its check on the CPU), after attn-linalg-to-gpu and
    before the kernels are outlined: the device half of a program's memory (docs/cuda.md,
    "Memory"). A `memref.alloc` of the host code becomes a `gpu.alloc` (and each
    `memref.dealloc` of it a `gpu.dealloc`) when nothing but the GPU reads or writes its
    contents, that is when every use, through views (`subview`, `reinterpret_cast`,
    `collapse_shape`, `expand_shape`, `cast`, `extract_strided_metadata`'s base buffer), is

    - inside a `gpu.launch` (a generated kernel), or a `gpu.memcpy` (a constant's copy,
      queued on the stream),
    - an operand of a call of the CUDA runtime (`@attn_rt_cuda_*`: products on cuBLASLt, the
      flash attention and recurrent kernels, which gather from device memory on the GPU),
    - an operand of a call of one of the program's own functions whose parameter is, in the
      callee, used only so (attn-outline-loops moves each kernel into a function of its own),
    - a `memref.dealloc` in the allocating function, or an op that reads only the buffer's
      shape or address (`memref.dim`, `memref.rank`, `memref.extract_aligned_pointer_as_index`
      for the deallocation's pointer comparisons).

    Anything else keeps the buffer in the runtime's memory (CUDA managed memory, which both
    sides address): a load, store or copy on the host, a CPU kernel's call (int8 products), a
    buffer yielded by a loop or returned, or one a callee frees. The activations, gradients
    and scratch buffers of a training step so come from the device's stream-ordered pool
    (runtime/cuda/launch.cpp's `mgpuMemAlloc`, `cudaMallocAsync`), are recycled by it in
    stream order, and are never migrated or faulted in; the tensors the runtime makes
    (parameters, optimizer state, a batch) and what an entry returns stay managed, where the
    host reads them after a wait.

    A buffer that only the host's loads and stores touch (by the same rules, with host
    loads and stores in place of kernels), of a static shape of at most 1 KiB, freed in the
    block that allocates it, becomes a `memref.alloca` at the start of its function (its frees
    gone): buffer deallocation's bookkeeping arrays (the pointers and flags its helper
    compares). Taken from the runtime's recycled managed blocks, such an array could be a
    block that queued GPU work still reads when the host writes it; the stack is the host's
    alone, and the frees are in the allocating block, so no two lifetimes of one hoisted
    buffer overlap.

    The allocation is `gpu.alloc async` between two `gpu.wait`s: gpu-to-llvm lowers only the
    asynchronous form, and its stream is the runtime's one stream (the waits do not wait
    there; attn-gpu-host-sync's calls do). attn-constants-to-buffers' copies (`gpu.memcpy`,
    made before buffer deallocation, which cannot take a `gpu.wait`) get the same form here.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def AttnGPULaunchToLoops : Pass<"attn-gpu-launch-to-loops"> {
  let summary = "runs each gpu.launch on the CPU: the scf.parallel over its grid and blocks";
  let description = [{
    `--device cuda-on-cpu` (docs/cuda.md): the generated GPU kernels of
    attn-linalg-to-gpu run on the CPU from the same gpu-dialect code, for checking them
    without a GPU. A `gpu.launch` becomes an `scf.parallel` over (block x, y, z, thread x,
    y, z), from 0 to its grid and block sizes; the body's block and thread ids are the
    loop's indices and its grid and block dimensions the launch's sizes (as block
    arguments, or as `gpu.block_id` ... ops). A launch whose threads must run at the same
    time (barriers, shuffles, workgroup memory) has no such form and is an error naming
    the op. attn-device-buffers' device buffers (`gpu.alloc`, `gpu.dealloc`) become the
    host's (`memref.alloc`, `memref.dealloc`), attn-constants-to-buffers' copies
    (`gpu.memcpy`) `memref.copy`s, and the `gpu.wait`s around them go.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def AttnNVVMMath : Pass<"attn-nvvm-math"> {
  let summary = "gives the libdevice functions that are one PTX instruction that instruction as body";
  let description = [{
    After convert-gpu-to-nvvm, in the generated kernels' gpu.modules (`attnc emit
    --stage=ptx`). That lowering calls NVIDIA's libdevice for f32 math (`__nv_floorf`,
    `__nv_sqrtf`, ...); libdevice is bitcode in the CUDA toolkit, which attnc does not need
    in order to compile. The transcendental functions never reach it (attn-expand-math makes
    them polynomials first); what does is rounding, square roots, absolute values, minima,
    maxima, copysign and fma, each one PTX instruction, and the reciprocal square root,
    `1 / sqrt(x)` as the CPU computes it. Their declarations become internal,
    always-inlined functions of the LLVM intrinsic that NVPTX selects that instruction for
    (`llvm.floor.f32` is `cvt.rmi.f32.f32`, `llvm.sqrt.f32` the IEEE `sqrt.rn.f32`). A
    call of any other libdevice function is an error naming it.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttnConstantsToBuffers : Pass<"attn-constants-to-buffers"> {
  let summary = "reads each constant of a program through a buffer of the runtime's, filled from it";
  let description = [{
    `--device cuda` (and `cuda-on-cpu`, its check on the CPU), on bufferized code, before
    buffer deallocation. Bufferization makes a
    constant tensor (a positional table, a mask, a zero bias) a `memref.get_global` of a
    global in the program's object, which is host memory the GPU cannot address. Each such
    read becomes a fresh buffer (`memref.alloc`, from the runtime's allocator) and a
    `gpu.memcpy` of the global into it, queued on the runtime's one stream (`cudaMemcpyAsync`;
    the synchronous form, whose memory effects buffer deallocation reads: attn-device-buffers
    gives it the asynchronous form gpu-to-llvm lowers); every use reads the buffer, and buffer deallocation frees it like any other. The generated kernels and the
    runtime's GPU kernels then read constants where they read everything else. The copy is
    the GPU's work, in stream order: the host need not wait for the work before it (the fresh
    buffer may be a block that work still uses), and attn-device-buffers may make the buffer
    device memory. The copies cost one transfer per constant and call; the shipped models'
    constants are a few KiB. (`cuda-on-cpu`: attn-gpu-launch-to-loops makes each copy a
    `memref.copy`.)
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::gpu::GPUDialect"];
}

def AttnGPUHostSync : Pass<"attn-gpu-host-sync", "mlir::ModuleOp"> {
  let summary = "makes the host wait for the GPU only where it touches memory";
  let description = [{
    `--device cuda`, on bufferized code, before buffer deallocation (whose helpers touch only
    the host's own bookkeeping arrays, which attn-device-buffers puts on the host's stack)
    and before attn-linalg-to-gpu, which makes every linalg op on
    buffers a launch: this pass counts those ops as launches. The runtime runs every launch
    and every call
    of its CUDA functions (`@attn_rt_cuda_*`) asynchronously, in order, on one stream
    (runtime/cuda/launch.cpp; gpu-to-llvm's per-launch `mgpuStreamSynchronize` does not
    wait there). The host must wait before it touches memory the GPU may still be using,
    and only there: this pass inserts a call of `@attn_rt_cuda_synchronize` before

    - a load, a store or a copy on the host (any op with a read or write effect other than a
      launch, a `gpu.memcpy` or a linalg op: a scalar the host reads);
    - a call of a function outside the program other than the CUDA runtime's (a CPU kernel:
      an attention of another score, a bf16 product);
    - the return of a public function (an entry: the runtime reads its results),

    when GPU work may be queued: after a launch, a `gpu.memcpy` (a constant's copy,
    attn-constants-to-buffers), a CUDA runtime call, a call of one of the
    program's functions or a region holding any of these, and at the start of every block
    (a caller or the loop's previous iteration may have queued some). Allocation and
    deallocation touch no contents and need no wait: a block freed and handed out again is
    written by the GPU in stream order, or by the host after a wait (the host's stores into
    buffer deallocation's arrays, which this pass does not see, go to the stack). The CUDA runtime's
    functions that read memory on the host (the attention's and the recurrent layers'
    gathers) wait themselves.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
