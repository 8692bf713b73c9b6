// attn-fuse-recurrence: an attn.scan whose body is exactly one cell that oneDNN implements,
// feeding its new state back (or, under a scanned mask, its blend with the old state), becomes
// the sequence op (attn.rnn / gru / lstm, with the mask). Everything else stays a scan. An
// LSTM projection's bias, which oneDNN lacks, becomes a shift of the state around the op.
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
  // The masked form: the scan's mask sequence [B, T, 1], else null.
  Value mask;
};

// The frontends' masked step s + m * (n - s) (each product and sum in either order): the
// step value m that `kept` blends `next` into `state` with, or null.
Value blendMask(Value kept, Value state, Value next) {
  auto add = kept.getDefiningOp<AddOp>();
  if (!add)
    return {};
  Value other = add.getLhs() == state   ? add.getRhs()
                : add.getRhs() == state ? add.getLhs()
                                        : Value();
  auto mul = other ? other.getDefiningOp<MulOp>() : MulOp();
  if (!mul)
    return {};
  for (auto [m, d] : {std::pair{mul.getLhs(), mul.getRhs()}, {mul.getRhs(), mul.getLhs()}}) {
    auto sub = d.getDefiningOp<SubOp>();
    if (sub && sub.getLhs() == next && sub.getRhs() == state)
      return m;
  }
  return {};
}

// Why `scan` cannot become a sequence op, or success with `m` filled in.
LogicalResult match(ScanOp scan, Match &m, std::string &why) {
  auto refuse = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  if (scan->hasAttr(kSavedCarries))
    return refuse("it saves its carried values for a gradient");
  if (scan.getXs().empty() || scan.getXs().size() > 2)
    return refuse("it does not read one sequence (and a mask)");
  if (scan.getAxis() != 1 || cast<RankedTensorType>(scan.getXs()[0].getType()).getRank() != 3)
    return refuse("its sequence is not [B, T, I] scanned along axis 1");
  Block &body = scan.getBodyBlock();
  bool masked = scan.getXs().size() == 2;
  size_t numOps = std::distance(body.without_terminator().begin(), body.without_terminator().end());
  if (numOps == 0 || (!masked && numOps != 1))
    return refuse("its body is not a single cell");
  Operation *cell = &body.front();
  auto carries = scan.getCarryArgs();
  Value input;
  if (auto rnn = dyn_cast<RnnCellOp>(cell)) {
    input = rnn.getInput();
    m.stateOperands = {rnn.getHidden()};
    m.newStates = {rnn.getResult()};
  } else if (auto gru = dyn_cast<GruCellOp>(cell)) {
    if (gru.getForm() != GruForm::pytorch)
      return refuse("oneDNN has no GRU of form '" + stringifyGruForm(gru.getForm()).str() + "'");
    input = gru.getInput();
    m.stateOperands = {gru.getHidden()};
    m.newStates = {gru.getResult()};
  } else if (auto lstm = dyn_cast<LstmCellOp>(cell)) {
    if (lstm.getWPeephole() && lstm.getPeepholeForm() == PeepholeForm::full)
      return refuse("oneDNN's LSTM has diagonal peepholes, not full matrices");
    input = lstm.getInput();
    m.stateOperands = {lstm.getHidden(), lstm.getCell()};
    m.newStates = {lstm.getNewHidden(), lstm.getNewCell()};
  } else if (numOps > 1) {
    return refuse("its body is not a single cell");
  } else {
    return refuse("'" + cell->getName().getStringRef() + "' is not a cell oneDNN implements");
  }
  auto steps = scan.getStepArgs();
  if (input != steps[0] && (steps.size() < 2 || input != steps[1]))
    return refuse("the cell does not read the step input");
  if (masked && numOps != 1 + 3 * m.newStates.size())
    return refuse("its body is not a single cell and the mask's blend of its state");
  // The state: exactly the carried values, each fed back from the matching new state (or,
  // masked, from its blend with the old state under the other step value).
  if (carries.size() != m.stateOperands.size())
    return refuse("it carries other values than the cell's state");
  auto yielded = body.getTerminator()->getOperands();
  Value stepMask = masked ? (input == steps[0] ? steps[1] : steps[0]) : Value();
  for (auto [operand, next] : llvm::zip(m.stateOperands, m.newStates)) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() >= carries.size())
      return refuse("the cell's state is not what the scan carries");
    Value fed = yielded[arg.getArgNumber()];
    if (masked ? blendMask(fed, arg, next) != stepMask : fed != next)
      return refuse(masked ? "its state is not s + m (cell - s) under the mask it scans"
                           : "the cell's new state is not what it carries to the next step");
  }
  if (masked) {
    auto t = cast<RankedTensorType>(stepMask.getType());
    if (t.getRank() != 2 || t.getShape()[1] != 1)
      return refuse("its mask is not one value per row [B, 1]");
    m.mask = scan.getXs()[cast<BlockArgument>(stepMask).getArgNumber() - carries.size()];
  }
  // Per-step outputs: only the (kept) hidden state, oneDNN's dst_layer.
  Value hidden = yielded[cast<BlockArgument>(m.stateOperands[0]).getArgNumber()];
  for (Value y : yielded.drop_front(carries.size()))
    if (y != hidden)
      return refuse("a per-step output is not the cell's new hidden state");
  // The weights: loop-invariant.
  unsigned numStateOperands = isa<LstmCellOp>(cell) ? 3 : 2; // input, h[, c]
  for (Value w : cell->getOperands().drop_front(numStateOperands))
    if (!scan.getInvariant(w))
      return refuse("a weight of the cell changes from step to step");
  m.cell = cell;
  return success();
}

