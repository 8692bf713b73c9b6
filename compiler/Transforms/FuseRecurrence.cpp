// attn-fuse-recurrence: an attn.scan whose body is exactly one cell that oneDNN implements,
// feeding its new state back, becomes the sequence op (attn.rnn / gru / lstm). Everything
// else stays a scan.
#include "compiler/Transforms/Passes.h"
#include "dialect/AttnOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSERECURRENCE
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr StringLiteral kSavedCarries = "attn.saved_carries";

// What the sequence op needs to know of the scan's body, once it has been recognised.
struct Match {
  Operation *cell;
  // The cell's state operands and new states, in the sequence op's order (h, then c).
  SmallVector<Value> stateOperands, newStates;
};

// Why `scan` cannot become a sequence op, or success with `m` filled in.
LogicalResult match(ScanOp scan, Match &m, std::string &why) {
  auto refuse = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  if (scan->hasAttr(kSavedCarries))
    return refuse("it saves its carried values for a gradient");
  if (scan.getXs().size() != 1)
    return refuse("it does not read exactly one sequence");
  if (scan.getAxis() != 1 || cast<RankedTensorType>(scan.getXs()[0].getType()).getRank() != 3)
    return refuse("its sequence is not [B, T, I] scanned along axis 1");
  Block &body = scan.getBodyBlock();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return refuse("its body is not a single cell");
  Operation *cell = &body.front();
  Value x = scan.getStepArgs()[0];
  auto carries = scan.getCarryArgs();
  if (auto rnn = dyn_cast<RnnCellOp>(cell)) {
    if (rnn.getInput() != x)
      return refuse("the cell does not read the step input");
    m.stateOperands = {rnn.getHidden()};
    m.newStates = {rnn.getResult()};
  } else if (auto gru = dyn_cast<GruCellOp>(cell)) {
    if (gru.getForm() != GruForm::pytorch)
      return refuse("oneDNN has no GRU of form '" + stringifyGruForm(gru.getForm()).str() + "'");
    if (gru.getInput() != x)
      return refuse("the cell does not read the step input");
    m.stateOperands = {gru.getHidden()};
    m.newStates = {gru.getResult()};
  } else if (auto lstm = dyn_cast<LstmCellOp>(cell)) {
    if (lstm.getWProj())
      return refuse("an LSTM projection with a bias has no oneDNN form");
    if (lstm.getWPeephole() && lstm.getPeepholeForm() == PeepholeForm::full)
      return refuse("oneDNN's LSTM has diagonal peepholes, not full matrices");
    if (lstm.getInput() != x)
      return refuse("the cell does not read the step input");
    m.stateOperands = {lstm.getHidden(), lstm.getCell()};
    m.newStates = {lstm.getNewHidden(), lstm.getNewCell()};
  } else {
    return refuse("'" + cell->getName().getStringRef() + "' is not a cell oneDNN implements");
  }
  // The state: exactly the carried values, each fed back from the matching new state.
  if (carries.size() != m.stateOperands.size())
    return refuse("it carries other values than the cell's state");
  auto yielded = body.getTerminator()->getOperands();
  for (auto [operand, next] : llvm::zip(m.stateOperands, m.newStates)) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() >= carries.size() ||
        yielded[arg.getArgNumber()] != next)
      return refuse("the cell's new state is not what it carries to the next step");
  }
  // Per-step outputs: only the new hidden state (oneDNN's dst_layer).
  for (Value y : yielded.drop_front(carries.size()))
    if (y != m.newStates[0])
      return refuse("a per-step output is not the cell's new hidden state");
  // The weights: loop-invariant.
  unsigned numStateOperands = isa<LstmCellOp>(cell) ? 3 : 2; // input, h[, c]
  for (Value w : cell->getOperands().drop_front(numStateOperands))
    if (!scan.getInvariant(w))
      return refuse("a weight of the cell changes from step to step");
  m.cell = cell;
  return success();
}

void fuse(ScanOp scan, const Match &m) {
  OpBuilder b(scan);
  Location loc = scan.getLoc();
  Value x = scan.getXs()[0];
  SmallVector<Value> inits;
  for (Value s : m.stateOperands)
    inits.push_back(scan.getInits()[cast<BlockArgument>(s).getArgNumber()]);
  unsigned numStateOperands = isa<LstmCellOp>(m.cell) ? 3 : 2;
  SmallVector<Value> operands{x};
  operands.append(inits);
  for (Value w : m.cell->getOperands().drop_front(numStateOperands))
    operands.push_back(scan.getInvariant(w));
  Operation *seq;
  if (isa<RnnCellOp>(m.cell))
    seq = b.create<RnnOp>(loc, operands);
  else if (isa<GruCellOp>(m.cell))
    seq = b.create<GruOp>(loc, operands);
  else
    seq = b.create<LstmOp>(loc, operands);
  if (scan.getReverse())
    seq->setAttr("reverse", b.getUnitAttr());
  // Final carries: the sequence op's final states in carry order; stacked outputs: outputs.
  for (auto [k, s] : llvm::enumerate(m.stateOperands))
    scan.getResult(cast<BlockArgument>(s).getArgNumber()).replaceAllUsesWith(seq->getResult(1 + k));
  for (Value stacked : scan.getStackedOutputs())
    stacked.replaceAllUsesWith(seq->getResult(0));
  scan.erase();
}

struct FuseRecurrence : mlir::attn::impl::AttnFuseRecurrenceBase<FuseRecurrence> {
  using AttnFuseRecurrenceBase::AttnFuseRecurrenceBase;
  void runOnOperation() override {
    SmallVector<ScanOp> scans;
    getOperation()->walk([&](ScanOp scan) { scans.push_back(scan); });
    for (ScanOp scan : scans) {
      Match m;
      std::string why;
      if (succeeded(match(scan, m, why)))
        fuse(scan, m);
      else if (remarks)
        scan.emitRemark("not fused: ") << why;
    }
  }
};
} // namespace
