// Shape rules and verifiers of the core ops (ops/Core.td).
#include "dialect/AttnOps.h"
#include "dialect/FlopCount.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}
} // namespace

//===----------------------------------------------------------------------------------===//
// param, constant
//===----------------------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (!getType().hasStaticShape())
    return emitOpError("needs a static shape, got ") << getType();
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  return success();
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                           ValueRange, DictionaryAttr attributes,
                                           OpaqueProperties properties, RegionRange regions,
                                           SmallVectorImpl<Type> &results) {
  Adaptor adaptor({}, attributes, properties, regions);
  if (!adaptor.getValueAttr())
    return failure();
  results.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------------------===//
// matmul, dense
//===----------------------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr attributes,
                                         OpaqueProperties properties, RegionRange regions,
                                         SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto lhs = tensorOf(adaptor.getLhs()), rhs = tensorOf(adaptor.getRhs());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "'attn.matmul' needs operands of rank >= 2, got ",
                             typeStr(lhs), " and ", typeStr(rhs));
  auto ls = lhs.getShape(), rs = rhs.getShape();
  int64_t lr = ls.size(), rr = rs.size();
  // Default-valued attributes may be absent while the op is being parsed.
  bool tl = adaptor.getTransposeLhsAttr() && adaptor.getTransposeLhs();
  bool tr = adaptor.getTransposeRhsAttr() && adaptor.getTransposeRhs();
  int64_t m = tl ? ls[lr - 1] : ls[lr - 2];
  int64_t kl = tl ? ls[lr - 2] : ls[lr - 1];
  int64_t kr = tr ? rs[rr - 1] : rs[rr - 2];
  int64_t n = tr ? rs[rr - 2] : rs[rr - 1];
  if (kl != kr)
    return emitOptionalError(loc, "'attn.matmul' contracts K=", kl, " of ", typeStr(lhs),
                             " with K=", kr, " of ", typeStr(rhs),
                             tl || tr
                                 ? " (after transposes)"
                                 : "");
  auto lb = ls.drop_back(2), rb = rs.drop_back(2);
  if (!lb.empty() && !rb.empty() && lb != rb)
    return emitOptionalError(loc, "'attn.matmul' batch dimensions differ: ", typeStr(lhs),
                             " vs ", typeStr(rhs),
                             " (they must be equal, or one operand must be rank 2)");
  SmallVector<int64_t> shape(lb.empty() ? rb : lb);
  shape.append({m, n});
  // f32 also from bf16 factors: the kernels sum in f32.
  results.push_back(RankedTensorType::get(shape, Float32Type::get(lhs.getContext())));
  return success();
}

LogicalResult DenseOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        ValueRange operands, DictionaryAttr attributes,
                                        OpaqueProperties properties, RegionRange regions,
                                        SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto in = tensorOf(adaptor.getInput()), w = tensorOf(adaptor.getWeight());
  if (in.getRank() < 1 || w.getRank() != 2 || in.getShape().back() != w.getShape()[0])
    return emitOptionalError(loc, "'attn.dense' needs input [..., K] and weight [K, N], got ",
                             typeStr(in), " and ", typeStr(w));
  int64_t n = w.getShape()[1];
  if (Value bias = adaptor.getBias()) {
    auto b = tensorOf(bias);
    if (b.getRank() != 1 || b.getShape()[0] != n)
      return emitOptionalError(loc, "'attn.dense' bias must be [", n, "] for weight ",
                               typeStr(w), ", got ", typeStr(b));
  }
  SmallVector<int64_t> shape(in.getShape().drop_back());
  shape.push_back(n);
  results.push_back(RankedTensorType::get(shape, Float32Type::get(in.getContext())));
  return success();
}

// result [..., M, N] = op(lhs) [..., M, K] x op(rhs) [..., K, N]: 2 M N K per batch.
double MatmulOp::getFlops() {
  auto lhs = cast<RankedTensorType>(getLhs().getType()).getShape();
  int64_t k = getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
  return multiplyAddFlops(getType().getShape()) * (double)k;
}

// result [..., N] = input [..., K] x weight [K, N] (+ bias): 2 K per result element.
double DenseOp::getFlops() {
  return multiplyAddFlops(getType().getShape()) *
         (double)cast<RankedTensorType>(getWeight().getType()).getShape()[0];
}

// Both run on oneDNN's f32 and bf16 matmul kernels (runtime/cpu/matmul.cpp). int8 is for a
// product with a weight, quantised once per output channel: a dense layer's, or a matmul's
// right-hand side shared by every batch (the tied output layer's embedding table).
bool MatmulOp::supportsPrecision(Precision p) {
  return p != Precision::int8 ||
         (!getTransposeLhs() && cast<RankedTensorType>(getRhs().getType()).getRank() == 2);
}
bool DenseOp::supportsPrecision(Precision) { return true; }

// The bf16 kernels take both factors in bf16 (the bias stays f32).
SmallVector<OpOperand *> MatmulOp::getBf16Factors() { return {&getLhsMutable(), &getRhsMutable()}; }
SmallVector<OpOperand *> DenseOp::getBf16Factors() {
  return {&getInputMutable(), &getWeightMutable()};
}

