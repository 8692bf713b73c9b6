// Tile functions for the flash kernels' score and mask regions (see ScoreTiles.h). Each is a
// private function whose two loops walk a tile of scores [rows, cols] (row stride ld), query
// i0 + r and key j0 + c, with the region inlined in the inner loop:
//
//   for r < rows:  i = i0 + r
//     for c < cols:  j = j0 + c,  x = t[r ld + c]
//       t[r ld + c] = f(x, i, j, captures)              score
//       t[r ld + c] = mask(i, j, captures) != 0          mask
//       ds[r ld + c] = ds != 0 ? X : 0,  dcap += ...     score_grad
#include "compiler/Conversion/AttnToLinalg/ScoreTiles.h"
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/ScoreEmitter.h"
#include "dialect/AttnOps.h"

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

  // body(at, i, j, sums) for every element, carrying f32 `sums` (from `inits`) through both
  // loops; returns their final values.
  using Body = function_ref<SmallVector<Value>(Value at, Value i, Value j, ValueRange sums)>;
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
        yield(inner, body(at, i, position(j0, c), inner.getRegionIterArgs()));
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
  tile.forEach({}, [&](Value at, Value i, Value j, ValueRange) {
    ScoreEmitter e(b, loc, /*width=*/1);
    e.bindScalar(dot->getResult(0), b.create<memref::LoadOp>(loc, t, at));
    e.bindScalar(score.getArgument(2), i);
    e.bindScalar(score.getArgument(3), j);
    bindCaptures(e, score, 4, captures);
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
  tile.forEach({}, [&](Value at, Value i, Value j, ValueRange) {
    ScoreEmitter e(b, loc, /*width=*/1);
    e.bindScalar(mask.getArgument(0), i);
    e.bindScalar(mask.getArgument(1), j);
    bindCaptures(e, mask, 2, captures);
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
  SmallVector<Value> inits(numCaptures, zero);
  SmallVector<Value> sums = tile.forEach(inits, [&](Value at, Value i, Value j, ValueRange acc) {
    ScoreEmitter e(b, loc, /*width=*/1);
    Value g = b.create<memref::LoadOp>(loc, ds, at);
    if (dot)
      e.bindScalar(dot->getResult(0), b.create<memref::LoadOp>(loc, dots, at));
    e.bindScalar(grad.getArgument(2), i);
    e.bindScalar(grad.getArgument(3), j);
    bindCaptures(e, grad, 4, captures);
    e.bindScalar(grad.getArgument(4 + numCaptures), g);
    e.emitScalars(grad);
    Value live = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, g, zero);
    auto where = [&](Value x) { return b.create<arith::SelectOp>(loc, live, x, zero); };
    b.create<memref::StoreOp>(loc, where(e.scalar(cotangent)), ds, at);
    SmallVector<Value> next;
    for (unsigned n = 0; n < numCaptures; ++n)
      next.push_back(sumBody(b, loc, {acc[n], where(e.scalar(yielded(grad, 2 + n)))}));
    return next;
  });
  for (auto [n, sum] : llvm::enumerate(sums)) {
    Value at = b.create<arith::ConstantIndexOp>(loc, n);
    Value old = b.create<memref::LoadOp>(loc, dCaptures, at);
    b.create<memref::StoreOp>(loc, b.create<arith::AddFOp>(loc, old, sum), dCaptures, at);
  }
  b.create<func::ReturnOp>(loc);
  return f;
}
