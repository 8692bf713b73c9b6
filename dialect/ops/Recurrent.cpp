// scan's syntax and verifier, and the cells' shape rules (ops/Recurrent.td).
#include "dialect/AttnOps.h"
#include "dialect/FlopCount.h"

#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------------------===//
// scan
//===----------------------------------------------------------------------------------===//

// attn.scan [reverse] inits(%a, ...) over(%x, ...) [consts(%k, ...)] {attrs}
//     : (types) -> (types) { body }
ParseResult ScanOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  if (succeeded(parser.parseOptionalKeyword("reverse")))
    result.addAttribute("reverse", b.getUnitAttr());
  SmallVector<OpAsmParser::UnresolvedOperand> inits, xs, consts;
  if (parser.parseKeyword("inits") ||
      parser.parseOperandList(inits, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("over") ||
      parser.parseOperandList(xs, OpAsmParser::Delimiter::Paren))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("consts")) &&
      parser.parseOperandList(consts, OpAsmParser::Delimiter::Paren))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  FunctionType type;
  llvm::SMLoc typeLoc = parser.getCurrentLocation();
  if (parser.parseColonType(type))
    return failure();
  size_t numOperands = inits.size() + xs.size() + consts.size();
  if (type.getNumInputs() != numOperands)
    return parser.emitError(typeLoc, "expected ")
           << numOperands << " operand types, got " << type.getNumInputs();
  ArrayRef<Type> types = type.getInputs();
  if (parser.resolveOperands(inits, types.take_front(inits.size()), typeLoc, result.operands) ||
      parser.resolveOperands(xs, types.slice(inits.size(), xs.size()), typeLoc,
                             result.operands) ||
      parser.resolveOperands(consts, types.take_back(consts.size()), typeLoc, result.operands))
    return failure();
  result.addTypes(type.getResults());
  result.addAttribute("operandSegmentSizes",
                      b.getDenseI32ArrayAttr({(int32_t)inits.size(), (int32_t)xs.size(),
                                              (int32_t)consts.size()}));
  return parser.parseRegion(*result.addRegion(), /*arguments=*/{});
}

void ScanOp::print(OpAsmPrinter &p) {
  if (getReverse())
    p << " reverse";
  p << " inits(" << getInits() << ") over(" << getXs() << ")";
  if (!getConsts().empty())
    p << " consts(" << getConsts() << ")";
  p.printOptionalAttrDict((*this)->getAttrDictionary().getValue(),
                          {"reverse", "operandSegmentSizes"});
  p << " : ";
  p.printFunctionalType(getOperandTypes(), getResultTypes());
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/true, /*printBlockTerminators=*/true);
}

int64_t ScanOp::getNumSteps() {
  if (getXs().empty())
    return getLength().value_or(0);
  return cast<RankedTensorType>(getXs()[0].getType()).getShape()[getAxis()];
}

RankedTensorType ScanOp::getStackedType(Type stepType) {
  auto t = cast<RankedTensorType>(stepType);
  SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + getAxis(), getNumSteps());
  return RankedTensorType::get(shape, t.getElementType());
}

// The body once per step.
double ScanOp::getFlops() { return (double)getNumSteps() * countFlops(getBody()); }

