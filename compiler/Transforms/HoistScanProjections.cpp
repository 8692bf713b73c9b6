// attn-hoist-scan-projections: work of an attn.scan's body that does not depend on the carried
// state leaves the loop. Loop-invariant ops move before the scan; a product of a step slice by
// a loop-invariant weight becomes one product over every step, read by the body as a new
// sequence. A recurrent layer's input projection is then one [B*T, I] x [I, G] GEMM instead of
// T GEMMs of B rows, and, hoisted before attn-autodiff, so are the gradients of its input and
// weight.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNHOISTSCANPROJECTIONS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

// A pure op of the body whose operands are all loop-invariant moves before the scan, in body
// order (so what it feeds may follow). Constants stay: outside, autodiff would give each a
// gradient accumulator carried through the backward scan, for no use.
void hoistInvariantOps(ScanOp scan) {
  SmallVector<Operation *> body;
  for (Operation &op : scan.getBodyBlock().without_terminator())
    body.push_back(&op);
  for (Operation *op : body) {
    if (op->getNumRegions() != 0 || op->getNumOperands() == 0 || !isMemoryEffectFree(op))
      continue;
    SmallVector<Value> outside;
    for (Value v : op->getOperands())
      outside.push_back(scan.getInvariant(v));
    if (llvm::is_contained(outside, Value()))
      continue;
    op->moveBefore(scan);
    op->setOperands(outside);
  }
}

// The parts `v` is built from along its last axis: `v` itself when it is a step slice, the
// inputs of a concatenation of which at least one is. Empty otherwise.
SmallVector<Value> stepParts(ScanOp scan, Value v) {
  if (scan.getSequenceOf(v))
    return {v};
  auto concat = v.getDefiningOp<ConcatOp>();
  if (!concat || concat.getAxis() != typeOf(v).getRank() - 1)
    return {};
  SmallVector<Value> parts(concat.getInputs());
  if (llvm::none_of(parts, [&](Value p) { return scan.getSequenceOf(p); }))
    return {};
  return parts;
}

// Whether a step slice of rank `stepRank` can be stacked into a matrix product's left-hand
// side: the time axis is not the contracted (last) one.
bool stackable(ScanOp scan, Value step) { return (int64_t)scan.getAxis() < typeOf(step).getRank(); }

// A cell whose input projection can leave the loop: its input is (built from) step slices and
// its input weight and bias are loop-invariant. It is decomposed in place, so that the
// projection is a dense op of the body.
bool cellToDecompose(ScanOp scan, Operation *op) {
  Value input, weight, bias;
  if (auto rnn = dyn_cast<RnnCellOp>(op))
    input = rnn.getInput(), weight = rnn.getWAx(), bias = rnn.getBias();
  else if (auto lstm = dyn_cast<LstmCellOp>(op))
    input = lstm.getInput(), weight = lstm.getWIh(), bias = lstm.getBias();
  else if (auto gru = dyn_cast<GruCellOp>(op))
    input = gru.getInput(), weight = gru.getWIh(), bias = gru.getBIh();
  else
    return false;
  SmallVector<Value> parts = stepParts(scan, input);
  return !parts.empty() &&
         llvm::all_of(parts,
                      [&](Value p) { return !scan.getSequenceOf(p) || stackable(scan, p); }) &&
         scan.getInvariant(weight) && scan.getInvariant(bias);
}

// A product of the body that can leave the loop, with what it multiplies.
struct Product {
  Operation *op;
  SmallVector<Value> parts; // stepParts of the left-hand side
  Value weight, bias;       // loop-invariant (outside values); bias may be null
  bool transposeWeight = false;
};

std::optional<Product> hoistableProduct(ScanOp scan, Operation *op) {
  Product p{op, {}, {}, {}};
  Value lhs;
  if (auto dense = dyn_cast<DenseOp>(op)) {
    lhs = dense.getInput();
    p.weight = scan.getInvariant(dense.getWeight());
    if (Value b = dense.getBias()) {
      p.bias = scan.getInvariant(b);
      if (!p.bias)
        return std::nullopt;
    }
  } else if (auto mm = dyn_cast<MatmulOp>(op)) {
    // A shared [K, N] weight: the product of a [B, K] slice, stacked to [B, T, K] or
    // [T, B, K], is a batched product with a shared right-hand side.
    if (mm.getTransposeLhs() || typeOf(mm.getLhs()).getRank() != 2 ||
        typeOf(mm.getRhs()).getRank() != 2)
      return std::nullopt;
    lhs = mm.getLhs();
    p.weight = scan.getInvariant(mm.getRhs());
    p.transposeWeight = mm.getTransposeRhs();
  } else {
    return std::nullopt;
  }
  p.parts = stepParts(scan, lhs);
  if (!p.weight || p.parts.empty())
    return std::nullopt;
  // Splitting a concatenation splits the weight's rows; keep that to untransposed weights.
  if (p.parts.size() > 1 && p.transposeWeight)
    return std::nullopt;
  for (Value part : p.parts)
    if (scan.getSequenceOf(part) && !stackable(scan, part))
      return std::nullopt;
  return p;
}