// Whether `v` is a parameter: an attn.param, an entry's parameter argument
// (attn-params-to-args), or a scan body's use of one.
static bool isParameter(Value v) {
  while (v) {
    if (v.getDefiningOp<ParamOp>())
      return true;
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return false;
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto func = dyn_cast<FunctionOpInterface>(owner))
      return arg.getOwner()->isEntryBlock() && func.getArgAttr(arg.getArgNumber(), "attn.param");
    auto scan = dyn_cast<ScanOp>(owner);
    v = scan ? scan.getInvariant(v) : Value();
  }
  return false;
}

// int8 pays when the weights are quantised once and read many times: the kernels keep a
// parameter's int8 copy for as long as its buffer lives; a computed weight would be quantised
// at every call (one more pass over it than f32 makes).
// (bf16 always gains on these: their gainsFrom is false only for int8.)
static std::string computedWeight(Precision) {
  return "its weight is computed, not a parameter (int8 quantises a parameter once)";
}
bool MatmulOp::gainsFrom(Precision p) { return p != Precision::int8 || isParameter(getRhs()); }
std::string MatmulOp::whyNotGains(Precision p) { return computedWeight(p); }
bool DenseOp::gainsFrom(Precision p) { return p != Precision::int8 || isParameter(getWeight()); }
std::string DenseOp::whyNotGains(Precision p) { return computedWeight(p); }

// stop_gradient: only its gradient rule differs from the identity's.
SmallVector<Value> StopGradientOp::decompose(OpBuilder &) { return {getInput()}; }

//===----------------------------------------------------------------------------------===//
// softmax, layer_norm
//===----------------------------------------------------------------------------------===//

int64_t SoftmaxOp::getPositiveAxis() {
  return *normalizeAxis(getAxis(), getType().getRank());
}

// The input's rank, not the result's: a graph node's op is verified before its type rule
// has given the result a type (frontends/yaml/Graph.cpp). The axis prints signed (the
// attribute's accessor is unsigned).
LogicalResult SoftmaxOp::verify() {
  if (!normalizeAxis(getAxis(), getInput().getType().getRank()))
    return emitOpError("axis ") << static_cast<int64_t>(getAxis()) << " is out of range for "
                                << getInput().getType();
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            ValueRange operands, DictionaryAttr attributes,
                                            OpaqueProperties properties, RegionRange regions,
                                            SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto in = tensorOf(adaptor.getInput());
  if (in.getRank() < 1)
    return emitOptionalError(loc, "'attn.layer_norm' needs an input of rank >= 1");
  int64_t d = in.getShape().back();
  for (Value v : {adaptor.getGamma(), adaptor.getBeta()}) {
    auto t = tensorOf(v);
    if (t.getRank() != 1 || t.getShape()[0] != d)
      return emitOptionalError(loc, "'attn.layer_norm' gamma and beta must be [", d,
                               "] for input ", typeStr(in), ", got ", typeStr(t));
  }
  results.push_back(in);
  return success();
}

//===----------------------------------------------------------------------------------===//
// reductions
//===----------------------------------------------------------------------------------===//

static LogicalResult inferReduce(StringRef opName, std::optional<Location> loc,
                                 RankedTensorType in, ArrayRef<int64_t> axes, bool keepdims,
                                 SmallVectorImpl<Type> &results) {
  SmallVector<bool> reduced(in.getRank(), false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= in.getRank() || reduced[axis])
      return emitOptionalError(loc, "'", opName, "' axes ", shapeStr(axes),
                               " must be distinct and within [0, ", in.getRank(), ") for ",
                               typeStr(in));
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(in.getShape())) {
    if (!reduced[i])
      shape.push_back(d);
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

#define ATTN_REDUCE_INFER(OP)                                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc,               \
                                     ValueRange operands, DictionaryAttr attributes,           \
                                     OpaqueProperties properties, RegionRange regions,         \
                                     SmallVectorImpl<Type> &results) {                         \
    Adaptor adaptor(operands, attributes, properties, regions);                                \
    if (!adaptor.getAxesAttr())                                                                \
      return emitOptionalError(loc, "'", getOperationName(), "' needs 'axes'");                \
    bool keepdims = adaptor.getKeepdimsAttr() && adaptor.getKeepdims();                        \
    return inferReduce(getOperationName(), loc, tensorOf(adaptor.getInput()),                  \
                       adaptor.getAxes(), keepdims, results);                                  \
  }
ATTN_REDUCE_INFER(ReduceSumOp)
ATTN_REDUCE_INFER(ReduceMeanOp)
ATTN_REDUCE_INFER(ReduceMaxOp)
#undef ATTN_REDUCE_INFER