LogicalResult ScanOp::verify() {
  int64_t axis = getAxis();
  if (getXs().empty() && !getLength())
    return emitOpError("without sequence inputs needs a 'length'");
  for (Value x : getXs()) {
    auto t = cast<RankedTensorType>(x.getType());
    if (axis < 0 || axis >= t.getRank())
      return emitOpError("axis ") << axis << " is out of range for sequence input " << t;
    if (t.getShape()[axis] != getNumSteps())
      return emitOpError("sequence inputs disagree on the number of steps: ")
             << getXs()[0].getType() << " vs " << t << " along axis " << axis;
  }
  if (getLength() && *getLength() != getNumSteps())
    return emitOpError("length ") << *getLength() << " disagrees with " << getNumSteps()
                                  << " steps of the sequence inputs";
  if (getResults().size() < getInits().size())
    return emitOpError("has ") << getResults().size() << " results for "
                               << getInits().size() << " carried values";
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  Block &body = getBodyBlock();
  unsigned nInits = getInits().size();
  int64_t axis = getAxis();
  if (body.getNumArguments() != nInits + getXs().size() + getConsts().size())
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments, expected " << nInits << " carried + "
           << getXs().size() << " step inputs + " << getConsts().size() << " consts";
  for (auto [i, k] : llvm::enumerate(getConsts()))
    if (getConstArgs()[i].getType() != k.getType())
      return emitOpError("const #") << i << " is " << k.getType()
                                    << " but the body argument is "
                                    << getConstArgs()[i].getType();
  for (unsigned i = 0; i < nInits; ++i)
    if (body.getArgument(i).getType() != getInits()[i].getType())
      return emitOpError("carried value #")
             << i << " is " << getInits()[i].getType() << " but the body argument is "
             << body.getArgument(i).getType();
  for (auto [i, x] : llvm::enumerate(getXs())) {
    auto t = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> step(t.getShape());
    step.erase(step.begin() + axis);
    auto expected = RankedTensorType::get(step, t.getElementType());
    Type actual = body.getArgument(nInits + i).getType();
    if (actual != expected)
      return emitOpError("step input #")
             << i << " of " << t << " along axis " << axis << " is " << expected
             << " but the body argument is " << actual;
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != getResults().size())
    return emitOpError("body yields ")
           << yield.getValues().size() << " values but the op has " << getResults().size()
           << " results";
  for (unsigned i = 0; i < nInits; ++i)
    if (yield.getValues()[i].getType() != getInits()[i].getType() ||
        getResult(i).getType() != getInits()[i].getType())
      return emitOpError("carried value #")
             << i << " changes type: init " << getInits()[i].getType() << ", yielded "
             << yield.getValues()[i].getType() << ", result " << getResult(i).getType();
  for (unsigned i = nInits; i < getResults().size(); ++i) {
    auto y = cast<RankedTensorType>(yield.getValues()[i].getType());
    if (axis > y.getRank())
      return emitOpError("cannot stack step output ") << y << " along axis " << axis;
    RankedTensorType expected = getStackedType(y);
    if (getResult(i).getType() != expected)
      return emitOpError("stacked output #")
             << i - nInits << " should be " << expected << " (step output " << y << ", "
             << getNumSteps() << " steps on axis " << axis << "), got "
             << getResult(i).getType();
  }
  return success();
}

Value ScanOp::getInvariant(Value v) {
  if (!getBody().isAncestor(v.getParentRegion()))
    return v;
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &getBodyBlock())
    return {};
  unsigned first = getInits().size() + getXs().size();
  return arg.getArgNumber() < first ? Value() : getConsts()[arg.getArgNumber() - first];
}

Value ScanOp::getSequenceOf(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &getBodyBlock())
    return {};
  unsigned first = getInits().size();
  if (arg.getArgNumber() < first || arg.getArgNumber() >= first + getXs().size())
    return {};
  return getXs()[arg.getArgNumber() - first];
}

ScanOp ScanOp::makeCapturesExplicit(OpBuilder &b) {
  // Values used in the body but defined outside it, in first-use order.
  llvm::SetVector<Value> captured;
  getBody().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!getBody().isAncestor(v.getParentRegion()))
        captured.insert(v);
  });
  if (captured.empty())
    return *this;
  SmallVector<Value> consts(getConsts());
  consts.append(captured.begin(), captured.end());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(*this);
  auto scan = b.create<ScanOp>(getLoc(), getResultTypes(), getInits(), getXs(), consts,
                               getAxisAttr(), getReverseAttr(), getLengthAttr());
  scan.getBody().takeBody(getBody());
  Block &body = scan.getBodyBlock();
  for (Value v : captured) {
    BlockArgument arg = body.addArgument(v.getType(), v.getLoc());
    v.replaceUsesWithIf(arg, [&](OpOperand &use) {
      return scan.getBody().isAncestor(use.getOwner()->getParentRegion());
    });
  }
  replaceAllUsesWith(scan.getResults());
  erase();
  return scan;
}

