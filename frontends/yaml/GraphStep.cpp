// Whether a graph's decoding network (a language model's, an encoder-decoder's) can run one
// position at a time (GraphStep.h): the axis of the positions followed through every op.
#include "frontends/yaml/GraphStep.h"

#include "dialect/AttnOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace attn::yaml::graph {

using namespace mlir;
using namespace mlir::attn;

namespace {

ArrayRef<int64_t> dims(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

// Follows the positions' axis from the tokens to the output. A value with an axis holds one
// slice per position along it, computed from that position's inputs only (or, through a
// causal attention, from earlier ones); a value without one (a parameter, a constant, what
// only they compute) is the same at every position.
class Positions {
public:
  Positions(Value tokens, Value mask, StepPlan &plan) : mask(mask), plan(plan) { axis[tokens] = 1; }

  // Why `op` breaks the rule, or "" when its results follow it (their axes recorded).
  std::string visit(Operation *op) {
    if (isa<ParamOp, ConstantOp>(op))
      return "";
    if (isa<NegOp, TanhOp, SigmoidOp, ReluOp, ExpOp, LogOp, SqrtOp, StepOp, ErfOp, GeluOp,
            StopGradientOp>(op))
      return same(op, op->getOperand(0));
    if (isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, EqOp>(op))
      return broadcast(op);
    if (auto dense = dyn_cast<DenseOp>(op))
      return rowWise(op, dense.getInput(), {dense.getWeight(), dense.getBias()});
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      if (matmul.getTransposeLhs())
        return "it contracts its left-hand side's rows";
      return rowWise(op, matmul.getLhs(), {matmul.getRhs()});
    }
    if (auto norm = dyn_cast<LayerNormOp>(op))
      return rowWise(op, norm.getInput(), {norm.getGamma(), norm.getBeta()});
    if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      std::optional<int64_t> a = axisOf(softmax.getInput());
      if (a && *a == softmax.getPositiveAxis())
        return "it normalises over the positions";
      return same(op, softmax.getInput());
    }
    if (auto embedding = dyn_cast<EmbeddingOp>(op))
      return rowWise(op, embedding.getIds(), {embedding.getTable()});
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return reshaped(reshape);
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      if (std::optional<int64_t> a = axisOf(transpose.getInput())) {
        ArrayRef<int64_t> perm = transpose.getPerm();
        axis[op->getResult(0)] = std::find(perm.begin(), perm.end(), *a) - perm.begin();
      }
      return "";
    }
    if (auto attention = dyn_cast<FusedAttentionOp>(op))
      return attend(attention);
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
      return reduced(op, op->getOperand(0), op->getAttrOfType<DenseI64ArrayAttr>("axes"),
                     op->getAttrOfType<BoolAttr>("keepdims").getValue());
    if (llvm::none_of(op->getOperands(), [&](Value v) { return axisOf(v).has_value(); }))
      return ""; // computes from parameters and constants only
    return "attnc cannot tell which positions it reads";
  }

  std::optional<int64_t> axisOf(Value v) const {
    auto it = axis.find(v);
    return it == axis.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

private:
  std::string same(Operation *op, Value from) {
    if (std::optional<int64_t> a = axisOf(from))
      axis[op->getResult(0)] = *a;
    return "";
  }

  // NumPy broadcasting aligns the trailing dimensions: an operand with the axis must put it
  // where the others do, and one without must not vary along it (a table of positions).
  std::string broadcast(Operation *op) {
    int64_t rank = dims(op->getResult(0)).size();
    std::optional<int64_t> at;
    for (Value v : op->getOperands())
      if (std::optional<int64_t> a = axisOf(v)) {
        int64_t mapped = *a + rank - (int64_t)dims(v).size();
        if (at && *at != mapped)
          return "its operands hold the positions on different axes";
        at = mapped;
      }
    if (!at)
      return "";
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      int64_t k = *at - (rank - (int64_t)dims(v).size());
      if (axisOf(v) || k < 0 || dims(v)[k] == 1)
        continue;
      // A table of positions [L, ...] beside values [B, L, ...]: a step reads its row.
      auto param = v.getDefiningOp<ParamOp>();
      if (!param || k != 0 || *at != 1 || (int64_t)dims(v).size() + 1 != rank)
        return "it reads a value that differs from position to position other than as a table "
               "of positions [length, ...] beside values [batch, length, ...]";
      tableUses.insert(&use);
      plan.tables.insert(param.getName().str());
    }
    axis[op->getResult(0)] = *at;
    return "";
  }

