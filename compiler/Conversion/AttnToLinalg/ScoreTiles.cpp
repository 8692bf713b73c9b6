// Tile functions for the flash kernels' score and mask regions (see ScoreTiles.h). Each is a
// private function whose two loops walk a tile of scores [rows, cols] (row stride ld), query
// i0 + r and key j0 + c, with the region inlined in the inner loop:
//
//   for r < rows:  i = i0 + r
//     for c < cols:  j = j0 + c,  x = t[r ld + c]
//       t[r ld + c] = f(x, i, j, captures)              score
//       t[r ld + c] = mask(i, j, captures) != 0          mask
//       ds[r ld + c] = ds != 0 ? X : 0,  dcap += ...     score_grad
//
// What a region computes from the positions only through i - j (T5's bucketed relative bias,
// ALiBi's slope * |i - j|) is the same along each diagonal of the tile: it is computed once per
// diagonal, rows + cols - 1 times, into a table before the loops, which read it (Diagonals).
#include "compiler/Conversion/AttnToLinalg/ScoreTiles.h"
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/ScoreEmitter.h"
#include "dialect/AttnOps.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {
MemRefType vectorType(MLIRContext *ctx) {
  return MemRefType::get({ShapedType::kDynamic}, Float32Type::get(ctx));
}

FunctionType tileType(MLIRContext *ctx, int memrefs) {
  SmallVector<Type> inputs(memrefs, vectorType(ctx));
  inputs.append(5, IntegerType::get(ctx, 64));
  return FunctionType::get(ctx, inputs, {});
}

// The tile function `name` of `type` after `op`'s module's last op, its body started.
func::FuncOp createTileFunction(OpBuilder &b, Operation *op, StringRef name, FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  b.setInsertionPointToEnd(module.getBody());
  auto f = b.create<func::FuncOp>(op->getLoc(), name, type);
  f.setPrivate();
  b.setInsertionPointToStart(f.addEntryBlock());
  return f;
}

// The loops over a tile, from the function's (ld, rows, cols, i0, j0) arguments.
struct Tile {
  OpBuilder &b;
  Location loc;
  Value ld, rows, cols, i0, j0; // index

  Tile(OpBuilder &b, Location loc, ValueRange args) : b(b), loc(loc) {
    Value *dims[] = {&ld, &rows, &cols, &i0, &j0};
    for (auto [dim, arg] : llvm::zip(dims, args))
      *dim = b.create<arith::IndexCastOp>(loc, b.getIndexType(), arg);
  }

  // A position as the f32 the regions take.
  Value position(Value base, Value offset) {
    Value at = b.create<arith::AddIOp>(loc, base, offset);
    Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), at);
    return b.create<arith::SIToFPOp>(loc, b.getF32Type(), i64);
  }

  // body(at, r, c, i, j, sums) for every element, carrying f32 `sums` (from `inits`) through
  // both loops; returns their final values.
  using Body = function_ref<SmallVector<Value>(Value at, Value r, Value c, Value i, Value j,
                                               ValueRange sums)>;
  SmallVector<Value> forEach(ValueRange inits, Body body) {
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    auto outer = b.create<scf::ForOp>(loc, zero, rows, one, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      startBody(outer);
      Value r = outer.getInductionVar();
      Value i = position(i0, r);
      Value rowStart = b.create<arith::MulIOp>(loc, r, ld);
      auto inner = b.create<scf::ForOp>(loc, zero, cols, one, outer.getRegionIterArgs());
      {
        OpBuilder::InsertionGuard guard(b);
        startBody(inner);
        Value c = inner.getInductionVar();
        Value at = b.create<arith::AddIOp>(loc, rowStart, c);
        yield(inner, body(at, r, c, i, position(j0, c), inner.getRegionIterArgs()));
      }
      yield(outer, inner.getResults());
    }
    return outer.getResults();
  }

  // A loop without carried values has its scf.yield already (the builder's), one with them
  // gets it here.
  void startBody(scf::ForOp loop) {
    Block *body = loop.getBody();
    if (loop.getNumRegionIterArgs() == 0)
      b.setInsertionPoint(body->getTerminator());
    else
      b.setInsertionPointToEnd(body);
  }
  void yield(scf::ForOp loop, ValueRange values) {
    if (loop.getNumRegionIterArgs() != 0)
      b.create<scf::YieldOp>(loc, values);
  }
};