//===----------------------------------------------------------------------------------===//
// rnn_cell
//===----------------------------------------------------------------------------------===//

LogicalResult RnnCellOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          ValueRange operands, DictionaryAttr attributes,
                                          OpaqueProperties properties, RegionRange regions,
                                          SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto x = cast<RankedTensorType>(a.getInput().getType());
  auto h = cast<RankedTensorType>(a.getHidden().getType());
  auto wax = cast<RankedTensorType>(a.getWAx().getType());
  auto waa = cast<RankedTensorType>(a.getWAa().getType());
  auto b = cast<RankedTensorType>(a.getBias().getType());
  bool ok = x.getRank() == 2 && h.getRank() == 2 && wax.getRank() == 2 &&
            waa.getRank() == 2 && b.getRank() == 1;
  if (ok) {
    int64_t batch = x.getShape()[0], in = x.getShape()[1], hid = h.getShape()[1];
    ok = h.getShape()[0] == batch && wax.getShape() == ArrayRef<int64_t>{in, hid} &&
         waa.getShape() == ArrayRef<int64_t>{hid, hid} && b.getShape()[0] == hid;
  }
  if (!ok)
    return emitOptionalError(
        loc, "'attn.rnn_cell' needs input [B, I], hidden [B, H], w_ax [I, H], w_aa [H, H], "
             "bias [H]; got ",
        typeStr(x), ", ", typeStr(h), ", ", typeStr(wax), ", ", typeStr(waa), ", ", typeStr(b));
  results.push_back(h);
  return success();
}

SmallVector<Value> RnnCellOp::decompose(OpBuilder &b) {
  // The input projection carries the bias so it maps onto one oneDNN matmul-with-bias.
  Location loc = getLoc();
  Value in = b.create<DenseOp>(loc, getInput(), getWAx(), getBias());
  Value rec = b.create<MatmulOp>(loc, getHidden(), getWAa());
  return {b.create<TanhOp>(loc, b.create<AddOp>(loc, in, rec))};
}

//===----------------------------------------------------------------------------------===//
// lstm_cell, gru_cell
//===----------------------------------------------------------------------------------===//

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
bool hasShape(Value v, ArrayRef<int64_t> shape) { return typeOf(v).getShape() == shape; }

// Columns [k*width, (k+1)*width) of a [rows, n*width] matrix.
Value gateBlock(OpBuilder &b, Location l, Value v, int64_t k, int64_t width) {
  auto shape = typeOf(v).getShape();
  return b.create<SliceOp>(l, v, b.getDenseI64ArrayAttr({0, k * width}),
                           b.getDenseI64ArrayAttr({shape[0], width}));
}
// Entries [k*width, (k+1)*width) of a vector.
Value vectorBlock(OpBuilder &b, Location l, Value v, int64_t k, int64_t width) {
  return b.create<SliceOp>(l, v, b.getDenseI64ArrayAttr({k * width}),
                           b.getDenseI64ArrayAttr({width}));
}
Value one(OpBuilder &b, Location l) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return b.create<ConstantOp>(l, DenseElementsAttr::get(type, b.getF32FloatAttr(1.0f)));
}
} // namespace