public:
  // A table of positions must be read as one everywhere: its row is all a step has of it.
  std::optional<std::pair<Location, std::string>> tablesReadAsTables() const {
    for (OpOperand *use : tableUses)
      for (OpOperand &other : use->get().getUses())
        if (!tableUses.count(&other))
          return std::make_pair(other.getOwner()->getLoc(),
                                "parameter '" +
                                    use->get().getDefiningOp<ParamOp>().getName().str() +
                                    "' is a table of positions elsewhere, and read otherwise here");
    return std::nullopt;
  }

private:
  // An op on the rows of `input` (its last dimension), with operands the same for each row.
  std::string rowWise(Operation *op, Value input, ArrayRef<Value> fixed) {
    for (Value v : fixed)
      if (v && axisOf(v))
        return "its weights depend on the positions";
    std::optional<int64_t> a = axisOf(input);
    if (!a)
      return "";
    if (!isa<EmbeddingOp>(op) && *a == (int64_t)dims(input).size() - 1)
      return "it combines the positions (they are its rows' last dimension)";
    axis[op->getResult(0)] = *a;
    return "";
  }

  // The axis keeps its place when the sizes before it, and its own, are kept.
  std::string reshaped(ReshapeOp reshape) {
    std::optional<int64_t> a = axisOf(reshape.getInput());
    if (!a)
      return "";
    ArrayRef<int64_t> in = dims(reshape.getInput()), out = dims(reshape.getResult());
    int64_t before = 1, outBefore = 1;
    for (int64_t k = 0; k < *a; ++k)
      before *= in[k];
    for (int64_t k = 0; k < (int64_t)out.size(); outBefore *= out[k], ++k)
      if (outBefore == before && out[k] == in[*a]) {
        axis[reshape.getResult()] = k;
        return "";
      }
    return "it merges or splits the positions' axis";
  }

  // The axis moves down by the reduced axes before it (unless they are kept).
  std::string reduced(Operation *op, Value input, DenseI64ArrayAttr axes, bool keepdims) {
    std::optional<int64_t> a = axisOf(input);
    if (!a)
      return "";
    int64_t before = 0;
    for (int64_t r : axes.asArrayRef()) {
      if (r == *a)
        return "it reduces over the positions";
      before += r < *a;
    }
    axis[op->getResult(0)] = keepdims ? *a : *a - before;
    return "";
  }

  // A causal self-attention over the task's key mask: each position reads the keys and values
  // of positions up to its own, which a step keeps (its cache). Or an attention over keys and
  // values that do not depend on the positions (an encoder's), which a step reads whole.
  std::string attend(FusedAttentionOp attention) {
    for (Value v : attention.getCaptures())
      if (axisOf(v))
        return "its captures depend on the positions";
    std::optional<int64_t> q = axisOf(attention.getQuery()), k = axisOf(attention.getKeys()),
                           v = axisOf(attention.getValues());
    bool self = k || v || axisOf(attention.getKeyMask());
    plan.cached.push_back(q && self);
    if (!q && !self)
      return ""; // the encoder's own
    if (!q || *q != 2 || (self && (!k || !v || *k != 2 || *v != 2)))
      return "its queries (and a self-attention's keys and values) must hold the positions on "
             "axis 2 ([batch, heads, length, width])";
    if (attention.getCenter() || attention.getWindow())
      return "a local (Luong) window has no cached form";
    if (self) {
      if (!attention.getCausal())
        return "it is not causal: each position reads later ones, which a step has not seen";
      if (attention.getKeyMask() != mask)
        return "its key mask is not the task's target mask";
    } else if (attention.getCausal()) {
      return "it is causal over keys that are not the positions'";
    }
    axis[attention.getOutput()] = 2;
    axis[attention.getLse()] = 2;
    return "";
  }

  Value mask;
  StepPlan &plan;
  llvm::DenseMap<Value, int64_t> axis;
  llvm::SmallPtrSet<OpOperand *, 8> tableUses;
};

} // namespace

std::optional<std::pair<Location, std::string>>
whyNotPositionWise(func::FuncOp f, Value tokens, Value mask, Value output, StepPlan &plan) {
  Positions positions(tokens, mask, plan);
  for (Operation &op : f.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      break;
    std::string why = positions.visit(&op);
    if (!why.empty())
      return std::make_pair(op.getLoc(), "'" + op.getName().getStringRef().str() + "': " + why);
    if (&op == output.getDefiningOp())
      break; // (what the entry adds after the network is its own: log_softmax)
  }
  if (auto why = positions.tablesReadAsTables())
    return why;
  if (positions.axisOf(output) != std::optional<int64_t>(1))
    return std::make_pair(output.getLoc(),
                          std::string("the output does not hold the positions on axis 1"));
  return std::nullopt;
}

} // namespace attn::yaml::graph
