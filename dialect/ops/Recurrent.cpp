// scan's syntax and verifier, and the cells' shape rules (ops/Recurrent.td).
#include "dialect/AttnOps.h"

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
    SmallVector<int64_t> stacked(y.getShape());
    stacked.insert(stacked.begin() + axis, getNumSteps());
    auto expected = RankedTensorType::get(stacked, y.getElementType());
    if (getResult(i).getType() != expected)
      return emitOpError("stacked output #")
             << i - nInits << " should be " << expected << " (step output " << y << ", "
             << getNumSteps() << " steps on axis " << axis << "), got "
             << getResult(i).getType();
  }
  return success();
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