LogicalResult LstmCellOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           ValueRange operands, DictionaryAttr attributes,
                                           OpaqueProperties properties, RegionRange regions,
                                           SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  auto x = typeOf(a.getInput()), h = typeOf(a.getHidden()), c = typeOf(a.getCell());
  bool ok = x.getRank() == 2 && h.getRank() == 2 && c.getRank() == 2;
  int64_t batch = ok ? x.getShape()[0] : 0, in = ok ? x.getShape()[1] : 0;
  int64_t hid = ok ? c.getShape()[1] : 0, proj = ok ? h.getShape()[1] : 0;
  ok = ok && h.getShape()[0] == batch && c.getShape()[0] == batch &&
       hasShape(a.getWIh(), {in, 4 * hid}) && hasShape(a.getWHh(), {proj, 4 * hid}) &&
       hasShape(a.getBias(), {4 * hid});
  bool full = a.getPeepholeFormAttr() && a.getPeepholeForm() == PeepholeForm::full;
  if (ok && a.getWPeephole())
    ok = full ? hasShape(a.getWPeephole(), {hid, 4 * hid}) : hasShape(a.getWPeephole(), {3, hid});
  if (ok && (bool)a.getWProj() != (bool)a.getBProj())
    ok = false;
  if (ok && a.getWProj())
    ok = hasShape(a.getWProj(), {hid, proj}) && hasShape(a.getBProj(), {proj});
  else if (ok)
    ok = proj == hid;
  if (!ok) {
    std::string shapes;
    for (Value v : operands)
      shapes += (shapes.empty() ? "" : ", ") + typeStr(v.getType());
    return emitOptionalError(
        loc,
        "'attn.lstm_cell' needs input [B, I], hidden [B, P], cell [B, H], w_ih [I, 4H], "
        "w_hh [P, 4H], bias [4H], peephole ",
        full ? "[H, 4H] (full)" : "[3, H]", ", projection [H, P] and [P] (P = H without one); got ",
        shapes);
  }
  results.push_back(h);
  results.push_back(c);
  return success();
}

SmallVector<Value> LstmCellOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  int64_t hid = typeOf(getCell()).getShape()[1];
  Value z = b.create<AddOp>(l, b.create<DenseOp>(l, getInput(), getWIh(), getBias()),
                            b.create<MatmulOp>(l, getHidden(), getWHh()));
  Value zi = gateBlock(b, l, z, 0, hid), zf = gateBlock(b, l, z, 1, hid);
  Value zg = gateBlock(b, l, z, 2, hid), zo = gateBlock(b, l, z, 3, hid);
  Value wp = getWPeephole();
  bool full = wp && getPeepholeForm() == PeepholeForm::full;
  // Diagonal: row k of w_peephole [3, H] (0: i, 1: f, 2: o) times a cell state [B, H].
  auto diagonal = [&](int64_t k, Value cell) -> Value {
    Value w = b.create<ReshapeOp>(
        l, RankedTensorType::get({hid}, b.getF32Type()),
        b.create<SliceOp>(l, wp, b.getDenseI64ArrayAttr({k, 0}), b.getDenseI64ArrayAttr({1, hid})));
    return b.create<MulOp>(l, cell, w);
  };
  if (full) {
    // The old cell [B, H] x w_peephole's i, f, g blocks [H, 3H]: one matmul for three gates.
    Value wifg = b.create<SliceOp>(l, wp, b.getDenseI64ArrayAttr({0, 0}),
                                   b.getDenseI64ArrayAttr({hid, 3 * hid}));
    Value p = b.create<MatmulOp>(l, getCell(), wifg);
    zi = b.create<AddOp>(l, zi, gateBlock(b, l, p, 0, hid));
    zf = b.create<AddOp>(l, zf, gateBlock(b, l, p, 1, hid));
    zg = b.create<AddOp>(l, zg, gateBlock(b, l, p, 2, hid));
  } else if (wp) {
    zi = b.create<AddOp>(l, zi, diagonal(0, getCell()));
    zf = b.create<AddOp>(l, zf, diagonal(1, getCell()));
  }
  Value i = b.create<SigmoidOp>(l, zi), f = b.create<SigmoidOp>(l, zf);
  Value g = b.create<TanhOp>(l, zg);
  Value cell = b.create<AddOp>(l, b.create<MulOp>(l, f, getCell()), b.create<MulOp>(l, i, g));
  if (full)
    zo = b.create<AddOp>(l, zo, b.create<MatmulOp>(l, cell, gateBlock(b, l, wp, 3, hid)));
  else if (wp)
    zo = b.create<AddOp>(l, zo, diagonal(2, cell));
  Value o = b.create<SigmoidOp>(l, zo);
  Value m = b.create<MulOp>(l, o, b.create<TanhOp>(l, cell));
  Value hidden = getWProj() ? b.create<DenseOp>(l, m, getWProj(), getBProj()).getResult() : m;
  return {hidden, cell};
}