// The attn.lstm of a scan over `cell`: outputs, h_n, c_n. oneDNN's projection has no bias,
// so with one the layer runs on h' = h - b_proj, which the projection computes without it:
// the recurrent product h w_hh = h' w_hh + b_proj w_hh moves its constant part into the gate
// bias, and the results shift back.
SmallVector<Value> lstmLayer(OpBuilder &b, Location loc, ScanOp scan, LstmCellOp cell, Value x,
                             ArrayRef<Value> inits, Value mask, bool reverse) {
  auto invariant = [&](Value v) { return v ? scan.getInvariant(v) : Value(); };
  Value h0 = inits[0], wHh = invariant(cell.getWHh()), bias = invariant(cell.getBias());
  Value bProj = invariant(cell.getBProj());
  if (bProj) {
    auto t = cast<RankedTensorType>(bProj.getType()); // [P]
    Value row = b.create<ReshapeOp>(
        loc, RankedTensorType::get({1, t.getShape()[0]}, t.getElementType()), bProj);
    Value shift = b.create<MatmulOp>(loc, row, wHh); // [1, 4H]
    bias = b.create<AddOp>(loc, bias, b.create<ReshapeOp>(loc, bias.getType(), shift));
    h0 = b.create<SubOp>(loc, h0, bProj);
  }
  SmallVector<Value> results;
  llvm::append_range(results, b.create<LstmOp>(loc, x, h0, inits[1], invariant(cell.getWIh()), wHh,
                                               bias, invariant(cell.getWPeephole()),
                                               invariant(cell.getWProj()), mask, reverse,
                                               /*training=*/false, /*precision=*/nullptr)
                                  ->getResults());
  if (bProj)
    for (unsigned k : {0, 1}) // outputs, h_n
      results[k] = b.create<AddOp>(loc, results[k], bProj);
  return results;
}

void fuse(ScanOp scan, const Match &m) {
  OpBuilder b(scan);
  Location loc = scan.getLoc();
  Value x = scan.getXs()[m.mask && m.mask == scan.getXs()[0] ? 1 : 0];
  SmallVector<Value> inits;
  for (Value s : m.stateOperands)
    inits.push_back(scan.getInits()[cast<BlockArgument>(s).getArgNumber()]);
  unsigned numStateOperands = isa<LstmCellOp>(m.cell) ? 3 : 2;
  SmallVector<Value> weights;
  for (Value w : m.cell->getOperands().drop_front(numStateOperands))
    weights.push_back(scan.getInvariant(w));
  bool reverse = scan.getReverse();
  SmallVector<Value> results; // outputs, then the final states
  if (isa<RnnCellOp>(m.cell))
    llvm::append_range(results, b.create<RnnOp>(loc, x, inits[0], weights[0], weights[1],
                                                weights[2], m.mask, reverse, /*training=*/false,
                                                /*precision=*/nullptr)
                                    ->getResults());
  else if (isa<GruCellOp>(m.cell))
    llvm::append_range(results, b.create<GruOp>(loc, x, inits[0], weights[0], weights[1],
                                                weights[2], weights[3], m.mask, reverse,
                                                /*training=*/false, /*precision=*/nullptr)
                                    ->getResults());
  else
    results = lstmLayer(b, loc, scan, cast<LstmCellOp>(m.cell), x, inits, m.mask, reverse);
  // Final carries: the sequence op's final states in carry order; stacked outputs: outputs.
  for (auto [k, s] : llvm::enumerate(m.stateOperands))
    scan.getResult(cast<BlockArgument>(s).getArgNumber()).replaceAllUsesWith(results[1 + k]);
  for (Value stacked : scan.getStackedOutputs())
    stacked.replaceAllUsesWith(results[0]);
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
