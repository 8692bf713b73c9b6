// attn-to-onednn, recurrent family: the sequence ops (rnn, gru, lstm) and their backward ops
// become calls of the runtime's oneDNN RNN kernels (runtime/cpu/recurrent.cpp):
//
//   attn_rt_rnn_forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask,
//                       outputs, h_n, c_n, kind, reverse, training, peephole, projection, masked)
//   attn_rt_rnn_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_peephole, w_proj, mask,
//                        outputs, h_n, c_n, d_outputs, d_h_n, d_c_n,
//                        d_x, d_h0, d_c0, d_w_ih, d_w_hh, d_b_ih, d_b_hh, d_w_peephole, d_w_proj,
//                        kind, reverse, peephole, projection, masked)
//
// One signature serves the three cells, masked or not: where an op lacks an operand (c0 and
// c_n outside an LSTM, b_hh outside a GRU, peepholes or a projection outside an LSTM that
// has them, the mask of an unmasked layer) another operand of the same rank stands in, and
// the kernel neither reads nor writes it.
#include "compiler/Conversion/AttnToOneDNN/KernelCalls.h"
#include "compiler/Conversion/AttnToOneDNN/Patterns.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/AttnOps.h"

#include "attn/kernels.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::onednn;

namespace {
// The kinds the kernels take (attn/kernels.h).
template <typename Op> constexpr int64_t kindOf();
template <> constexpr int64_t kindOf<RnnOp>() { return ATTN_RNN_VANILLA; }
template <> constexpr int64_t kindOf<GruOp>() { return ATTN_RNN_GRU; }
template <> constexpr int64_t kindOf<LstmOp>() { return ATTN_RNN_LSTM; }
template <> constexpr int64_t kindOf<RnnGradOp>() { return ATTN_RNN_VANILLA; }
template <> constexpr int64_t kindOf<GruGradOp>() { return ATTN_RNN_GRU; }
template <> constexpr int64_t kindOf<LstmGradOp>() { return ATTN_RNN_LSTM; }

// The forward operands in the kernels' order: x, h0, c0, w_ih, w_hh, b_ih, b_hh.
SmallVector<Value> forwardOperands(ValueRange ops, int64_t kind) {
  if (kind == ATTN_RNN_LSTM) // x, h0, c0, w_ih, w_hh, bias
    return {ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[5]};
  if (kind == ATTN_RNN_GRU) // x, h0, w_ih, w_hh, b_ih, b_hh
    return {ops[0], ops[1], ops[1], ops[2], ops[3], ops[4], ops[5]};
  return {ops[0], ops[1], ops[1], ops[2], ops[3], ops[4], ops[4]}; // x, h0, w_ax, w_aa, b
}

// Forward results in the kernels' order (outputs, h_n, c_n) from the op's.
SmallVector<Value> stateTriple(ValueRange v, int64_t kind) {
  if (kind == ATTN_RNN_LSTM)
    return {v[0], v[1], v[2]};
  return {v[0], v[1], v[1]};
}

// An LSTM's peephole weights, or null.
Value peepholeOf(Operation *op) {
  if (auto lstm = dyn_cast<LstmOp>(op))
    return lstm.getWPeephole();
  if (auto grad = dyn_cast<LstmGradOp>(op))
    return grad.getWPeephole();
  return {};
}

// An LSTM's projection, or null.
Value projectionOf(Operation *op) {
  if (auto lstm = dyn_cast<LstmOp>(op))
    return lstm.getWProj();
  if (auto grad = dyn_cast<LstmGradOp>(op))
    return grad.getWProj();
  return {};
}

Value i64(PatternRewriter &rewriter, Location loc, int64_t v) {
  return rewriter.create<arith::ConstantIntOp>(loc, v, 64);
}

// A fresh output buffer for each result of `op`, and their kernel views; after the call,
// `replace` hands the buffers back to `op`'s users as tensors.
struct KernelResults {
  SmallVector<Value> buffers, views;
  KernelResults(PatternRewriter &rewriter, Operation *op) {
    for (Value r : op->getResults()) {
      auto [buffer, view] = allocKernelResult(rewriter, op->getLoc(),
                                              cast<RankedTensorType>(r.getType()).getShape());
      buffers.push_back(buffer);
      views.push_back(view);
    }
  }
  void replace(PatternRewriter &rewriter, Operation *op) {
    SmallVector<Value> tensors;
    for (Value buffer : buffers)
      tensors.push_back(asTensor(rewriter, op->getLoc(), buffer));
    rewriter.replaceOp(op, tensors);
  }
};

// What a pattern calls, and which ops it leaves (attn-to-cuda's subset). The CPU's kernels
// have a bf16 form (`_bf16`) for an op computing in bf16; the GPU's loop computes in f32
// whatever the op's precision, as its flash attention does.
struct Target {
  std::string forward, backward;
  bool hasBf16 = false;
  std::string kernel(const std::string &name, Operation *op) const {
    return hasBf16 ? precisionKernel(name, cast<PrecisionOpInterface>(op)) : name;
  }
};

template <typename Op> struct SequenceToKernel : OpRewritePattern<Op> {
  SequenceToKernel(MLIRContext *ctx, Target target)
      : OpRewritePattern<Op>(ctx), target(std::move(target)) {}
  Target target;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    constexpr int64_t kind = kindOf<Op>();
    Location loc = op.getLoc();
    auto kernel = declareKernel(rewriter, op, target.kernel(target.forward, op),
                                {3, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 2, 2}, 6);
    SmallVector<Value> args;
    SmallVector<Value> operands = forwardOperands(op->getOperands(), kind);
    Value peephole = peepholeOf(op), projection = projectionOf(op), mask = op.getMask();
    operands.push_back(peephole ? peephole : operands[4]);
    operands.push_back(projection ? projection : operands[4]);
    operands.push_back(mask ? mask : operands[0]);
    for (Value v : operands)
      args.push_back(asKernelOperand(rewriter, loc, v));
    KernelResults results(rewriter, op);
    SmallVector<Value> views = results.views;
    args.append(stateTriple(views, kind));
    args.push_back(i64(rewriter, loc, kind));
    args.push_back(i64(rewriter, loc, op.getReverse()));
    args.push_back(i64(rewriter, loc, op.getTraining()));
    args.push_back(i64(rewriter, loc, peephole != nullptr));
    args.push_back(i64(rewriter, loc, projection != nullptr));
    args.push_back(i64(rewriter, loc, mask != nullptr));
    rewriter.create<func::CallOp>(loc, kernel, args);
    results.replace(rewriter, op);
    return success();
  }
};

