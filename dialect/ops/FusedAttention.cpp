// attn.fused_attention and attn.fused_attention_grad (ops/Attention.td): operand and region
// checks, the gradient rule (the score's gradient derived by attn-autodiff from the region
// itself), FLOP counts; and the score-region contract of ScoreRegion.h.
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"
#include "dialect/FlopCount.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/IR/IRMapping.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===- the score-region contract ---------------------------------------------------------===//

namespace {
RankedTensorType f32TensorType(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getElementType().isF32() ? t : RankedTensorType();
}

std::string typesStr(TypeRange types) {
  std::string s;
  for (Type t : types)
    s += (s.empty() ? "" : ", ") + typeStr(t);
  return s;
}
} // namespace

bool score_region::isScalar(Type type) {
  auto t = f32TensorType(type);
  return t && (t.getRank() == 0 || (t.getRank() == 1 && t.getDimSize(0) == 1));
}

bool score_region::isScalarOrRow(Type type, int64_t width) {
  auto t = f32TensorType(type);
  return isScalar(type) || (t && t.getRank() == 1 && t.getDimSize(0) == width);
}

bool score_region::isPerHead(Type capture, Type arg, int64_t heads) {
  auto c = f32TensorType(capture), a = f32TensorType(arg);
  return c && a && c.getRank() == 1 && c.getDimSize(0) == heads && a.getRank() == 0 &&
         capture != arg;
}

bool score_region::isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, EqOp, NegOp, TanhOp, SigmoidOp, ReluOp, ExpOp,
             LogOp, SqrtOp, StepOp, ErfOp, GeluOp, StopGradientOp>(op);
}

LogicalResult score_region::verify(Operation *op, StringRef name, Block &block, int64_t width,
                                   TypeRange args, TypeRange yields) {
  auto fail = [&]() -> InFlightDiagnostic {
    return op->emitOpError("region '") << name << "' ";
  };
  if (TypeRange(block.getArgumentTypes()) != args)
    return fail() << "needs block arguments (" << typesStr(args) << "), got ("
                  << typesStr(block.getArgumentTypes()) << ")";
  if (block.empty() || !isa<YieldOp>(block.back()))
    return fail() << "must end with attn.yield";
  for (Operation &inner : block) {
    if (auto yield = dyn_cast<YieldOp>(inner)) {
      if (TypeRange(yield.getValues().getTypes()) != yields)
        return fail() << "must yield (" << typesStr(yields) << "), got ("
                      << typesStr(yield.getValues().getTypes()) << ")";
      continue;
    }
    bool known = isElementwise(&inner) ||
                 isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, BroadcastOp, ReshapeOp>(inner);
    if (auto c = dyn_cast<ConstantOp>(inner)) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      known = dense && (isScalar(c.getType()) || dense.isSplat());
    }
    if (!known)
      return fail() << "holds '" << inner.getName()
                    << "', which a score region cannot: it takes attn's elementwise ops, "
                       "reductions of a row, broadcasts, reshapes and scalar or splat constants";
    SmallVector<Type> types(inner.getOperandTypes());
    llvm::append_range(types, inner.getResultTypes());
    for (Type t : types)
      if (!isScalarOrRow(t, width))
        return fail() << "holds '" << inner.getName() << "' on " << typeStr(t)
                      << ", which is neither a scalar (tensor<f32>, tensor<1xf32>) nor a row "
                      << "tensor<" << width << "xf32>";
  }
  return success();
}

namespace {
// The value of a scalar or splat attn.constant.
std::optional<float> splatValue(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  if (!dense || !dense.isSplat() || !dense.getElementType().isF32())
    return std::nullopt;
  return dense.getSplatValue<float>();
}
} // namespace

