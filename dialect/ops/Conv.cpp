// The convolution family (ops/Conv.td): shape rules, decompositions into core ops, and
// gradient rules (the decompositions', differentiated).
#include "dialect/AttnOps.h"
#include "dialect/Autodiff.h"
#include "dialect/ops/ShapeRules.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
} // namespace

//===- conv1d ------------------------------------------------------------------------------===//

LogicalResult Conv1dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr attributes,
                                         OpaqueProperties properties, RegionRange regions,
                                         SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto x = typeOf(a.getInput()), w = typeOf(a.getWeight()), bias = typeOf(a.getBias());
  // The pads are read as attributes: before the op is built, a default-valued one may be
  // absent from the dictionary.
  auto padOf = [](IntegerAttr pad) { return pad ? pad.getInt() : 0; };
  int64_t low = padOf(a.getPadLowAttr()), high = padOf(a.getPadHighAttr());
  // (Pads bounded, so that T + pad_low + pad_high cannot overflow.)
  constexpr int64_t kMaxPad = int64_t(1) << 31;
  bool ok = x.getRank() == 3 && w.getRank() == 3 && bias.getRank() == 1 && low >= 0 && high >= 0 &&
            low <= kMaxPad && high <= kMaxPad && w.getShape()[1] == x.getShape()[2] &&
            bias.getShape()[0] == w.getShape()[2] &&
            x.getShape()[1] + low + high >= w.getShape()[0];
  if (!ok)
    return emitOptionalError(loc,
                             "'attn.conv1d' needs input [B, T, C], weight [K, C, N], bias [N] "
                             "and pads of 0 to 2^31 with T + pad_low + pad_high >= K; got ",
                             typeStr(x), ", ", typeStr(w), ", ", typeStr(bias), ", pad_low ", low,
                             ", pad_high ", high);
  int64_t steps = x.getShape()[1] + low + high - w.getShape()[0] + 1;
  results.push_back(
      RankedTensorType::get({x.getShape()[0], steps, w.getShape()[2]}, x.getElementType()));
  return success();
}

SmallVector<Value> Conv1dOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  ArrayRef<int64_t> w = typeOf(getWeight()).getShape();
  int64_t taps = w[0], channels = w[1], outputs = w[2];
  int64_t batch = typeOf(getInput()).getShape()[0], steps = getType().getShape()[1];
  Value x = getInput();
  int64_t low = getPadLow(), high = getPadHigh(); // (the verifier kept them >= 0)
  if (low > 0 || high > 0)
    x = b.create<PadOp>(l, x, b.getDenseI64ArrayAttr({0, low, 0}),
                        b.getDenseI64ArrayAttr({0, high, 0}));
  // Tap k reads steps k .. k + T_out - 1 of the padded input: [B, T_out, C] each, side by
  // side [B, T_out, K C], the rows of the weight read as [K C, N] in the same order.
  SmallVector<Value> columns;
  for (int64_t k = 0; k < taps; ++k)
    columns.push_back(b.create<SliceOp>(l, x, b.getDenseI64ArrayAttr({0, k, 0}),
                                        b.getDenseI64ArrayAttr({batch, steps, channels})));
  Value unfolded = taps == 1
                       ? columns[0]
                       : Value(b.create<ConcatOp>(l, ValueRange(columns), b.getI64IntegerAttr(2)));
  Value weight = b.create<ReshapeOp>(
      l, RankedTensorType::get({taps * channels, outputs}, typeOf(getWeight()).getElementType()),
      getWeight());
  return {b.create<DenseOp>(l, unfolded, weight, getBias())};
}

LogicalResult Conv1dOp::buildGradient(OpBuilder &b, ValueRange grads, SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}

//===- glu ---------------------------------------------------------------------------------===//

LogicalResult GluOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      ValueRange operands, DictionaryAttr attributes,
                                      OpaqueProperties properties, RegionRange regions,
                                      SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto x = typeOf(a.getInput());
  if (x.getRank() < 1 || x.getShape().back() % 2 != 0)
    return emitOptionalError(loc, "'attn.glu' halves the last dimension, which must be even; got ",
                             typeStr(x));
  SmallVector<int64_t> shape(x.getShape());
  shape.back() /= 2;
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

SmallVector<Value> GluOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  ArrayRef<int64_t> shape = getType().getShape();
  SmallVector<int64_t> offsets(shape.size(), 0);
  auto half = [&](int64_t which) {
    offsets.back() = which * shape.back();
    return b.create<SliceOp>(l, getInput(), b.getDenseI64ArrayAttr(offsets),
                             b.getDenseI64ArrayAttr(shape));
  };
  Value value = half(0), gate = half(1);
  return {b.create<MulOp>(l, value, b.create<SigmoidOp>(l, gate))};
}

LogicalResult GluOp::buildGradient(OpBuilder &b, ValueRange grads, SmallVectorImpl<Value> &out) {
  return buildGradientByDecomposition(*this, b, grads, out);
}