template <typename Op> struct SequenceGradToKernel : OpRewritePattern<Op> {
  SequenceGradToKernel(MLIRContext *ctx, Target target)
      : OpRewritePattern<Op>(ctx), target(std::move(target)) {}
  Target target;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    constexpr int64_t kind = kindOf<Op>();
    Location loc = op.getLoc();
    auto kernel = declareKernel(
        rewriter, op, target.kernel(target.backward, op),
        {3, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 2, 2, 3, 2, 2, 3, 2, 2, 2, 2, 1, 1, 2, 2}, 5);
    Value peephole = peepholeOf(op), projection = projectionOf(op), mask = op.getMask();
    // The fixed forward operands; the results then add d_w_peephole and d_w_proj if present.
    unsigned numForward = op->getNumResults() - (peephole ? 1 : 0) - (projection ? 1 : 0);
    unsigned numStates = kind == ATTN_RNN_LSTM ? 3 : 2;
    ValueRange operands = op->getOperands();
    SmallVector<Value> args;
    SmallVector<Value> inputs = forwardOperands(operands.take_front(numForward), kind);
    inputs.push_back(peephole ? peephole : inputs[4]);
    inputs.push_back(projection ? projection : inputs[4]);
    inputs.push_back(mask ? mask : inputs[0]);
    for (Value v : inputs)
      args.push_back(asKernelOperand(rewriter, loc, v));
    for (Value v : stateTriple(operands.slice(numForward, numStates), kind))
      args.push_back(asKernelOperand(rewriter, loc, v));
    for (Value v : stateTriple(operands.slice(numForward + numStates, numStates), kind))
      args.push_back(asKernelOperand(rewriter, loc, v));
    KernelResults results(rewriter, op);
    SmallVector<Value> views = results.views;
    SmallVector<Value> outs = forwardOperands(views, kind);
    args.append(outs);
    // d_w_peephole and d_w_proj, or d_w_hh standing in, unwritten.
    unsigned extra = numForward;
    args.push_back(peephole ? views[extra++] : outs[4]);
    args.push_back(projection ? views[extra++] : outs[4]);
    args.push_back(i64(rewriter, loc, kind));
    args.push_back(i64(rewriter, loc, op.getReverse()));
    args.push_back(i64(rewriter, loc, peephole != nullptr));
    args.push_back(i64(rewriter, loc, projection != nullptr));
    args.push_back(i64(rewriter, loc, mask != nullptr));
    rewriter.create<func::CallOp>(loc, kernel, args);
    results.replace(rewriter, op);
    return success();
  }
};
} // namespace

void mlir::attn::onednn::populateRecurrentPatterns(RewritePatternSet &patterns) {
  Target cpu{"attn_rt_rnn_forward", "attn_rt_rnn_backward", /*hasBf16=*/true};
  patterns.add<SequenceToKernel<RnnOp>, SequenceToKernel<GruOp>, SequenceToKernel<LstmOp>,
               SequenceGradToKernel<RnnGradOp>, SequenceGradToKernel<GruGradOp>,
               SequenceGradToKernel<LstmGradOp>>(patterns.getContext(), cpu);
}

void mlir::attn::onednn::populateRecurrentPatterns(RewritePatternSet &patterns, StringRef forward,
                                                   StringRef backward) {
  Target target{forward.str(), backward.str()};
  patterns.add<SequenceToKernel<RnnOp>, SequenceToKernel<GruOp>, SequenceToKernel<LstmOp>,
               SequenceGradToKernel<RnnGradOp>, SequenceGradToKernel<GruGradOp>,
               SequenceGradToKernel<LstmGradOp>>(patterns.getContext(), target);
}