std::optional<float> score_region::dotProductScale(Block &block) {
  if (block.getNumArguments() < 2 || block.empty())
    return std::nullopt;
  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield || yield.getValues().size() != 1)
    return std::nullopt;
  Value s = yield.getValues()[0];
  float scale = 1.0f;
  if (auto scaled = s.getDefiningOp<MulOp>()) {
    std::optional<float> c = splatValue(scaled.getRhs());
    s = scaled.getLhs();
    if (!c) {
      c = splatValue(scaled.getLhs());
      s = scaled.getRhs();
    }
    if (!c)
      return std::nullopt;
    scale = *c;
  }
  auto sum = s.getDefiningOp<ReduceSumOp>();
  auto product = sum ? sum.getInput().getDefiningOp<MulOp>() : MulOp();
  if (!product || !isScalar(sum.getType()))
    return std::nullopt;
  Value q = block.getArgument(0), k = block.getArgument(1);
  bool dot = (product.getLhs() == q && product.getRhs() == k) ||
             (product.getLhs() == k && product.getRhs() == q);
  return dot ? std::optional<float>(scale) : std::nullopt;
}

namespace {
bool isRowValue(Value v) { return !score_region::isScalar(v.getType()); }

// Whether `op` is attn.mul of the values a and b, in either order.
bool multiplies(Operation *op, Value a, Value b) {
  auto mul = dyn_cast_or_null<MulOp>(op);
  return mul &&
         ((mul.getLhs() == a && mul.getRhs() == b) || (mul.getLhs() == b && mul.getRhs() == a));
}

// The scalar a row of broadcasts and reshapes repeats, or null.
Value broadcastScalar(Value row) {
  while (Operation *op = row.getDefiningOp()) {
    if (!isa<BroadcastOp, ReshapeOp>(op))
      break;
    row = op->getOperand(0);
  }
  return isRowValue(row) ? Value() : row;
}

// The product q * k of `block`'s first two arguments (null if absent), checked to feed only
// reductions `sum` of it; `dots` gets them. False when q or k is read elsewhere or the product
// by anything else.
bool dotProducts(Block &block, Operation *&product, SmallVectorImpl<Operation *> &dots) {
  Value q = block.getArgument(0), k = block.getArgument(1);
  product = nullptr;
  for (Operation &op : block.without_terminator())
    if (multiplies(&op, q, k)) {
      if (product)
        return false;
      product = &op;
    }
  if (!product)
    return true;
  for (Operation *user : product->getResult(0).getUsers()) {
    if (!isa<ReduceSumOp>(user))
      return false;
    dots.push_back(user);
  }
  return true;
}
} // namespace

Operation *score_region::dotThenScalars(Block &block) {
  if (block.getNumArguments() < 4)
    return nullptr;
  for (BlockArgument capture : block.getArguments().drop_front(4))
    if (isRowValue(capture))
      return nullptr;
  Operation *product;
  SmallVector<Operation *> dots;
  if (!dotProducts(block, product, dots) || dots.size() != 1)
    return nullptr;
  // q and k feed the product alone, and no other op holds a row.
  Value q = block.getArgument(0), k = block.getArgument(1);
  for (Value arg : {q, k})
    for (Operation *user : arg.getUsers())
      if (user != product)
        return nullptr;
  for (Operation &op : block.without_terminator())
    if (&op != product && llvm::any_of(op.getResults(), isRowValue))
      return nullptr;
  return dots[0];
}