// The values of a region that depend on the positions only through i - j, with constants and
// captures, that values of another kind use: each is the same along a diagonal of a tile, so it
// is tabulated per diagonal before the tile's loops and read in them. Index k = r - c + cols - 1
// holds diagonal i - j = i0 - j0 - (cols - 1) + k.
class Diagonals {
public:
  // i, j: the region's position arguments; invariants: its captures.
  Diagonals(Block &region, Value i, Value j, ValueRange invariants)
      : region(region), invariant(invariants.begin(), invariants.end()) {
    for (Operation &op : region.without_terminator()) {
      Value r = op.getResult(0);
      if (!score_region::isScalar(r.getType()) || isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
        continue;
      if (auto sub = dyn_cast<SubOp>(op); sub && sub.getLhs() == i && sub.getRhs() == j) {
        relative.insert(r);
        differences.push_back(r);
      } else if (isa<ConstantOp>(op)) {
        invariant.insert(r);
      } else if (llvm::all_of(op.getOperands(), [&](Value v) {
                   return relative.contains(v) || invariant.contains(v);
                 })) {
        bool readsRelative =
            llvm::any_of(op.getOperands(), [&](Value v) { return relative.contains(v); });
        (readsRelative ? relative : invariant).insert(r);
      }
    }
    // The roots: relative values something else reads (i - j alone is not worth a table).
    for (Operation &op : region.without_terminator()) {
      Value r = op.getResult(0);
      if (!relative.contains(r) || llvm::is_contained(differences, r))
        continue;
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            return user->getNumResults() == 0 || !relative.contains(user->getResult(0));
          }))
        roots.push_back(r);
    }
  }

  // Whether `v` depends on the positions only through i - j, or not on them at all.
  bool isRelative(Value v) const { return relative.contains(v); }
  bool isInvariant(Value v) const { return invariant.contains(v); }
  // Tabulates `v` too, as the region computes it with the arguments `tabulate` binds (without
  // binding it in the loops): a value that is a function of i - j under those bindings.
  void tabulateAlso(Value v) {
    if (!llvm::is_contained(extras, v))
      extras.push_back(v);
  }

  // Before the loops of `tile`: one table per root, rows + cols - 1 long (`span`), filled by
  // the region emitted with i - j = each diagonal (`bind` binds its other arguments for the
  // emitter), and, `withSums`, one of zeros (`sums`: for sums per diagonal).
  void tabulate(OpBuilder &b, Location loc, const Tile &tile,
                function_ref<void(ScoreEmitter &)> bind, bool withSums = false) {
    if (roots.empty() && extras.empty() && !withSums)
      return;
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    span = b.create<arith::SubIOp>(loc, b.create<arith::AddIOp>(loc, tile.rows, tile.cols), one);
    Value n = b.create<arith::MaxSIOp>(loc, span, one);
    auto newTable = [&] {
      return b.create<memref::AllocaOp>(
          loc, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()), ValueRange{n});
    };
    for (size_t k = 0; k < roots.size() + extras.size(); ++k)
      tables.push_back(newTable());
    if (withSums)
      sumsTable = newTable();
    // diagonal(k) = i0 - j0 - cols + 1 + k
    Value first = b.create<arith::AddIOp>(
        loc,
        b.create<arith::SubIOp>(loc, tile.i0, b.create<arith::AddIOp>(loc, tile.j0, tile.cols)),
        one);
    auto loop = b.create<scf::ForOp>(loc, zero, span, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value k = loop.getInductionVar();
    if (withSums)
      b.create<memref::StoreOp>(loc, cstF(b, loc, 0.0f), sumsTable, ValueRange{k});
    Value d =
        b.create<arith::IndexCastOp>(loc, b.getI64Type(), b.create<arith::AddIOp>(loc, first, k));
    Value dF = b.create<arith::SIToFPOp>(loc, b.getF32Type(), d);
    ScoreEmitter e(b, loc, /*width=*/1);
    bind(e);
    for (Value difference : differences)
      e.bindScalar(difference, dF);
    e.emitScalars(region);
    for (auto [value, table] : llvm::zip(llvm::concat<Value>(roots, extras), tables))
      b.create<memref::StoreOp>(loc, e.scalar(value), table, ValueRange{k});
  }

  // The table index of row r and column c of `tile`.
  static Value index(OpBuilder &b, Location loc, const Tile &tile, Value r, Value c) {
    Value last = b.create<arith::SubIOp>(loc, tile.cols, b.create<arith::ConstantIndexOp>(loc, 1));
    return b.create<arith::AddIOp>(loc, b.create<arith::SubIOp>(loc, r, c), last);
  }

  // In the loops, at row r and column c of `tile`: the tabulated values, bound for `e` (which
  // then leaves out the ops that compute them).
  void bind(ScoreEmitter &e, OpBuilder &b, Location loc, const Tile &tile, Value r, Value c) const {
    if (roots.empty())
      return;
    Value k = index(b, loc, tile, r, c);
    for (auto [root, table] : llvm::zip(roots, tables))
      e.bindScalar(root, b.create<memref::LoadOp>(loc, table, ValueRange{k}));
  }

  // After tabulate: the table of `v` (tabulateAlso), the table of zeros, and their length.
  Value table(Value v) const {
    return tables[roots.size() + (llvm::find(extras, v) - extras.begin())];
  }
  Value sums() const { return sumsTable; }
  Value length() const { return span; }

