// attn-to-cuda: the ops the GPU's runtime kernels compute become calls of the runtime's CUDA
// entry points (attn/cuda/Offload.h), with the CPU kernels' signatures, so that the op's
// operands and results are the same memrefs:
//
//   attn_rt_cuda_matmul / _dense                  f32 products (cuBLASLt)
//   attn_rt_cuda_flash_attention[_backward]       dot-product attention (FlashAttention-2)
//   attn_rt_cuda_rnn_forward / _backward          recurrent layers (the GPU's sequence loop)
//
// Every other fused attention (another score, head dim, a window, read weights) becomes a
// call of a kernel generated for it in its GPU form (AttnToLinalg/Attention.h: gpu.launch
// ops of one thread per row, the score regions inlined):
//
//   attn_fused_attention_N(q, k, v, mask[, center], captures..., out, lse[, weights])
//   attn_fused_attention_grad_N(<the op's operands>, dq, dk, dv[, dcenter], dcaptures...)
//
// An attn.embedding_grad (left by attn-to-linalg for a GPU program) becomes a kernel of a
// thread per column of the table's gradient:
//
//   attn_embedding_grad_N(ids [N] i32, dy [N, D], d_table [V, D])
//
// Without `runtime-kernels` (--device cuda-on-cpu) only those are built, and the CPU's
// kernels stand in for the runtime's. Everything else is left for attn-to-onednn.
#include "attn/Names.h"
#include "compiler/Conversion/AttnToLinalg/Attention.h"
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOCUDA
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

// Why the GPU kernels cannot compute `op`, or "" (they are built for head dims 64 and 128,
// with values as wide as the keys).
template <typename Op> std::string whyNotOnGpu(Op op) {
  bool readsWeights;
  if constexpr (std::is_same_v<Op, FusedAttentionOp>)
    readsWeights = op.getWithWeights();
  else
    readsWeights = static_cast<bool>(op.getWeights());
  if (readsWeights)
    return "its weights are read (the flash kernels never form them)";
  if (!flashScale(op))
    return "its score is not c * sum(q * k) alone (a capture, window, Gaussian or mask region)";
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto v = cast<RankedTensorType>(op.getValues().getType());
  int64_t d = q.getShape()[3], dv = v.getShape()[3];
  if ((d != 64 && d != 128) || dv != d)
    return "its head dims are " + std::to_string(d) + " (keys) and " + std::to_string(dv) +
           " (values); the GPU kernels take 64 or 128, the same for both";
  return "";
}

// A fused attention the flash kernels do not take: a call of its generated GPU kernel.
template <typename Op> struct ToGeneratedKernel : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    if (whyNotOnGpu(op).empty())
      return failure();
    constexpr bool forward = std::is_same_v<Op, FusedAttentionOp>;
    std::string name =
        onednn::freshKernelName(op, forward ? "attn_fused_attention" : "attn_fused_attention_grad");
    if constexpr (forward)
      linalg_lowering::defineAttentionKernel(rewriter, op, name,
                                             linalg_lowering::KernelForm::GpuLaunch);
    else
      linalg_lowering::defineAttentionGradKernel(rewriter, op, name,
                                                 linalg_lowering::KernelForm::GpuLaunch);
    return onednn::replaceWithKernelCall(op, rewriter, name);
  }
};