std::optional<Value> score_region::dotCotangent(Block &grad, Operation *&dot) {
  dot = nullptr;
  if (grad.getNumArguments() < 5)
    return std::nullopt;
  for (BlockArgument arg : grad.getArguments().drop_front(4))
    if (isRowValue(arg))
      return std::nullopt;
  auto yield = dyn_cast<YieldOp>(grad.getTerminator());
  if (!yield || yield.getValues().size() < 2)
    return std::nullopt;
  Value q = grad.getArgument(0), k = grad.getArgument(1);
  // d_query = X k and d_keys = X q, X broadcast to a row.
  auto factor = [](Value product, Value row) -> Value {
    auto mul = product.getDefiningOp<MulOp>();
    if (!mul)
      return Value();
    Value other = mul.getLhs() == row ? mul.getRhs() : mul.getRhs() == row ? mul.getLhs() : Value();
    return other ? broadcastScalar(other) : Value();
  };
  Value dq = yield.getValues()[0], dk = yield.getValues()[1];
  Value x = factor(dq, k);
  if (!x || factor(dk, q) != x)
    return std::nullopt;
  Operation *product;
  SmallVector<Operation *> dots;
  if (!dotProducts(grad, product, dots) || dots.size() > 1)
    return std::nullopt;
  dot = dots.empty() ? nullptr : dots[0];
  // No other row: the product, the two yielded ones, and X's broadcasts feeding them.
  Operation *dqOp = dq.getDefiningOp(), *dkOp = dk.getDefiningOp();
  for (Operation &op : grad.without_terminator()) {
    if (&op == product || &op == dqOp || &op == dkOp || !llvm::any_of(op.getResults(), isRowValue))
      continue;
    bool broadcastOfX = isa<BroadcastOp, ReshapeOp>(op) && broadcastScalar(op.getResult(0)) == x;
    bool feedsOnlyTheYields = llvm::all_of(op.getResult(0).getUsers(), [&](Operation *user) {
      return user == dqOp || user == dkOp || isa<BroadcastOp, ReshapeOp>(user);
    });
    if (!broadcastOfX || !feedsOnlyTheYields)
      return std::nullopt;
  }
  // q and k are read by the product and the yielded rows only.
  for (Value arg : {q, k})
    for (Operation *user : arg.getUsers())
      if (user != product && user != dqOp && user != dkOp)
        return std::nullopt;
  return x;
}

bool score_region::scalarsOnly(Block &block) {
  if (llvm::any_of(block.getArguments(), isRowValue))
    return false;
  for (Operation &op : block)
    if (llvm::any_of(op.getResults(), isRowValue))
      return false;
  return true;
}

namespace {
// Which of i - j, j - i and abs(i - j) (of the mask region's arguments i, j) `e` is: the
// window's sides it bounds (left for i - j, right for j - i, both for the absolute value).
std::optional<std::pair<bool, bool>> windowDistance(Value e, Value i, Value j) {
  auto difference = [&](Value v) -> std::optional<std::pair<bool, bool>> {
    auto sub = v.getDefiningOp<SubOp>();
    if (sub && sub.getLhs() == i && sub.getRhs() == j)
      return std::make_pair(true, false);
    if (sub && sub.getLhs() == j && sub.getRhs() == i)
      return std::make_pair(false, true);
    return std::nullopt;
  };
  if (auto d = difference(e))
    return d;
  // abs(d) = maximum(d, -d), the operands in either order
  auto max = e.getDefiningOp<MaximumOp>();
  if (!max)
    return std::nullopt;
  for (auto [a, b] : {std::pair(max.getLhs(), max.getRhs()), std::pair(max.getRhs(), max.getLhs())})
    if (auto neg = b.getDefiningOp<NegOp>(); neg && neg.getInput() == a && difference(a))
      return std::make_pair(true, true);
  return std::nullopt;
}
} // namespace

std::optional<score_region::Window> score_region::slidingWindow(Block &block) {
  if (block.getNumArguments() < 2 || block.empty())
    return std::nullopt;
  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield || yield.getValues().size() != 1)
    return std::nullopt;
  Value in = yield.getValues()[0], i = block.getArgument(0), j = block.getArgument(1);
  // e < c is step(c - e); e <= c is 1 - step(e - c). Distances are integers: e <= ceil(c) - 1
  // and e <= floor(c).
  Value e;
  std::optional<float> c;
  double bound = 0;
  if (auto step = in.getDefiningOp<StepOp>()) {
    auto sub = step.getInput().getDefiningOp<SubOp>();
    if (!sub || !(c = splatValue(sub.getLhs())))
      return std::nullopt;
    e = sub.getRhs();
    bound = std::ceil((double)*c) - 1;
  } else if (auto complement = in.getDefiningOp<SubOp>()) {
    auto step = complement.getRhs().getDefiningOp<StepOp>();
    auto sub = step ? step.getInput().getDefiningOp<SubOp>() : SubOp();
    if (splatValue(complement.getLhs()) != 1.0f || !sub || !(c = splatValue(sub.getRhs())))
      return std::nullopt;
    e = sub.getLhs();
    bound = std::floor((double)*c);
  } else {
    return std::nullopt;
  }
  std::optional<std::pair<bool, bool>> sides = windowDistance(e, i, j);
  if (!sides || !(bound >= 0) || bound > (double)(1LL << 40))
    return std::nullopt;
  Window w;
  if (sides->first)
    w.left = (int64_t)bound;
  if (sides->second)
    w.right = (int64_t)bound;
  return w;
}