private:
  Block &region;
  llvm::DenseSet<Value> relative, invariant;
  SmallVector<Value> differences;                       // the region's i - j
  SmallVector<Value> roots, extras, tables;             // tables: the roots', then the extras'
  Value sumsTable, span;
};

// Binds the arguments of `region` from `first` on to the captures' f32s.
void bindCaptures(ScoreEmitter &e, Block &region, unsigned first, ArrayRef<Value> captures) {
  for (auto [n, value] : llvm::enumerate(captures))
    e.bindScalar(region.getArgument(first + n), value);
}

// The `count` captures of a memref<?xf32>, loaded once, before the loops.
SmallVector<Value> loadCaptures(OpBuilder &b, Location loc, Value memref, unsigned count) {
  SmallVector<Value> values;
  for (unsigned n = 0; n < count; ++n)
    values.push_back(b.create<memref::LoadOp>(
        loc, memref, ValueRange{b.create<arith::ConstantIndexOp>(loc, n)}));
  return values;
}

Value yielded(Block &region, unsigned n) {
  return cast<YieldOp>(region.getTerminator()).getValues()[n];
}
} // namespace

FunctionType mlir::attn::linalg_lowering::tileFunctionType(MLIRContext *ctx) {
  return tileType(ctx, 2);
}

FunctionType mlir::attn::linalg_lowering::tileGradFunctionType(MLIRContext *ctx) {
  return tileType(ctx, 4);
}

func::FuncOp mlir::attn::linalg_lowering::defineScoreTile(OpBuilder &b, Operation *op, Block &score,
                                                          Operation *dot, StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = op->getLoc();
  func::FuncOp f = createTileFunction(b, op, name, tileFunctionType(b.getContext()));
  Value t = f.getArgument(0);
  SmallVector<Value> captures = loadCaptures(b, loc, f.getArgument(1), score.getNumArguments() - 4);
  Tile tile(b, loc, f.getArguments().drop_front(2));
  Diagonals diagonals(score, score.getArgument(2), score.getArgument(3),
                      score.getArguments().drop_front(4));
  Value none = cstF(b, loc, 0.0f);
  diagonals.tabulate(b, loc, tile, [&](ScoreEmitter &e) {
    e.bindScalar(dot->getResult(0), none);
    e.bindScalar(score.getArgument(2), none);
    e.bindScalar(score.getArgument(3), none);
    bindCaptures(e, score, 4, captures);
  });
  tile.forEach({}, [&](Value at, Value r, Value c, Value i, Value j, ValueRange) {
    ScoreEmitter e(b, loc, /*width=*/1);
    e.bindScalar(dot->getResult(0), b.create<memref::LoadOp>(loc, t, at));
    e.bindScalar(score.getArgument(2), i);
    e.bindScalar(score.getArgument(3), j);
    bindCaptures(e, score, 4, captures);
    diagonals.bind(e, b, loc, tile, r, c);
    e.emitScalars(score);
    b.create<memref::StoreOp>(loc, e.scalar(yielded(score, 0)), t, at);
    return SmallVector<Value>{};
  });
  b.create<func::ReturnOp>(loc);
  return f;
}