// The embedding's gradient, a scatter-add: d_table[ids[n], :] += dy[n, :] for each in-range
// id. Positions may share an id, so the kernel runs a thread per column d, which zeroes its
// column and adds the positions in order: the sums of attn-to-linalg's loop form, in its
// order, with no atomics. (Rows in parallel would race; a thread per (row, column) would read
// every position V times.)
struct EmbeddingGradToKernel : OpRewritePattern<EmbeddingGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingGradOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto ids = cast<RankedTensorType>(op.getIds().getType());
    auto table = cast<RankedTensorType>(op.getType());
    int64_t positions = ids.getNumElements(), vocab = table.getShape()[0],
            dim = table.getShape()[1];
    // ids [N], dy [N, D]: the positions collapsed into one dimension, or a single id's
    // (rank 0) expanded into one.
    Value flatIds, flatGrad;
    if (ids.getRank() == 0) {
      flatIds = rewriter.create<tensor::ExpandShapeOp>(
          loc, RankedTensorType::get({1}, ids.getElementType()), op.getIds(),
          ArrayRef<ReassociationIndices>{});
      flatGrad = rewriter.create<tensor::ExpandShapeOp>(
          loc, RankedTensorType::get({1, dim}, rewriter.getF32Type()), op.getGrad(),
          ArrayRef<ReassociationIndices>{{0, 1}});
    } else {
      ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, ids.getRank()));
      flatIds = rewriter.create<tensor::CollapseShapeOp>(loc, op.getIds(),
                                                         ArrayRef<ReassociationIndices>{all});
      flatGrad = rewriter.create<tensor::CollapseShapeOp>(
          loc, op.getGrad(), ArrayRef<ReassociationIndices>{all, {ids.getRank()}});
    }
    std::string name = onednn::freshKernelName(op, "attn_embedding_grad");
    defineKernel(rewriter, op, name, positions, vocab, dim);
    rewriter.replaceOp(op,
                       onednn::callKernel(rewriter, op, name, {flatIds, flatGrad}, {table}, {}));
    return success();
  }

  static void defineKernel(PatternRewriter &rewriter, Operation *op, StringRef name,
                           int64_t positions, int64_t vocab, int64_t dim) {
    MLIRContext *ctx = rewriter.getContext();
    Location loc = op->getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(module.getBody());
    Type types[] = {onednn::kernelMemrefType(ctx, 1, rewriter.getI32Type()),
                    onednn::kernelMemrefType(ctx, 2), onednn::kernelMemrefType(ctx, 2)};
    auto f = rewriter.create<func::FuncOp>(loc, name, rewriter.getFunctionType(types, {}));
    f.setPrivate();
    Block *entry = f.addEntryBlock();
    rewriter.setInsertionPointToStart(entry);
    Value ids = entry->getArgument(0), dy = entry->getArgument(1), out = entry->getArgument(2);
    auto index = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v); };
    Value zero = index(0), one = index(1), threads = index(kColumnsPerBlock);
    // At least one block: CUDA refuses an empty grid (the guard idles the extra threads).
    Value blocks = index(std::max<int64_t>(1, (dim + kColumnsPerBlock - 1) / kColumnsPerBlock));
    auto launch = rewriter.create<gpu::LaunchOp>(loc, blocks, one, one, threads, one, one);
    rewriter.setInsertionPointToStart(&launch.getBody().front());
    rewriter.setInsertionPoint(rewriter.create<gpu::TerminatorOp>(loc));
    Value d = rewriter.create<arith::AddIOp>(
        loc, rewriter.create<arith::MulIOp>(loc, launch.getBlockIds().x, threads),
        launch.getThreadIds().x);
    Value inside = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, d, index(dim));
    auto guardIf = rewriter.create<scf::IfOp>(loc, inside, /*withElseRegion=*/false);
    rewriter.setInsertionPoint(guardIf.thenBlock()->getTerminator());
    Value zeroF =
        rewriter.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), rewriter.getF32Type());
    rewriter.create<scf::ForOp>(loc, zero, index(vocab), one, ValueRange{},
                                [&](OpBuilder &b, Location l, Value v, ValueRange) {
                                  b.create<memref::StoreOp>(l, zeroF, out, ValueRange{v, d});
                                  b.create<scf::YieldOp>(l);
                                });
    rewriter.create<scf::ForOp>(
        loc, zero, index(positions), one, ValueRange{},
        [&](OpBuilder &b, Location l, Value n, ValueRange) {
          Value id = b.create<arith::IndexCastOp>(l, b.getIndexType(),
                                                  b.create<memref::LoadOp>(l, ids, ValueRange{n}));
          Value inRange = b.create<arith::AndIOp>(
              l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, id, zero),
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, id, index(vocab)));
          b.create<scf::IfOp>(l, inRange, [&](OpBuilder &tb, Location tl) {
            Value old = tb.create<memref::LoadOp>(tl, out, ValueRange{id, d});
            Value row = tb.create<memref::LoadOp>(tl, dy, ValueRange{n, d});
            Value sum = tb.create<arith::AddFOp>(tl, old, row);
            tb.create<memref::StoreOp>(tl, sum, out, ValueRange{id, d});
            tb.create<scf::YieldOp>(tl);
          });
          b.create<scf::YieldOp>(l);
        });
    rewriter.setInsertionPointToEnd(entry);
    rewriter.create<func::ReturnOp>(loc);
  }

  static constexpr int64_t kColumnsPerBlock = 64;
};

template <typename Op> struct ToCudaCall : OpRewritePattern<Op> {
  ToCudaCall(MLIRContext *ctx, StringRef kernel) : OpRewritePattern<Op>(ctx), kernel(kernel) {}
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    if (!whyNotOnGpu(op).empty())
      return failure();
    return onednn::replaceWithKernelCall(op, rewriter, kernel, {op.getCausal()}, {*flashScale(op)});
  }
  std::string kernel;
};

struct AttnToCUDA : mlir::attn::impl::AttnToCUDABase<AttnToCUDA> {
  using AttnToCUDABase::AttnToCUDABase;
  void runOnOperation() override {
    // The remarks first, once per op (the rewrite driver may try an op more than once).
    if (remarks)
      getOperation()->walk([](Operation *op) {
        std::string why;
        if (auto attention = dyn_cast<FusedAttentionOp>(op))
          why = whyNotOnGpu(attention);
        else if (auto grad = dyn_cast<FusedAttentionGradOp>(op))
          why = whyNotOnGpu(grad);
        if (!why.empty())
          op->emitRemark("a generated GPU kernel (a thread per row), not the flash kernels: ")
              << why;
      });
    RewritePatternSet patterns(&getContext());
    patterns.add<ToGeneratedKernel<FusedAttentionOp>, ToGeneratedKernel<FusedAttentionGradOp>,
                 EmbeddingGradToKernel>(&getContext());
    if (runtimeKernels)
      addRuntimeKernelCalls(patterns);
    // As attn-to-onednn: only the attn ops are rewritten, so that the to_memref / to_tensor
    // pairs around each call reach one-shot bufferization exactly as created.
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    // No match is not a failure: what stays is attn-to-onednn's.
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config);
  }

  void addRuntimeKernelCalls(RewritePatternSet &patterns) {
    const std::string prefix = ::attn::names::kCudaKernelPrefix;
    patterns.add<ToCudaCall<FusedAttentionOp>>(&getContext(), prefix + "flash_attention");
    patterns.add<ToCudaCall<FusedAttentionGradOp>>(&getContext(),
                                                   prefix + "flash_attention_backward");
    onednn::populateRecurrentPatterns(patterns, prefix + "rnn_forward", prefix + "rnn_backward");
    onednn::populateCorePatterns(patterns, prefix + "matmul", prefix + "dense");
  }
};

} // namespace