//===- fused_attention ---------------------------------------------------------------------===//

namespace {
ArrayRef<int64_t> dims(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

// query [B, H, T, D], keys [B, H, S, D], values [B, H, S, Dv], key_mask [B, S], center
// [B, H, T], captures scalars, rows of D or one scalar per head [H]; the attributes'
// dependencies.
LogicalResult checkOperands(Operation *op, Value q, Value k, Value v, Value mask, Value center,
                            ValueRange captures, bool causal, std::optional<uint64_t> window,
                            bool gaussian) {
  bool ok = dims(q).size() == 4 && dims(k).size() == 4 && dims(v).size() == 4 &&
            dims(mask).size() == 2;
  if (ok) {
    ArrayRef<int64_t> qs = dims(q), ks = dims(k), vs = dims(v);
    ok = qs.take_front(2) == ks.take_front(2) && ks.take_front(3) == vs.take_front(3) &&
         qs[3] == ks[3] && dims(mask) == ArrayRef<int64_t>{ks[0], ks[2]} &&
         (!center || dims(center) == qs.take_front(3));
  }
  if (!ok)
    return op->emitOpError("needs query [B, H, T, D], keys [B, H, S, D], values [B, H, S, Dv], "
                           "key_mask [B, S] and optionally center [B, H, T]; got ")
           << typeStr(q.getType()) << ", " << typeStr(k.getType()) << ", "
           << typeStr(v.getType()) << ", " << typeStr(mask.getType())
           << (center ? ", " + typeStr(center.getType()) : std::string());
  int64_t width = dims(q)[3], heads = dims(q)[1];
  for (Value c : captures)
    if (!score_region::isScalarOrRow(c.getType(), width) &&
        !score_region::isScalarOrRow(c.getType(), heads))
      return op->emitOpError("captures must be scalars (tensor<f32>, tensor<1xf32>), rows "
                             "tensor<")
             << width << "xf32> or per-head scalars tensor<" << heads << "xf32>; got "
             << typeStr(c.getType());
  if (causal && dims(q)[2] > dims(k)[2])
    return op->emitOpError("with causal needs at most as many queries as keys; got ")
           << typeStr(q.getType()) << " and " << typeStr(k.getType());
  if (window.has_value() != (bool)center)
    return op->emitOpError("needs a center exactly when it has a window");
  if (gaussian && (!window || *window == 0))
    return op->emitOpError("with gaussian needs a window of at least 1 (sigma = window / 2)");
  return success();
}

// The types the regions read the captures as: each capture's own, or for a capture of one
// scalar per head [H], tensor<f32> where the score region's argument says so (`score`'s
// arguments 4...: each head reads its own element).
SmallVector<Type> captureArgTypes(Value query, ValueRange captures, Block &score) {
  SmallVector<Type> types;
  for (auto [n, c] : llvm::enumerate(captures)) {
    Type arg = 4 + n < score.getNumArguments() ? score.getArgument(4 + n).getType() : Type();
    types.push_back(arg && score_region::isPerHead(c.getType(), arg, dims(query)[1]) ? arg
                                                                                     : c.getType());
  }
  return types;
}

// (query row, key row, i, j, captures...): the score region's block argument types.
SmallVector<Type> scoreArgTypes(Value query, ArrayRef<Type> captures) {
  MLIRContext *ctx = query.getContext();
  auto f32 = Float32Type::get(ctx);
  auto row = RankedTensorType::get({dims(query)[3]}, f32);
  auto scalar = RankedTensorType::get({}, f32);
  SmallVector<Type> types = {row, row, scalar, scalar};
  llvm::append_range(types, captures);
  return types;
}

// The mask region's block arguments: i, j (tensor<f32>) and the captures.
SmallVector<Type> maskArgTypes(Value query, ArrayRef<Type> captures) {
  SmallVector<Type> types(2, RankedTensorType::get({}, Float32Type::get(query.getContext())));
  llvm::append_range(types, captures);
  return types;
}

// Checks the optional mask region of `op`: (i, j, captures...) -> tensor<f32>.
LogicalResult verifyMask(Operation *op, Region &mask, Value query, ArrayRef<Type> captures) {
  if (mask.empty())
    return success();
  auto scalar = RankedTensorType::get({}, Float32Type::get(op->getContext()));
  return score_region::verify(op, "mask", mask.front(), dims(query)[3],
                              maskArgTypes(query, captures), {scalar});
}

// The scores (a D-long dot per pair, whatever the region computes) and the weighted sum.
double attentionFlops(Value q, Value k, Value v) {
  ArrayRef<int64_t> qs = dims(q);
  return multiplyAddFlops({qs[0], qs[1], qs[2], dims(k)[2]}) * (double)(qs[3] + dims(v)[3]);
}

bool isZeroConstant(Value v) {
  std::optional<float> c = splatValue(v);
  return c && *c == 0.0f;
}

// Fills the empty `target` with the gradient of the score region `score`: its arguments plus
// ds, its ops cloned and differentiated by attn-autodiff's buildBackward, yielding the
// gradients of the query row, the key row and each capture (zeros where none flows).
LogicalResult deriveScoreGradient(Block &score, Region &target, Location loc) {
  OpBuilder b(score.getParentOp()->getContext());
  Block *block = b.createBlock(&target);
  IRMapping map;
  for (BlockArgument a : score.getArguments())
    map.map(a, block->addArgument(a.getType(), a.getLoc()));
  Value ds = block->addArgument(RankedTensorType::get({}, b.getF32Type()), loc);
  SmallVector<Operation *> ops;
  for (Operation &inner : score.without_terminator())
    ops.push_back(b.clone(inner, map));
  Value s = map.lookupOrDefault(cast<YieldOp>(score.getTerminator()).getValues()[0]);
  SmallVector<Value> wrt = {block->getArgument(0), block->getArgument(1)};
  llvm::append_range(wrt, block->getArguments().slice(4, score.getNumArguments() - 4));
  FailureOr<SmallVector<Value>> grads = buildBackward(b, ops, {{s, ds}}, wrt);
  if (failed(grads))
    return failure();
  SmallVector<Value> yields;
  for (auto [v, g] : llvm::zip(wrt, *grads))
    yields.push_back(g ? g : zerosOf(b, loc, v.getType()));
  b.create<YieldOp>(loc, yields);
  // The forward values no gradient reads (the score itself, often) need not be recomputed.
  SmallVector<Operation *> cloned;
  for (Operation &op : block->without_terminator())
    cloned.push_back(&op);
  for (Operation *op : llvm::reverse(cloned))
    if (op->use_empty())
      op->erase();
  return success();
}
} // namespace

SmallVector<Type> FusedAttentionOp::resultTypes(Value query, Value keys, Value values,
                                                bool withWeights) {
  ArrayRef<int64_t> q = dims(query);
  auto f32 = Float32Type::get(query.getContext());
  SmallVector<Type> types = {RankedTensorType::get({q[0], q[1], q[2], dims(values)[3]}, f32),
                             RankedTensorType::get({q[0], q[1], q[2]}, f32)};
  if (withWeights)
    types.push_back(RankedTensorType::get({q[0], q[1], q[2], dims(keys)[2]}, f32));
  return types;
}

LogicalResult FusedAttentionOp::verify() {
  if (failed(checkOperands(*this, getQuery(), getKeys(), getValues(), getKeyMask(), getCenter(),
                           getCaptures(), getCausal(), getWindow(), getGaussian())))
    return failure();
  SmallVector<Type> expected = resultTypes(getQuery(), getKeys(), getValues(), getWithWeights());
  if (TypeRange(getResultTypes()) != TypeRange(expected))
    return emitOpError("results must be (") << typesStr(expected) << "), got ("
                                           << typesStr(getResultTypes()) << ")";
  return success();
}

LogicalResult FusedAttentionOp::verifyRegions() {
  auto scalar = RankedTensorType::get({}, Float32Type::get(getContext()));
  SmallVector<Type> captures = captureArgTypes(getQuery(), getCaptures(), getScoreBlock());
  if (failed(score_region::verify(*this, "score", getScoreBlock(), dims(getQuery())[3],
                                  scoreArgTypes(getQuery(), captures), {scalar})))
    return failure();
  return verifyMask(*this, getMask(), getQuery(), captures);
}

LogicalResult FusedAttentionOp::buildGradient(OpBuilder &b, ValueRange grads,
                                              SmallVectorImpl<Value> &out) {
  Location l = getLoc();
  Value dOutput = grads[0] ? grads[0] : zerosOf(b, l, getOutput().getType());
  Value dLse = grads[1] ? grads[1] : zerosOf(b, l, getLse().getType());
  // Weights that only a plot reads bring no gradient: the backward then skips their term.
  Value weights, dWeights;
  if (getWithWeights() && grads[2] && !isZeroConstant(grads[2])) {
    weights = getWeights()[0];
    dWeights = grads[2];
  }
  SmallVector<Type> rest;
  if (getCenter())
    rest.push_back(getCenter().getType());
  llvm::append_range(rest, getCaptures().getTypes());
  auto grad = b.create<FusedAttentionGradOp>(
      l, getQuery().getType(), getKeys().getType(), getValues().getType(), rest, getQuery(),
      getKeys(), getValues(), getKeyMask(), getOutput(), getLse(), dOutput, dLse, getCenter(),
      weights, dWeights, getCaptures(), getCausalAttr(), getWindowAttr(), getGaussianAttr(),
      getPrecisionAttr()); // a bf16 forward's backward is bf16 too
  IRMapping map;
  getScore().cloneInto(&grad.getScore(), map);
  getMask().cloneInto(&grad.getMask(), map);
  if (failed(deriveScoreGradient(getScoreBlock(), grad.getScoreGrad(), l)))
    return failure();
  out.push_back(grad.getDQuery());
  out.push_back(grad.getDKeys());
  out.push_back(grad.getDValues());
  out.push_back(Value()); // the key mask
  ValueRange dRest = grad.getDRest();
  if (getCenter()) {
    out.push_back(dRest.front());
    dRest = dRest.drop_front();
  }
  llvm::append_range(out, dRest);
  return success();
}

// bf16: the flash kernels' tiles (a plain dot-product score, or its _regions form: a dot
// product then scalar code, as attn-to-onednn calls them; no weights); every other form is a
// generated loop nest, f32 only.
// No int8 form: int8 is for products with a weight, and attention multiplies activations.
bool FusedAttentionOp::supportsPrecision(Precision precision) {
  return precision == Precision::f32 ||
         (precision == Precision::bf16 && (flashScale(*this) || regionsOnTiles(*this)) &&
          !getWithWeights());
}
bool FusedAttentionGradOp::supportsPrecision(Precision precision) {
  Operation *gradDot;
  bool regions = regionsOnTiles(*this) &&
                 score_region::dotCotangent(getScoreGrad().front(), gradDot).has_value();
  return precision == Precision::f32 ||
         (precision == Precision::bf16 && (flashScale(*this) || regions) && !getWeights());
}

// The bf16 tiles pay from 128 queries and 128 keys; below, the per-product overhead and the
// rounding of the tiles outweigh the faster products (measured, one thread: 64 x 64 tiles
// 0.96x of f32, one query against 64 keys 0.44x, 512 x 512 1.37x forward and 1.43x backward).
bool FusedAttentionOp::fillsBf16Tiles(Value query, Value keys) {
  auto q = cast<RankedTensorType>(query.getType()), k = cast<RankedTensorType>(keys.getType());
  return q.getShape()[2] >= 128 && k.getShape()[2] >= 128;
}
bool FusedAttentionOp::gainsFrom(Precision precision) {
  return precision == Precision::f32 || fillsBf16Tiles(getQuery(), getKeys());
}
bool FusedAttentionGradOp::gainsFrom(Precision precision) {
  return precision == Precision::f32 || FusedAttentionOp::fillsBf16Tiles(getQuery(), getKeys());
}

double FusedAttentionOp::getFlops() {
  return attentionFlops(getQuery(), getKeys(), getValues());
}

//===- fused_attention_grad ----------------------------------------------------------------===//

LogicalResult FusedAttentionGradOp::verify() {
  if (failed(checkOperands(*this, getQuery(), getKeys(), getValues(), getKeyMask(), getCenter(),
                           getCaptures(), getCausal(), getWindow(), getGaussian())))
    return failure();
  SmallVector<Type> forward =
      FusedAttentionOp::resultTypes(getQuery(), getKeys(), getValues(), /*withWeights=*/true);
  auto check = [&](Value v, Type t, StringRef what) -> LogicalResult {
    if (v && v.getType() != t)
      return emitOpError("needs ") << what << " of type " << typeStr(t) << ", got "
                                   << typeStr(v.getType());
    return success();
  };
  if (failed(check(getOutput(), forward[0], "output")) ||
      failed(check(getDOutput(), forward[0], "d_output")) ||
      failed(check(getLse(), forward[1], "lse")) || failed(check(getDLse(), forward[1], "d_lse")) ||
      failed(check(getWeights(), forward[2], "weights")) ||
      failed(check(getDWeights(), forward[2], "d_weights")))
    return failure();
  if ((bool)getWeights() != (bool)getDWeights())
    return emitOpError("needs weights and d_weights together");
  SmallVector<Type> expected = {getQuery().getType(), getKeys().getType(), getValues().getType()};
  if (getCenter())
    expected.push_back(getCenter().getType());
  llvm::append_range(expected, getCaptures().getTypes());
  if (TypeRange(getResultTypes()) != TypeRange(expected))
    return emitOpError("results must be (") << typesStr(expected) << "), got ("
                                           << typesStr(getResultTypes()) << ")";
  return success();
}

LogicalResult FusedAttentionGradOp::verifyRegions() {
  int64_t width = dims(getQuery())[3];
  // Per-head captures' gradients are yielded per head, as the score reads them.
  SmallVector<Type> captures = captureArgTypes(getQuery(), getCaptures(), getScore().front());
  SmallVector<Type> args = scoreArgTypes(getQuery(), captures);
  auto scalar = RankedTensorType::get({}, Float32Type::get(getContext()));
  if (failed(score_region::verify(*this, "score", getScore().front(), width, args, {scalar})))
    return failure();
  SmallVector<Type> gradArgs = args;
  gradArgs.push_back(scalar);
  SmallVector<Type> gradYields = {args[0], args[1]};
  llvm::append_range(gradYields, captures);
  if (failed(score_region::verify(*this, "score_grad", getScoreGrad().front(), width, gradArgs,
                                  gradYields)))
    return failure();
  return verifyMask(*this, getMask(), getQuery(), captures);
}

// The scores again, d_values, the weights' gradient and the score's row gradients.
double FusedAttentionGradOp::getFlops() {
  ArrayRef<int64_t> qs = dims(getQuery());
  return multiplyAddFlops({qs[0], qs[1], qs[2], dims(getKeys())[2]}) *
         (3.0 * (double)qs[3] + 2.0 * (double)dims(getValues())[3]);
}