func::FuncOp mlir::attn::linalg_lowering::defineMaskTile(OpBuilder &b, Operation *op, Block &mask,
                                                         StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = op->getLoc();
  func::FuncOp f = createTileFunction(b, op, name, tileFunctionType(b.getContext()));
  Value t = f.getArgument(0);
  SmallVector<Value> captures = loadCaptures(b, loc, f.getArgument(1), mask.getNumArguments() - 2);
  Tile tile(b, loc, f.getArguments().drop_front(2));
  Diagonals diagonals(mask, mask.getArgument(0), mask.getArgument(1),
                      mask.getArguments().drop_front(2));
  Value none = cstF(b, loc, 0.0f);
  diagonals.tabulate(b, loc, tile, [&](ScoreEmitter &e) {
    e.bindScalar(mask.getArgument(0), none);
    e.bindScalar(mask.getArgument(1), none);
    bindCaptures(e, mask, 2, captures);
  });
  tile.forEach({}, [&](Value at, Value r, Value c, Value i, Value j, ValueRange) {
    ScoreEmitter e(b, loc, /*width=*/1);
    e.bindScalar(mask.getArgument(0), i);
    e.bindScalar(mask.getArgument(1), j);
    bindCaptures(e, mask, 2, captures);
    diagonals.bind(e, b, loc, tile, r, c);
    e.emitScalars(mask);
    Value open = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, e.scalar(yielded(mask, 0)),
                                         cstF(b, loc, 0.0f));
    b.create<memref::StoreOp>(
        loc, b.create<arith::SelectOp>(loc, open, cstF(b, loc, 1.0f), cstF(b, loc, 0.0f)), t, at);
    return SmallVector<Value>{};
  });
  b.create<func::ReturnOp>(loc);
  return f;
}