LogicalResult GruCellOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          ValueRange operands, DictionaryAttr attributes,
                                          OpaqueProperties properties, RegionRange regions,
                                          SmallVectorImpl<Type> &results) {
  Adaptor a(operands, attributes, properties, regions);
  GruForm form = a.getFormAttr() ? a.getForm() : GruForm::pytorch;
  int64_t gates = form == GruForm::minimal ? 2 : 3;
  auto x = typeOf(a.getInput()), h = typeOf(a.getHidden());
  bool ok = x.getRank() == 2 && h.getRank() == 2 && x.getShape()[0] == h.getShape()[0];
  int64_t in = ok ? x.getShape()[1] : 0, hid = ok ? h.getShape()[1] : 0;
  ok = ok && hasShape(a.getWIh(), {in, gates * hid}) &&
       hasShape(a.getWHh(), {hid, gates * hid}) && hasShape(a.getBIh(), {gates * hid}) &&
       hasShape(a.getBHh(), {gates * hid});
  if (!ok) {
    std::string shapes;
    for (Value v : operands)
      shapes += (shapes.empty() ? "" : ", ") + typeStr(v.getType());
    return emitOptionalError(loc, "'attn.gru_cell' (", stringifyGruForm(form),
                             ") needs input [B, I], hidden [B, H], w_ih [I, ", gates,
                             "H], w_hh [H, ", gates, "H], b_ih and b_hh [", gates, "H]; got ",
                             shapes);
  }
  results.push_back(h);
  return success();
}

SmallVector<Value> GruCellOp::decompose(OpBuilder &b) {
  Location l = getLoc();
  int64_t hid = typeOf(getHidden()).getShape()[1];
  Value h = getHidden();
  Value a = b.create<DenseOp>(l, getInput(), getWIh(), getBIh());
  auto ablock = [&](int64_t k) { return gateBlock(b, l, a, k, hid); };
  // hidden x w_hh[:, block k] + b_hh[block k], for any left-hand side.
  auto hproj = [&](Value lhs, int64_t k) -> Value {
    return b.create<DenseOp>(l, lhs, gateBlock(b, l, getWHh(), k, hid),
                             vectorBlock(b, l, getBHh(), k, hid));
  };
  // u * candidate + (1 - u) * hidden, or the PyTorch form's (1 - z) * n + z * hidden.
  auto mix = [&](Value keepNew, Value candidate) -> Value {
    Value keepOld = b.create<SubOp>(l, one(b, l), keepNew);
    return b.create<AddOp>(l, b.create<MulOp>(l, keepNew, candidate),
                           b.create<MulOp>(l, keepOld, h));
  };
  // The gates that read `hidden` itself share one product h x w_hh + b_hh over their blocks:
  // one GEMM forward and one for the weight's gradient, instead of one per gate plus the
  // padding that puts the per-gate gradients back together. That is every gate of the
  // PyTorch form, and u and r of the seed's (its candidate reads r * hidden). (The minimal
  // form keeps one product per gate: with one product, its gradient check's module crashes
  // MLIR 19's buffer-results-to-out-params; see the closing note of issue 5.)
  Value bAll;
  auto bblock = [&](int64_t k) { return gateBlock(b, l, bAll, k, hid); };
  if (getForm() == GruForm::minimal) {
    Value u = b.create<SigmoidOp>(l, b.create<AddOp>(l, ablock(0), hproj(h, 0)));
    Value cand = b.create<TanhOp>(l, b.create<AddOp>(l, ablock(1), hproj(h, 1)));
    return {mix(u, cand)};
  }
  if (getForm() == GruForm::seed) {
    bAll = b.create<DenseOp>(l, h, gateBlock(b, l, getWHh(), 0, 2 * hid),
                             vectorBlock(b, l, getBHh(), 0, 2 * hid));
    Value u = b.create<SigmoidOp>(l, b.create<AddOp>(l, ablock(0), bblock(0)));
    Value r = b.create<SigmoidOp>(l, b.create<AddOp>(l, ablock(1), bblock(1)));
    Value cand = b.create<TanhOp>(
        l, b.create<AddOp>(l, ablock(2), hproj(b.create<MulOp>(l, r, h), 2)));
    return {mix(u, cand)};
  }
  bAll = b.create<DenseOp>(l, h, getWHh(), getBHh());
  Value r = b.create<SigmoidOp>(l, b.create<AddOp>(l, ablock(0), bblock(0)));
  Value z = b.create<SigmoidOp>(l, b.create<AddOp>(l, ablock(1), bblock(1)));
  Value n = b.create<TanhOp>(l, b.create<AddOp>(l, ablock(2), b.create<MulOp>(l, r, bblock(2))));
  // (1 - z) * n + z * h
  return {mix(b.create<SubOp>(l, one(b, l), z), n)};
}