// `scan` with `added` appended to its sequences, and without the sequences and consts whose
// bits are set in `droppedXs` and `droppedConsts` (their arguments must be unused). The body
// moves over whole.
ScanOp rebuild(ScanOp scan, ArrayRef<Value> added, const llvm::BitVector &droppedXs,
               const llvm::BitVector &droppedConsts) {
  SmallVector<Value> xs, consts;
  for (auto [i, x] : llvm::enumerate(scan.getXs()))
    if (!droppedXs.test(i))
      xs.push_back(x);
  xs.append(added.begin(), added.end());
  for (auto [i, c] : llvm::enumerate(scan.getConsts()))
    if (!droppedConsts.test(i))
      consts.push_back(c);
  OpBuilder b(scan);
  IntegerAttr length = scan.getLengthAttr();
  if (xs.empty())
    length = b.getI64IntegerAttr(scan.getNumSteps());
  auto next = b.create<ScanOp>(scan.getLoc(), scan.getResultTypes(), scan.getInits(), xs, consts,
                               scan.getAxisAttr(), scan.getReverseAttr(), length);
  for (NamedAttribute a : scan->getDiscardableAttrs())
    next->setAttr(a.getName(), a.getValue());
  next.getBody().takeBody(scan.getBody());
  Block &body = next.getBodyBlock();
  unsigned first = scan.getInits().size(), numXs = scan.getXs().size();
  for (auto [k, x] : llvm::enumerate(added)) {
    SmallVector<int64_t> shape(typeOf(x).getShape());
    shape.erase(shape.begin() + scan.getAxis());
    body.insertArgument(first + numXs + k, RankedTensorType::get(shape, typeOf(x).getElementType()),
                        x.getLoc());
  }
  unsigned firstConst = first + numXs + added.size();
  for (int i = (int)scan.getConsts().size() - 1; i >= 0; --i)
    if (droppedConsts.test(i))
      body.eraseArgument(firstConst + i);
  for (int i = numXs - 1; i >= 0; --i)
    if (droppedXs.test(i))
      body.eraseArgument(first + i);
  scan.replaceAllUsesWith(next.getResults());
  scan.erase();
  return next;
}

// Replaces `p` by one product over every step before the scan (the sum of one per step-slice
// part, each with its rows of the weight), read back as a new sequence; the parts that are not
// step slices keep their product in the body. Returns the new scan.
ScanOp hoist(ScanOp scan, const Product &p) {
  OpBuilder b(scan);
  Location l = p.op->getLoc();
  Value stacked; // [.., T, .., N]
  int64_t row = 0;
  bool biased = false;
  SmallVector<std::pair<Value, Value>> inBody; // (part, its rows of the weight)
  for (Value part : p.parts) {
    Value rows = p.weight;
    int64_t width = typeOf(part).getShape().back();
    if (p.parts.size() > 1) {
      int64_t n = typeOf(p.weight).getShape()[1];
      rows = b.create<SliceOp>(l, p.weight, b.getDenseI64ArrayAttr({row, 0}),
                               b.getDenseI64ArrayAttr({width, n}));
    }
    row += width;
    Value sequence = scan.getSequenceOf(part);
    if (!sequence) {
      inBody.push_back({part, rows});
      continue;
    }
    Value product;
    if (isa<DenseOp>(p.op)) {
      product = b.create<DenseOp>(l, sequence, rows, biased ? Value() : p.bias);
      biased = true;
    } else {
      product = b.create<MatmulOp>(l, sequence, rows, b.getBoolAttr(false),
                                   b.getBoolAttr(p.transposeWeight));
    }
    stacked = stacked ? b.create<AddOp>(l, stacked, product).getResult() : product;
  }
  // A value (the concatenation's parts) may be used once more in the body: what reads them
  // stays valid across the rebuild, which moves the body over whole.
  scan = rebuild(scan, {stacked}, llvm::BitVector(scan.getXs().size()),
                 llvm::BitVector(scan.getConsts().size()));
  Value step = scan.getStepArgs().back();
  b.setInsertionPoint(p.op);
  Value result = step;
  for (auto [part, rows] : inBody)
    result = b.create<AddOp>(l, result, b.create<MatmulOp>(l, part, rows)).getResult();
  Value old = p.op->getResult(0);
  Operation *concat = p.parts.size() > 1 ? p.op->getOperand(0).getDefiningOp() : nullptr;
  old.replaceAllUsesWith(result);
  p.op->erase();
  if (concat && concat->use_empty())
    concat->erase();
  return scan;
}

// Sequences and consts the body no longer reads (their products or users were hoisted).
void dropUnused(ScanOp scan) {
  llvm::BitVector xs(scan.getXs().size()), consts(scan.getConsts().size());
  for (auto [i, arg] : llvm::enumerate(scan.getStepArgs()))
    if (arg.use_empty())
      xs.set(i);
  for (auto [i, arg] : llvm::enumerate(scan.getConstArgs()))
    if (arg.use_empty())
      consts.set(i);
  if (xs.any() || consts.any())
    rebuild(scan, {}, xs, consts);
}

void hoistFrom(ScanOp scan) {
  SmallVector<Operation *> cells;
  for (Operation &op : scan.getBodyBlock().without_terminator())
    if (cellToDecompose(scan, &op))
      cells.push_back(&op);
  for (Operation *cell : cells) {
    OpBuilder b(cell);
    auto composite = cast<DecomposableOpInterface>(cell);
    cell->replaceAllUsesWith(composite.decompose(b));
    cell->erase();
  }
  hoistInvariantOps(scan);
  while (true) {
    std::optional<Product> p;
    for (Operation &op : scan.getBodyBlock().without_terminator())
      if ((p = hoistableProduct(scan, &op)))
        break;
    if (!p)
      break;
    scan = hoist(scan, *p);
  }
  dropUnused(scan);
}

struct HoistScanProjections : mlir::attn::impl::AttnHoistScanProjectionsBase<HoistScanProjections> {
  void runOnOperation() override {
    // Inner scans first: what leaves an inner loop may then leave the outer one.
    SmallVector<ScanOp> scans;
    getOperation()->walk<WalkOrder::PostOrder>([&](ScanOp scan) { scans.push_back(scan); });
    for (ScanOp scan : scans)
      hoistFrom(scan);
  }
};
} // namespace