func::FuncOp mlir::attn::linalg_lowering::defineScoreGradTile(OpBuilder &b, Operation *op,
                                                              Block &grad, Operation *dot,
                                                              Value cotangent, StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = op->getLoc();
  func::FuncOp f = createTileFunction(b, op, name, tileGradFunctionType(b.getContext()));
  Value dots = f.getArgument(0), ds = f.getArgument(1), dCaptures = f.getArgument(3);
  // (q, k, i, j, captures..., ds)
  unsigned numCaptures = grad.getNumArguments() - 5;
  SmallVector<Value> captures = loadCaptures(b, loc, f.getArgument(2), numCaptures);
  Tile tile(b, loc, f.getArguments().drop_front(4));
  Value zero = cstF(b, loc, 0.0f);
  Value dsArg = grad.getArgument(4 + numCaptures);
  Diagonals diagonals(grad, grad.getArgument(2), grad.getArgument(3),
                      grad.getArguments().slice(4, numCaptures));
  // The captures whose gradient is ds p(i - j) (ALiBi's slope: -ds (i - j); a table's column:
  // ds times its steps): the loops sum ds per diagonal, and each such gradient is
  // sum_k sums[k] p(k) after them, one multiply-add per diagonal instead of one per score.
  // p(k) is the gradient with ds = 1, tabulated with the other diagonals' values.
  auto scalesWith = [&](Value v) { return diagonals.isRelative(v) || diagonals.isInvariant(v); };
  std::function<bool(Value)> linearInDs = [&](Value v) {
    if (v == dsArg)
      return true;
    Operation *op = v.getDefiningOp();
    if (isa_and_nonnull<NegOp, ReshapeOp>(op))
      return score_region::isScalar(v.getType()) && linearInDs(op->getOperand(0));
    if (isa_and_nonnull<AddOp, SubOp>(op))
      return linearInDs(op->getOperand(0)) && linearInDs(op->getOperand(1));
    if (isa_and_nonnull<MulOp>(op))
      return (linearInDs(op->getOperand(0)) && scalesWith(op->getOperand(1))) ||
             (scalesWith(op->getOperand(0)) && linearInDs(op->getOperand(1)));
    if (isa_and_nonnull<DivOp>(op))
      return linearInDs(op->getOperand(0)) && scalesWith(op->getOperand(1));
    return false;
  };
  SmallVector<unsigned> perDiagonal;
  for (unsigned n = 0; n < numCaptures; ++n)
    if (linearInDs(yielded(grad, 2 + n))) {
      diagonals.tabulateAlso(yielded(grad, 2 + n));
      perDiagonal.push_back(n);
    }
  diagonals.tabulate(
      b, loc, tile,
      [&](ScoreEmitter &e) {
        if (dot)
          e.bindScalar(dot->getResult(0), zero);
        e.bindScalar(grad.getArgument(2), zero);
        e.bindScalar(grad.getArgument(3), zero);
        bindCaptures(e, grad, 4, captures);
        e.bindScalar(dsArg, cstF(b, loc, 1.0f));
      },
      /*withSums=*/!perDiagonal.empty());
  auto isPerDiagonal = [&](unsigned n) { return llvm::is_contained(perDiagonal, n); };
  SmallVector<Value> inits(numCaptures, zero);
  SmallVector<Value> sums =
      tile.forEach(inits, [&](Value at, Value r, Value c, Value i, Value j, ValueRange acc) {
        ScoreEmitter e(b, loc, /*width=*/1);
        Value g = b.create<memref::LoadOp>(loc, ds, at);
        if (dot)
          e.bindScalar(dot->getResult(0), b.create<memref::LoadOp>(loc, dots, at));
        e.bindScalar(grad.getArgument(2), i);
        e.bindScalar(grad.getArgument(3), j);
        bindCaptures(e, grad, 4, captures);
        e.bindScalar(dsArg, g);
        diagonals.bind(e, b, loc, tile, r, c);
        e.emitScalars(grad);
        Value live = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, g, zero);
        auto where = [&](Value x) { return b.create<arith::SelectOp>(loc, live, x, zero); };
        b.create<memref::StoreOp>(loc, where(e.scalar(cotangent)), ds, at);
        if (!perDiagonal.empty()) {
          Value k = Diagonals::index(b, loc, tile, r, c);
          Value sumsTable = diagonals.sums();
          Value old = b.create<memref::LoadOp>(loc, sumsTable, ValueRange{k});
          b.create<memref::StoreOp>(loc, b.create<arith::AddFOp>(loc, old, where(g)), sumsTable,
                                    ValueRange{k});
        }
        SmallVector<Value> next;
        for (unsigned n = 0; n < numCaptures; ++n)
          next.push_back(isPerDiagonal(n)
                             ? acc[n]
                             : sumBody(b, loc, {acc[n], where(e.scalar(yielded(grad, 2 + n)))}));
        return next;
      });
  if (!perDiagonal.empty()) {
    // sum_k ds_k p(k), where ds_k != 0 (a diagonal of hidden keys has no gradient, whatever p)
    Value c0 = b.create<arith::ConstantIndexOp>(loc, 0),
          c1 = b.create<arith::ConstantIndexOp>(loc, 1);
    SmallVector<Value> totals(perDiagonal.size(), zero);
    auto loop = b.create<scf::ForOp>(loc, c0, diagonals.length(), c1, totals);
    {
      OpBuilder::InsertionGuard inside(b);
      b.setInsertionPointToEnd(loop.getBody());
      Value k = loop.getInductionVar();
      Value s = b.create<memref::LoadOp>(loc, diagonals.sums(), ValueRange{k});
      Value live = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, s, zero);
      SmallVector<Value> next;
      for (auto [n, total] : llvm::zip(perDiagonal, loop.getRegionIterArgs())) {
        Value p =
            b.create<memref::LoadOp>(loc, diagonals.table(yielded(grad, 2 + n)), ValueRange{k});
        Value term = b.create<arith::SelectOp>(loc, live, b.create<arith::MulFOp>(loc, s, p), zero);
        next.push_back(sumBody(b, loc, {total, term}));
      }
      b.create<scf::YieldOp>(loc, next);
    }
    for (auto [n, total] : llvm::zip(perDiagonal, loop.getResults()))
      sums[n] = total;
  }
  for (auto [n, sum] : llvm::enumerate(sums)) {
    Value at = b.create<arith::ConstantIndexOp>(loc, n);
    Value old = b.create<memref::LoadOp>(loc, dCaptures, at);
    b.create<memref::StoreOp>(loc, b.create<arith::AddFOp>(loc, old, sum), dCaptures, at);
  }
  b.create<func::ReturnOp>(loc);
  return f;
}