//===----------------------------------------------------------------------------------===//
// rnn, gru, lstm and their backward ops
//===----------------------------------------------------------------------------------===//

namespace {
// A sequence op's operands by role (an op's adaptor fills them): input [B, T, I], h0 [B, P],
// c0 [B, H] (LSTM), w_ih [I, G*H], w_hh [P, G*H], the biases [G*H], and the optional
// peepholes [3, H], projection [H, P] (LSTM) and mask [B, T, 1]. P = H without a projection.
struct SequenceOperands {
  Value input, h0, c0, wIh, wHh;
  SmallVector<Value, 2> biases;
  Value peephole, proj, mask;
  // The operands of which the backward op returns gradients, in the forward's order.
  SmallVector<Value> differentiable() const {
    SmallVector<Value> v{input, h0};
    if (c0)
      v.push_back(c0);
    v.append({wIh, wHh});
    v.append(biases.begin(), biases.end());
    for (Value o : {peephole, proj})
      if (o)
        v.push_back(o);
    return v;
  }
};

// The shape rule shared by the sequence ops: `name`'s results (outputs [B, T, P], h_n [B, P]
// and with `cell` c_n [B, H]) from its operands `o`.
LogicalResult inferSequence(StringRef name, std::optional<Location> loc,
                            const SequenceOperands &o, int64_t gates, bool cell,
                            SmallVectorImpl<Type> &results) {
  auto x = typeOf(o.input), h = typeOf(o.h0);
  bool ok = x.getRank() == 3 && h.getRank() == 2 && h.getShape()[0] == x.getShape()[0];
  int64_t batch = ok ? x.getShape()[0] : 0, steps = ok ? x.getShape()[1] : 0;
  int64_t in = ok ? x.getShape()[2] : 0, out = ok ? h.getShape()[1] : 0;
  // The cell's width: the projection's rows, else the state's.
  int64_t hid = o.proj && typeOf(o.proj).getRank() == 2 ? typeOf(o.proj).getShape()[0] : out;
  ok = ok && (!cell || hasShape(o.c0, {batch, hid})) && hasShape(o.wIh, {in, gates * hid}) &&
       hasShape(o.wHh, {out, gates * hid});
  for (Value bias : o.biases)
    ok = ok && hasShape(bias, {gates * hid});
  ok = ok && (!o.peephole || hasShape(o.peephole, {3, hid})) &&
       (!o.proj || hasShape(o.proj, {hid, out})) && (!o.mask || hasShape(o.mask, {batch, steps, 1}));
  if (!ok) {
    std::string shapes;
    auto show = [&](StringRef role, Value v) {
      if (v)
        shapes += (shapes.empty() ? "" : ", ") + role.str() + " " + typeStr(v.getType());
    };
    show("input", o.input), show("h0", o.h0), show("c0", o.c0), show("w_ih", o.wIh);
    show("w_hh", o.wHh);
    for (Value bias : o.biases)
      show("bias", bias);
    show("peepholes", o.peephole), show("projection", o.proj), show("mask", o.mask);
    std::string g = gates == 1 ? "" : std::to_string(gates);
    return emitOptionalError(
        loc, "'attn.", name, "' needs input [B, T, I], h0 [B, ", cell ? "P" : "H", "]",
        cell ? ", c0 [B, H]" : "", ", w_ih [I, ", g, "H], w_hh [", cell ? "P" : "H", ", ", g,
        "H] and ", o.biases.size(), " bias(es) [", g, "H]",
        cell ? " (and peepholes [3, H], a projection [H, P]; P = H without one)" : "",
        " (and a mask [B, T, 1]); got ", shapes);
  }
  results.push_back(RankedTensorType::get({batch, steps, out}, x.getElementType()));
  results.push_back(o.h0.getType());
  if (cell)
    results.push_back(o.c0.getType());
  return success();
}

// The shape rule of a sequence op's backward: the forward's operands `o`, its results
// `values` and their gradients `grads` (checked against the forward's shape rule); the
// results are the gradients of the differentiable forward operands, of their types.
LogicalResult inferSequenceGrad(StringRef name, std::optional<Location> loc,
                                const SequenceOperands &o, ValueRange values, ValueRange grads,
                                int64_t gates, bool cell, SmallVectorImpl<Type> &results) {
  SmallVector<Type> forward;
  if (failed(inferSequence(name.drop_back(5) /* "_grad" */, loc, o, gates, cell, forward)))
    return failure();
  bool ok = values.size() == forward.size() && grads.size() == forward.size();
  for (unsigned i = 0; ok && i < forward.size(); ++i)
    ok = values[i].getType() == forward[i] && grads[i].getType() == forward[i];
  if (!ok) {
    std::string want;
    for (Type t : forward)
      want += (want.empty() ? "" : ", ") + typeStr(t);
    return emitOptionalError(loc, "'attn.", name,
                             "' needs the forward's operands, then its results and their "
                             "gradients, each of types (",
                             want, ")");
  }
  for (Value v : o.differentiable())
    results.push_back(v.getType());
  return success();
}
} // namespace