//===----------------------------------------------------------------------------------===//
// reshape, transpose, concat, slice, embedding
//===----------------------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (!in.hasStaticShape() || !out.hasStaticShape() ||
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ") << in << " (" << in.getNumElements()
                                          << " elements) to " << out;
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            ValueRange operands, DictionaryAttr attributes,
                                            OpaqueProperties properties, RegionRange regions,
                                            SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto in = tensorOf(adaptor.getInput());
  if (!adaptor.getPermAttr())
    return emitOptionalError(loc, "'attn.transpose' needs 'perm'");
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(in.getRank(), false);
  bool ok = (int64_t)perm.size() == in.getRank();
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < in.getRank() && !seen[p];
    if (ok)
      seen[p] = true;
  }
  if (!ok)
    return emitOptionalError(loc, "'attn.transpose' perm ", shapeStr(perm),
                             " is not a permutation of the ", in.getRank(), " dims of ",
                             typeStr(in));
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.getShape()[p]);
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr attributes,
                                         OpaqueProperties properties, RegionRange regions,
                                         SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  if (operands.empty() || !adaptor.getAxisAttr())
    return emitOptionalError(loc, "'attn.concat' needs at least one input and an 'axis'");
  auto first = tensorOf(operands[0]);
  auto axis = normalizeAxis(adaptor.getAxis(), first.getRank());
  if (!axis)
    return emitOptionalError(loc, "'attn.concat' axis ", static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for ", typeStr(first));
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : operands.drop_front()) {
    auto t = tensorOf(v);
    bool ok = t.getRank() == first.getRank();
    for (int64_t i = 0; ok && i < t.getRank(); ++i)
      ok = i == *axis || t.getShape()[i] == first.getShape()[i];
    if (!ok)
      return emitOptionalError(loc, "'attn.concat' inputs ", typeStr(first), " and ",
                               typeStr(t), " differ outside axis ", *axis);
    shape[*axis] += t.getShape()[*axis];
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        ValueRange operands, DictionaryAttr attributes,
                                        OpaqueProperties properties, RegionRange regions,
                                        SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto in = tensorOf(adaptor.getInput());
  if (!adaptor.getOffsetsAttr() || !adaptor.getSizesAttr())
    return emitOptionalError(loc, "'attn.slice' needs 'offsets' and 'sizes'");
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes();
  bool ok = (int64_t)offsets.size() == in.getRank() && (int64_t)sizes.size() == in.getRank();
  for (int64_t i = 0; ok && i < in.getRank(); ++i)
    ok = offsets[i] >= 0 && sizes[i] >= 1 && sizes[i] <= in.getShape()[i] &&
         offsets[i] <= in.getShape()[i] - sizes[i]; // (no sum that can overflow)
  if (!ok)
    return emitOptionalError(loc, "'attn.slice' box offsets ", shapeStr(offsets), " sizes ",
                             shapeStr(sizes), " does not fit in ", typeStr(in));
  results.push_back(RankedTensorType::get(sizes, in.getElementType()));
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            ValueRange operands, DictionaryAttr attributes,
                                            OpaqueProperties properties, RegionRange regions,
                                            SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto table = tensorOf(adaptor.getTable()), ids = tensorOf(adaptor.getIds());
  if (table.getRank() != 2)
    return emitOptionalError(loc, "'attn.embedding' table must be [V, D], got ",
                             typeStr(table));
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getShape()[1]);
  results.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

//===----------------------------------------------------------------------------------===//
// broadcast, pad, embedding_grad
//===----------------------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto in = getInput().getType(), out = getType();
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (in.getRank() > out.getRank() || !shape || ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError("cannot broadcast ") << in << " to " << out;
  return success();
}

// Pads up to 2^31: far beyond any model, and small enough that a padded size cannot overflow.
constexpr int64_t kMaxPad = int64_t(1) << 31;

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      ValueRange operands, DictionaryAttr attributes,
                                      OpaqueProperties properties, RegionRange regions,
                                      SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto in = tensorOf(adaptor.getInput());
  if (!adaptor.getLowAttr() || !adaptor.getHighAttr())
    return emitOptionalError(loc, "'attn.pad' needs 'low' and 'high'");
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  bool ok = (int64_t)low.size() == in.getRank() && (int64_t)high.size() == in.getRank();
  SmallVector<int64_t> shape(in.getShape());
  for (int64_t d = 0; ok && d < in.getRank(); ++d) {
    // Bounded, so that the padded size cannot overflow.
    ok = low[d] >= 0 && high[d] >= 0 && low[d] <= kMaxPad && high[d] <= kMaxPad;
    shape[d] += ok ? low[d] + high[d] : 0;
  }
  if (!ok)
    return emitOptionalError(loc, "'attn.pad' low ", shapeStr(low), " and high ", shapeStr(high),
                             " must be 0 to 2^31, one per dim of ", typeStr(in));
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  auto ids = getIds().getType(), grad = getGrad().getType(), table = getType();
  SmallVector<int64_t> expected(ids.getShape());
  if (table.getRank() == 2)
    expected.push_back(table.getShape()[1]);
  if (table.getRank() != 2 || grad.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("needs grad of shape ids.shape + [D] and a [V, D] result, got ids ")
           << ids << ", grad " << grad << ", result " << table;
  return success();
}