#define ATTN_INFER_SIGNATURE(Op)                                                                   \
  LogicalResult Op::inferReturnTypes(MLIRContext *, std::optional<Location> loc,                  \
                                     ValueRange operands, DictionaryAttr attributes,              \
                                     OpaqueProperties properties, RegionRange regions,            \
                                     SmallVectorImpl<Type> &results)
ATTN_INFER_SIGNATURE(RnnOp) {
  Adaptor a(operands, attributes, properties, regions);
  SequenceOperands o{a.getInput(), a.getH0(), {}, a.getWAx(), a.getWAa(), {a.getBias()}};
  o.mask = a.getMask();
  return inferSequence("rnn", loc, o, 1, false, results);
}
ATTN_INFER_SIGNATURE(GruOp) {
  Adaptor a(operands, attributes, properties, regions);
  SequenceOperands o{a.getInput(), a.getH0(), {}, a.getWIh(), a.getWHh(), {a.getBIh(), a.getBHh()}};
  o.mask = a.getMask();
  return inferSequence("gru", loc, o, 3, false, results);
}
ATTN_INFER_SIGNATURE(LstmOp) {
  Adaptor a(operands, attributes, properties, regions);
  SequenceOperands o{a.getInput(), a.getH0(), a.getC0(), a.getWIh(), a.getWHh(), {a.getBias()},
                     a.getWPeephole(), a.getWProj(), a.getMask()};
  return inferSequence("lstm", loc, o, 4, true, results);
}
ATTN_INFER_SIGNATURE(RnnGradOp) {
  Adaptor a(operands, attributes, properties, regions);
  SequenceOperands o{a.getInput(), a.getH0(), {}, a.getWAx(), a.getWAa(), {a.getBias()}};
  o.mask = a.getMask();
  return inferSequenceGrad("rnn_grad", loc, o, {a.getOutputs(), a.getHN()},
                           {a.getDOutputs(), a.getDHN()}, 1, false, results);
}
ATTN_INFER_SIGNATURE(GruGradOp) {
  Adaptor a(operands, attributes, properties, regions);
  SequenceOperands o{a.getInput(), a.getH0(), {}, a.getWIh(), a.getWHh(), {a.getBIh(), a.getBHh()}};
  o.mask = a.getMask();
  return inferSequenceGrad("gru_grad", loc, o, {a.getOutputs(), a.getHN()},
                           {a.getDOutputs(), a.getDHN()}, 3, false, results);
}
ATTN_INFER_SIGNATURE(LstmGradOp) {
  Adaptor a(operands, attributes, properties, regions);
  SequenceOperands o{a.getInput(), a.getH0(), a.getC0(), a.getWIh(), a.getWHh(), {a.getBias()},
                     a.getWPeephole(), a.getWProj(), a.getMask()};
  return inferSequenceGrad("lstm_grad", loc, o, {a.getOutputs(), a.getHN(), a.getCN()},
                           {a.getDOutputs(), a.getDHN(), a.getDCN()}, 4, true, results);
}
#undef ATTN_INFER_SIGNATURE

// The gate products of a recurrent layer over input [B, T, I]: x_t w_ih [I, G H] and
// h_{t-1} w_hh [H, G H] for every step and row. The backward does twice that (the gradients
// of the inputs and of the weights: dG w^T and x^T dG for both products).
static double sequenceFlops(Value input, Value wIh, Value wHh, Value wProj = {}) {
  auto x = cast<RankedTensorType>(input.getType()).getShape();
  auto numel = [](Value w) {
    return w ? (double)cast<RankedTensorType>(w.getType()).getNumElements() : 0.0;
  };
  return multiplyAddFlops({x[0], x[1]}) * (numel(wIh) + numel(wHh) + numel(wProj));
}
double RnnOp::getFlops() { return sequenceFlops(getInput(), getWAx(), getWAa()); }
double GruOp::getFlops() { return sequenceFlops(getInput(), getWIh(), getWHh()); }
double LstmOp::getFlops() { return sequenceFlops(getInput(), getWIh(), getWHh(), getWProj()); }
double RnnGradOp::getFlops() { return 2 * sequenceFlops(getInput(), getWAx(), getWAa()); }
double GruGradOp::getFlops() { return 2 * sequenceFlops(getInput(), getWIh(), getWHh()); }
double LstmGradOp::getFlops() {
  return 2 * sequenceFlops(getInput(), getWIh(), getWHh(), getWProj());
}

// oneDNN's RNN primitives have bf16 forms (avx512_core_bf16), not int8 ones that train or
// keep f32 states: int8 leaves the layers f32. Nor a bf16 LSTM with a projection: oneDNN
// 2.6's bf16 LSTMP is 0.2 away from the layer it should compute (RecurrentTest), so it
// stays f32.
bool RnnOp::supportsPrecision(Precision p) { return p != Precision::int8; }
bool GruOp::supportsPrecision(Precision p) { return p != Precision::int8; }
bool LstmOp::supportsPrecision(Precision p) {
  return p == Precision::f32 || (p == Precision::bf16 && !getWProj());
}
bool RnnGradOp::supportsPrecision(Precision p) { return p != Precision::int8; }
bool GruGradOp::supportsPrecision(Precision p) { return p != Precision::int8; }
bool LstmGradOp::supportsPrecision(Precision p) {
  return p == Precision::f32 || (p == Precision::bf16 && !getWProj());
}
