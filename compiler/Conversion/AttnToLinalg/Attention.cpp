// The kernels of attn.fused_attention and attn.fused_attention_grad, generated for each op as
// a private function of memrefs (the runtime kernels' calling convention: the operands, then
// the results, every memref fully dynamic) whose loops run over the op's static shapes:
//
//   forward, per query row (b, h, i):
//     s_j = score(q_i, k_j, i, j)  for the allowed keys (others -inf)   -> row scratch [S]
//     m = max_j s_j,  e_j = exp(s_j - m),  l = sum_j e_j,  lse = m + log l
//     out_i = sum_j (e_j / l) g_j v_j    (g_j the Gaussian, or 1; weights_ij = e_j g_j / l)
//   backward, per query row, recomputing p_j = exp(s_j - lse_i) for the allowed keys:
//     da_j = d_out_i . v_j + d_weights_ij,  delta_i = d_out_i . out_i + sum_j a_j d_weights_ij
//                                                     - d_lse_i
//     d_v_j += a_j d_out_i,  ds_j = p_j (g_j da_j - delta_i),  then score_grad(ds_j) adds to
//     d_q_i, d_k_j and the captures' gradients (and the Gaussian to d_center_i)
//
// The score and score_grad regions are inlined by ScoreEmitter: row chains become one loop
// over d each. Memory beyond operands and results: one row of S scores. The loops are
// scalar code that LLVM vectorises (the d loops); they run on the calling thread.
//
// The GPU form (KernelForm::GpuLaunch, attn-to-cuda) computes the same sums in gpu.launch ops
// of one thread per row or element, so that nothing two threads write is shared:
//   forward: a thread per (query row, key) for the scores, in scratch [B H T, S]; a thread per
//     query row for its softmax, the weights written over the scores; a thread per output
//     element (b, h, i, d) for sum_j a_j v_jd;
//   backward: a thread per query row (delta_i kept [B H T], d_q_i, d_center_i, and its share
//     of the captures' gradients in a row of partials [B H T, N]), then a thread per key row
//     (b, h, j) over the queries that see it (d_k_j, d_v_j), then a thread per element of
//     each capture's gradient summing the partials in row order.
// d_q, d_k, d_v and d_center are the loop form's sums in its order; a capture's gradient is
// summed per query row first.
#include "compiler/Conversion/AttnToLinalg/Attention.h"
#include "compiler/Conversion/AttnToLinalg/Generics.h"
#include "compiler/Conversion/AttnToLinalg/ScoreEmitter.h"
#include "compiler/Conversion/Passes.h"
#include "dialect/ops/ScoreRegion.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::linalg_lowering;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
// Threads per block of the GPU form. Small: a decoder step has few rows (B H T), and small
// blocks spread them over more multiprocessors.
constexpr int64_t kRowsPerBlock = 64;

// Builds the body of one generated kernel: loads and stores on the operands' buffers, loops,
// the mask predicate, the Gaussian, and the inlined score regions.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  // The op's operands inside the kernel (as memrefs), by role.
  Value q, k, v, mask, center;
  SmallVector<Value> captures;      // memrefs
  SmallVector<bool> captureIsScalar;
  SmallVector<Value> captureScalar; // the f32 of a scalar capture (loadScalarCaptures)
  SmallVector<bool> capturePerHead; // [H], each head reading its element (loaded per row)
  bool onGpu = false;               // the GPU form: rows are threads of gpu.launch ops
  int64_t B = 0, H = 0, T = 0, S = 0, D = 0, Dv = 0;
  bool causal = false;
  std::optional<uint64_t> window;
  bool gaussian = false;
  Block *maskRegion = nullptr; // the op's mask region, when it has one

  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value f32(float v) { return cstF(b, loc, v); }
  Value load(Value m, ValueRange at) { return b.create<memref::LoadOp>(loc, m, at); }
  void store(Value x, Value m, ValueRange at) { b.create<memref::StoreOp>(loc, x, m, at); }
  void addTo(Value m, ValueRange at, Value x) {
    store(b.create<arith::AddFOp>(loc, load(m, at), x), m, at);
  }
  Value toF32(Value i) {
    Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), i);
    return b.create<arith::SIToFPOp>(loc, b.getF32Type(), i64);
  }
  // The index list of a scalar memref ([] or [1]).
  SmallVector<Value> scalarAt(Value m) {
    return cast<MemRefType>(m.getType()).getRank() == 0 ? SmallVector<Value>{}
                                                         : SmallVector<Value>{index(0)};
  }

  // for (iv = lo; iv < hi; ++iv) body(iv), the builder inside the loop while body runs.
  void loop(Value lo, Value hi, function_ref<void(Value)> body) {
    auto f = b.create<scf::ForOp>(loc, lo, hi, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(f.getBody()->getTerminator());
    body(f.getInductionVar());
  }
  // body(at, r) for every point `at` of `extents`, the builder inside while body runs: nested
  // loops (r null), or in the GPU form a launch of one thread per point, r its row-major
  // number, whose body loads the scalar captures itself (the host reads nothing).
  void forEachPoint(ArrayRef<int64_t> extents, function_ref<void(ValueRange, Value)> body) {
    if (!onGpu) {
      SmallVector<Value> at;
      std::function<void()> nest = [&] {
        if (at.size() == extents.size())
          return body(at, Value());
        loop(index(0), index(extents[at.size()]), [&](Value iv) {
          at.push_back(iv);
          nest();
          at.pop_back();
        });
      };
      return nest();
    }
    int64_t points = 1;
    for (int64_t n : extents)
      points *= n;
    Value one = index(1);
    // At least one block: CUDA refuses an empty grid (the guard idles the extra threads).
    int64_t blocks = std::max<int64_t>(1, (points + kRowsPerBlock - 1) / kRowsPerBlock);
    auto launch =
        b.create<gpu::LaunchOp>(loc, index(blocks), one, one, index(kRowsPerBlock), one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    b.setInsertionPoint(b.create<gpu::TerminatorOp>(loc));
    Value r = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, launch.getBlockIds().x, index(kRowsPerBlock)),
        launch.getThreadIds().x);
    when(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, r, index(points)), [&] {
      // The point's indices, the last varying fastest.
      SmallVector<Value> at(extents.size());
      Value rest = r;
      for (int64_t d = (int64_t)extents.size() - 1; d >= 0; --d) {
        at[d] = d == 0 ? rest : b.create<arith::RemUIOp>(loc, rest, index(extents[d]));
        if (d > 0)
          rest = b.create<arith::DivUIOp>(loc, rest, index(extents[d]));
      }
      loadScalarCaptures();
      body(at, r);
    });
  }
  // body(b, h, i, r) for every query row.
  void forEachQueryRow(function_ref<void(Value, Value, Value, Value)> body) {
    forEachPoint({B, H, T}, [&](ValueRange at, Value r) { body(at[0], at[1], at[2], r); });
  }
  // Query row (bb, hh, i)'s number: (bb H + hh) T + i.
  Value queryRow(Value bb, Value hh, Value i) {
    Value bh = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, bb, index(H)), hh);
    return b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, bh, index(T)), i);
  }
  // The f32 of each scalar capture, where the builder stands.
  void loadScalarCaptures() {
    for (auto [n, cap] : llvm::enumerate(captures))
      captureScalar[n] = captureIsScalar[n] ? load(cap, scalarAt(cap)) : Value();
  }
  // The row of `n` points of scratch a query row uses: [n] in the loop form, row r of
  // [B H T, n] in the GPU form; at(r, j) indexes it.
  Value rowScratch(int64_t n) {
    SmallVector<int64_t> shape{n};
    if (onGpu)
      shape.insert(shape.begin(), B * H * T);
    return b.create<memref::AllocOp>(loc, MemRefType::get(shape, b.getF32Type()),
                                     b.getI64IntegerAttr(64));
  }
  SmallVector<Value> at(Value r, Value j) {
    return onGpu ? SmallVector<Value>{r, j} : SmallVector<Value>{j};
  }
  // A loop with one f32 accumulator: acc = body(iv, acc), from `init`.
  Value fold(Value lo, Value hi, float init, function_ref<Value(Value, Value)> body) {
    auto f = b.create<scf::ForOp>(loc, lo, hi, index(1), ValueRange{f32(init)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(f.getBody());
    b.create<scf::YieldOp>(loc, body(f.getInductionVar(), f.getRegionIterArgs()[0]));
    return f.getResult(0);
  }
  // if (cond) body(), the builder inside while body runs.
  void when(Value cond, function_ref<void()> body) {
    auto op = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    body();
  }
  // sum_d x[at..., d] y[at2..., d] over the last dimension, of width n.
  Value dot(Value x, ValueRange xAt, Value y, ValueRange yAt, int64_t n) {
    return fold(index(0), index(n), 0.0f, [&](Value d, Value acc) {
      SmallVector<Value> xi(xAt), yi(yAt);
      xi.push_back(d);
      yi.push_back(d);
      Value prod = b.create<arith::MulFOp>(loc, load(x, xi), load(y, yi));
      return sumBody(b, loc, {acc, prod});
    });
  }

  // The keys query i may see end at i + S - T with `causal` (so the loop stops there).
  Value keyEnd(Value i) {
    return causal ? b.create<arith::AddIOp>(loc, i, index(S - T + 1)).getResult() : index(S);
  }
  // mask[bb, j] != 0, within the window around the centre: (W^2 + 1e-3) - (j - c)^2 > 0
  // as attn.local_window decides it (an integer centre keeps its edges), and the mask region
  // (with head hh's captures) nonzero.
  Value allowed(Value bb, Value hh, Value iF, Value jF, Value j, Value c) {
    Value ok = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, load(mask, {bb, j}),
                                       f32(0.0f));
    if (window) {
      Value dj = b.create<arith::SubFOp>(loc, jF, c);
      float w = (float)*window;
      Value room = b.create<arith::SubFOp>(loc, f32(w * w + 1e-3f),
                                           b.create<arith::MulFOp>(loc, dj, dj));
      Value inside = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, room, f32(0.0f));
      ok = b.create<arith::AndIOp>(loc, ok, inside);
    }
    if (maskRegion) {
      ScoreEmitter e(b, loc, D);
      e.bindScalar(maskRegion->getArgument(0), iF);
      e.bindScalar(maskRegion->getArgument(1), jF);
      bindCaptures(e, *maskRegion, 2, hh);
      e.emitScalars(*maskRegion);
      Value m = e.scalar(cast<YieldOp>(maskRegion->getTerminator()).getValues()[0]);
      ok = b.create<arith::AndIOp>(
          loc, ok, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, m, f32(0.0f)));
    }
    return ok;
  }
  float inverseTwoSigmaSquared() {
    double sigma = (double)*window / 2;
    return (float)(-1.0 / (2 * sigma * sigma));
  }
  // exp(-(j - c)^2 / (2 sigma^2)), sigma = window / 2, as attn.local_window computes it.
  Value gaussianAt(Value jF, Value c) {
    Value dj = b.create<arith::SubFOp>(loc, jF, c);
    Value sq = b.create<arith::MulFOp>(loc, dj, dj);
    return b.create<math::ExpOp>(loc, b.create<arith::MulFOp>(loc, sq, f32(inverseTwoSigmaSquared())));
  }

  // Binds a score region's arguments (q_i, k_j, i, j, captures..., and ds when given).
  void bind(ScoreEmitter &e, Block &region, Value bb, Value hh, Value i, Value j, Value iF,
            Value jF, Value ds = Value()) {
    e.bindRow(region.getArgument(0), [=, this](OpBuilder &, Location, Value d) {
      return load(q, {bb, hh, i, d});
    });
    e.bindRow(region.getArgument(1), [=, this](OpBuilder &, Location, Value d) {
      return load(k, {bb, hh, j, d});
    });
    e.bindScalar(region.getArgument(2), iF);
    e.bindScalar(region.getArgument(3), jF);
    bindCaptures(e, region, 4, hh);
    if (ds)
      e.bindScalar(region.getArgument(4 + captures.size()), ds);
  }
  // Binds the captures to a region's arguments from `first` on, for head hh.
  void bindCaptures(ScoreEmitter &e, Block &region, unsigned first, Value hh) {
    for (auto [n, cap] : llvm::enumerate(captures)) {
      Value arg = region.getArgument(first + n);
      if (capturePerHead[n])
        e.bindScalar(arg, load(cap, {hh}));
      else if (captureIsScalar[n])
        e.bindScalar(arg, captureScalar[n]);
      else
        e.bindRow(arg, [=, this](OpBuilder &, Location, Value d) { return load(cap, {d}); });
    }
  }

  Value score(Block &region, Value bb, Value hh, Value i, Value j, Value iF, Value jF) {
    ScoreEmitter e(b, loc, D);
    bind(e, region, bb, hh, i, j, iF, jF);
    e.emitScalars(region);
    return e.scalar(cast<YieldOp>(region.getTerminator()).getValues()[0]);
  }
};

// The private function `name` taking the op's operands and then its results as fully dynamic
// memrefs of their ranks, with an entry block.
func::FuncOp createKernel(OpBuilder &b, Operation *op, StringRef name) {
  auto module = op->getParentOfType<ModuleOp>();
  SmallVector<Type> types(op->getOperandTypes()), inputs;
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types) {
    int64_t rank = cast<RankedTensorType>(t).getRank();
    SmallVector<int64_t> dyn(rank, ShapedType::kDynamic);
    inputs.push_back(MemRefType::get(
        dyn, b.getF32Type(), StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, dyn)));
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto f = b.create<func::FuncOp>(op->getLoc(), name, b.getFunctionType(inputs, {}));
  f.setPrivate();
  f.addEntryBlock();
  return f;
}

// Creates the kernel `f` of `op` and starts its body: its operands' memrefs (mapped from the op's operands), the
// shapes and attributes, the scalar captures loaded once.
template <typename Op>
KernelBuilder startKernel(OpBuilder &b, Op op, StringRef name, KernelForm form, func::FuncOp &f,
                          IRMapping &memrefs) {
  Location loc = op.getLoc();
  f = createKernel(b, op, name);
  b.setInsertionPointToStart(&f.front());
  for (auto [operand, arg] : llvm::zip(op->getOperands(), f.getArguments()))
    memrefs.map(operand, arg);
  KernelBuilder kb{b, loc};
  kb.onGpu = form == KernelForm::GpuLaunch;
  kb.q = memrefs.lookup(op.getQuery());
  kb.k = memrefs.lookup(op.getKeys());
  kb.v = memrefs.lookup(op.getValues());
  kb.mask = memrefs.lookup(op.getKeyMask());
  kb.center = op.getCenter() ? memrefs.lookup(op.getCenter()) : Value();
  for (auto [n, c] : llvm::enumerate(op.getCaptures())) {
    kb.captures.push_back(memrefs.lookup(c));
    kb.capturePerHead.push_back(score_region::isPerHeadCapture(op, n));
    kb.captureIsScalar.push_back(score_region::isScalar(c.getType()));
  }
  kb.captureScalar.resize(kb.captures.size());
  // Once for the loop form; each thread loads its own in the GPU form.
  if (!kb.onGpu)
    kb.loadScalarCaptures();
  ArrayRef<int64_t> qs = cast<RankedTensorType>(op.getQuery().getType()).getShape();
  kb.B = qs[0];
  kb.H = qs[1];
  kb.T = qs[2];
  kb.D = qs[3];
  kb.S = cast<RankedTensorType>(op.getKeys().getType()).getShape()[2];
  kb.Dv = cast<RankedTensorType>(op.getValues().getType()).getShape()[3];
  kb.causal = op.getCausal();
  kb.window = op.getWindow();
  kb.gaussian = op.getGaussian();
  kb.maskRegion = op.getMask().empty() ? nullptr : &op.getMask().front();
  return kb;
}

// The kernel's memref of result `n` of `op`, zero-filled when the kernel adds into it.
Value resultBuffer(OpBuilder &b, func::FuncOp f, Operation *op, unsigned n, bool zero) {
  Value m = f.getArgument(op->getNumOperands() + n);
  if (zero)
    b.create<linalg::FillOp>(op->getLoc(), cstF(b, op->getLoc(), 0.0f), m);
  return m;
}

// Where the backward's sums of one (query i, key j) pair go: each null target is left out.
// The captures' gradients go to `dCaptures`, or, with `captureRow`, to that row of each
// capture's partials (`captureParts`, [rows, N]: element d of a row capture, element 0 of
// a scalar or per-head one).
struct PairTargets {
  Value dq, dk, dv, dCenter;
  ArrayRef<Value> dCaptures;
  Value captureRow;
  ArrayRef<Value> captureParts;
};
} // namespace

func::FuncOp mlir::attn::linalg_lowering::defineAttentionKernel(OpBuilder &b, FusedAttentionOp op,
                                                                StringRef name, KernelForm form) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = op.getLoc();
  func::FuncOp f;
  IRMapping memrefs;
  KernelBuilder kb = startKernel(b, op, name, form, f, memrefs);
  // The GPU form writes every element of the output; the loop form adds into it.
  Value out = resultBuffer(b, f, op, 0, /*zero=*/!kb.onGpu);
  Value lse = resultBuffer(b, f, op, 1, /*zero=*/false);
  Value weights = op.getWithWeights() ? resultBuffer(b, f, op, 2, /*zero=*/true) : Value();
  Value scratch = kb.rowScratch(kb.S);
  Block &score = op.getScoreBlock();
  // s_j for an allowed key, -inf for another.
  auto scoreOrInf = [&](Value bb, Value hh, Value i, Value j, Value iF, Value c) {
    Value jF = kb.toF32(j);
    auto pick = b.create<scf::IfOp>(loc, TypeRange{b.getF32Type()},
                                    kb.allowed(bb, hh, iF, jF, j, c), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pick.thenBlock());
    b.create<scf::YieldOp>(loc, kb.score(score, bb, hh, i, j, iF, jF));
    b.setInsertionPointToStart(pick.elseBlock());
    b.create<scf::YieldOp>(loc, kb.f32(-kInf));
    return pick.getResult(0);
  };
  // The softmax of row r's scores (in its scratch, [0, end)): e_j = exp(s_j - m) written over
  // them (0 for an excluded key, also when every key is: m = -inf), lse stored; returns 1 / l
  // (0 when no key is allowed).
  auto softmax = [&](Value bb, Value hh, Value i, Value r, Value end) {
    Value m = kb.fold(kb.index(0), end, -kInf, [&](Value j, Value acc) {
      return b.create<arith::MaximumFOp>(loc, acc, kb.load(scratch, kb.at(r, j))).getResult();
    });
    Value l = kb.fold(kb.index(0), end, 0.0f, [&](Value j, Value acc) {
      Value s = kb.load(scratch, kb.at(r, j));
      Value excluded = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, s, kb.f32(-kInf));
      Value e =
          b.create<arith::SelectOp>(loc, excluded, kb.f32(0.0f),
                                    b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, s, m)));
      kb.store(e, scratch, kb.at(r, j));
      return b.create<arith::AddFOp>(loc, acc, e).getResult();
    });
    Value any = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, l, kb.f32(0.0f));
    Value logSum = b.create<arith::AddFOp>(loc, m, b.create<math::LogOp>(loc, l));
    kb.store(b.create<arith::SelectOp>(loc, any, logSum, kb.f32(0.0f)), lse, {bb, hh, i});
    return b
        .create<arith::SelectOp>(loc, any, b.create<arith::DivFOp>(loc, kb.f32(1.0f), l),
                                 kb.f32(0.0f))
        .getResult();
  };
  // a_j = e_j / l (times the Gaussian), key j's weight.
  auto weightOf = [&](Value e, Value inv, Value j, Value c) {
    Value a = b.create<arith::MulFOp>(loc, e, inv);
    if (kb.gaussian)
      a = b.create<arith::MulFOp>(loc, a, kb.gaussianAt(kb.toF32(j), c));
    return a;
  };
  auto centerOf = [&](Value bb, Value hh, Value i) {
    return kb.center ? kb.load(kb.center, {bb, hh, i}) : Value();
  };

  if (!kb.onGpu) {
    // Per query row, in one pass: scores, softmax, out_i = sum_j a_j v_j (keys of weight 0
    // skipped).
    kb.forEachQueryRow([&](Value bb, Value hh, Value i, Value r) {
      Value iF = kb.toF32(i), c = centerOf(bb, hh, i), end = kb.keyEnd(i);
      kb.loop(kb.index(0), end,
              [&](Value j) { kb.store(scoreOrInf(bb, hh, i, j, iF, c), scratch, kb.at(r, j)); });
      Value inv = softmax(bb, hh, i, r, end);
      kb.loop(kb.index(0), end, [&](Value j) {
        Value a = weightOf(kb.load(scratch, kb.at(r, j)), inv, j, c);
        if (weights)
          kb.store(a, weights, {bb, hh, i, j});
        Value nonzero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, a, kb.f32(0.0f));
        kb.when(nonzero, [&] {
          kb.loop(kb.index(0), kb.index(kb.Dv), [&](Value d) {
            kb.addTo(out, {bb, hh, i, d},
                     b.create<arith::MulFOp>(loc, a, kb.load(kb.v, {bb, hh, j, d})));
          });
        });
      });
    });
    b.create<func::ReturnOp>(loc);
    return f;
  }

  // The GPU form, the same sums in three launches, so that a decoder step's few query rows
  // (B of them) still fill the GPU: a thread per (query row, key) for the scores, a thread per
  // query row for the softmax (the weights over the scores), a thread per output element.
  kb.forEachPoint({kb.B, kb.H, kb.T, kb.S}, [&](ValueRange at, Value) {
    Value bb = at[0], hh = at[1], i = at[2], j = at[3];
    Value seen = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, j, kb.keyEnd(i));
    kb.when(seen, [&] {
      Value s = scoreOrInf(bb, hh, i, j, kb.toF32(i), centerOf(bb, hh, i));
      kb.store(s, scratch, {kb.queryRow(bb, hh, i), j});
    });
  });
  kb.forEachQueryRow([&](Value bb, Value hh, Value i, Value r) {
    Value end = kb.keyEnd(i), c = centerOf(bb, hh, i);
    Value inv = softmax(bb, hh, i, r, end);
    kb.loop(kb.index(0), end, [&](Value j) {
      Value a = weightOf(kb.load(scratch, {r, j}), inv, j, c);
      kb.store(a, scratch, {r, j});
      if (weights)
        kb.store(a, weights, {bb, hh, i, j});
    });
  });
  kb.forEachPoint({kb.B, kb.H, kb.T, kb.Dv}, [&](ValueRange at, Value) {
    Value bb = at[0], hh = at[1], i = at[2], d = at[3];
    Value r = kb.queryRow(bb, hh, i);
    Value sum = kb.fold(kb.index(0), kb.keyEnd(i), 0.0f, [&](Value j, Value acc) {
      Value a = kb.load(scratch, {r, j});
      Value nonzero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, a, kb.f32(0.0f));
      Value added = b.create<arith::AddFOp>(
          loc, acc, b.create<arith::MulFOp>(loc, a, kb.load(kb.v, {bb, hh, j, d})));
      return b.create<arith::SelectOp>(loc, nonzero, added, acc).getResult();
    });
    kb.store(sum, out, {bb, hh, i, d});
  });
  b.create<func::ReturnOp>(loc);
  return f;
}

func::FuncOp mlir::attn::linalg_lowering::defineAttentionGradKernel(OpBuilder &b,
                                                                    FusedAttentionGradOp op,
                                                                    StringRef name,
                                                                    KernelForm form) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = op.getLoc();
  func::FuncOp f;
  IRMapping memrefs;
  KernelBuilder kb = startKernel(b, op, name, form, f, memrefs);
  Value out = memrefs.lookup(op.getOutput()), lse = memrefs.lookup(op.getLse());
  Value dOut = memrefs.lookup(op.getDOutput()), dLse = memrefs.lookup(op.getDLse());
  Value weights = op.getWeights() ? memrefs.lookup(op.getWeights()) : Value();
  Value dWeights = op.getDWeights() ? memrefs.lookup(op.getDWeights()) : Value();
  SmallVector<Value> grads;
  for (unsigned n = 0; n < op->getNumResults(); ++n)
    grads.push_back(resultBuffer(b, f, op, n, /*zero=*/true));
  Value dq = grads[0], dk = grads[1], dv = grads[2];
  Value dCenter = op.getCenter() ? grads[3] : Value();
  ArrayRef<Value> dCaptures = ArrayRef<Value>(grads).drop_front(op.getCenter() ? 4 : 3);
  Block &score = op.getScore().front(), &scoreGrad = op.getScoreGrad().front();
  auto gradYields = cast<YieldOp>(scoreGrad.getTerminator()).getValues();

  // delta_i = d_out_i . out_i - d_lse_i (+ weights_i . d_weights_i).
  auto deltaOf = [&](Value bb, Value hh, Value i) {
    Value delta = b.create<arith::SubFOp>(loc, kb.dot(dOut, {bb, hh, i}, out, {bb, hh, i}, kb.Dv),
                                          kb.load(dLse, {bb, hh, i}));
    if (weights)
      delta = b.create<arith::AddFOp>(loc, delta,
                                      kb.dot(weights, {bb, hh, i}, dWeights, {bb, hh, i}, kb.S));
    return delta;
  };
  // The pair (i, j) of row (bb, hh), j a key i may see (at most keyEnd(i)): if allowed, its
  // shares of the gradients `to` asks for.
  auto addPair = [&](Value bb, Value hh, Value i, Value j, Value delta, const PairTargets &to) {
    Value iF = kb.toF32(i), jF = kb.toF32(j);
    Value c = kb.center ? kb.load(kb.center, {bb, hh, i}) : Value();
    kb.when(kb.allowed(bb, hh, iF, jF, j, c), [&] {
      Value s = kb.score(score, bb, hh, i, j, iF, jF);
      Value p =
          b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, s, kb.load(lse, {bb, hh, i})));
      Value g = kb.gaussian ? kb.gaussianAt(jF, c) : kb.f32(1.0f);
      Value a = b.create<arith::MulFOp>(loc, p, g);
      Value da = kb.dot(dOut, {bb, hh, i}, kb.v, {bb, hh, j}, kb.Dv);
      if (dWeights)
        da = b.create<arith::AddFOp>(loc, da, kb.load(dWeights, {bb, hh, i, j}));
      if (to.dv)
        kb.loop(kb.index(0), kb.index(kb.Dv), [&](Value d) {
          kb.addTo(to.dv, {bb, hh, j, d},
                   b.create<arith::MulFOp>(loc, a, kb.load(dOut, {bb, hh, i, d})));
        });
      Value ds = b.create<arith::MulFOp>(
          loc, p, b.create<arith::SubFOp>(loc, b.create<arith::MulFOp>(loc, g, da), delta));
      if (to.dCenter && kb.gaussian) {
        // d g / d c = g (j - c) / sigma^2, and a = p g.
        Value dj = b.create<arith::SubFOp>(loc, jF, c);
        Value slope = b.create<arith::MulFOp>(loc, dj, kb.f32(-2.0f * kb.inverseTwoSigmaSquared()));
        kb.addTo(to.dCenter, {bb, hh, i},
                 b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, da, a), slope));
      }
      // The score's gradient: rows of d_q_i, d_k_j and the row captures in one loop over
      // d, the scalar captures after it.
      bool captures = !to.dCaptures.empty() || !to.captureParts.empty();
      auto addToCapture = [&](unsigned n, Value at, Value x) {
        if (to.captureRow)
          kb.addTo(to.captureParts[n], {to.captureRow, at}, x);
        else if (kb.capturePerHead[n] || !kb.captureIsScalar[n])
          kb.addTo(to.dCaptures[n], {at}, x);
        else
          kb.addTo(to.dCaptures[n], kb.scalarAt(to.dCaptures[n]), x);
      };
      ScoreEmitter e(b, loc, kb.D);
      kb.bind(e, scoreGrad, bb, hh, i, j, iF, jF, ds);
      e.emitScalars(scoreGrad);
      e.forEachElement([&](Value d) {
        if (to.dq)
          kb.addTo(to.dq, {bb, hh, i, d}, e.element(gradYields[0], d));
        if (to.dk)
          kb.addTo(to.dk, {bb, hh, j, d}, e.element(gradYields[1], d));
        for (unsigned n = 0; captures && n < kb.captures.size(); ++n)
          if (!kb.captureIsScalar[n] && !kb.capturePerHead[n])
            addToCapture(n, d, e.element(gradYields[2 + n], d));
      });
      for (unsigned n = 0; captures && n < kb.captures.size(); ++n)
        if (kb.capturePerHead[n] || kb.captureIsScalar[n])
          addToCapture(n, to.captureRow || !kb.capturePerHead[n] ? kb.index(0) : hh,
                       e.scalar(gradYields[2 + n]));
    });
  };

  if (!kb.onGpu) {
    // Per query row, in order: every sum in one pass over the allowed pairs.
    kb.forEachQueryRow([&](Value bb, Value hh, Value i, Value) {
      Value delta = deltaOf(bb, hh, i);
      kb.loop(kb.index(0), kb.keyEnd(i), [&](Value j) {
        addPair(bb, hh, i, j, delta, {dq, dk, dv, dCenter, dCaptures, Value(), {}});
      });
    });
    b.create<func::ReturnOp>(loc);
    return f;
  }

  // The GPU form: no two threads add into one element.
  int64_t rows = kb.B * kb.H * kb.T;
  Value deltas = kb.rowScratch(1);
  SmallVector<Value> parts;
  for (auto [n, cap] : llvm::enumerate(kb.captures)) {
    int64_t width = kb.captureIsScalar[n] || kb.capturePerHead[n] ? 1 : kb.D;
    parts.push_back(kb.rowScratch(width));
  }
  // A thread per query row: delta_i, d_q_i, d_center_i and the row's capture partials.
  kb.forEachQueryRow([&](Value bb, Value hh, Value i, Value r) {
    Value delta = deltaOf(bb, hh, i);
    kb.store(delta, deltas, {r, kb.index(0)});
    for (Value part : parts) {
      int64_t width = cast<MemRefType>(part.getType()).getShape()[1];
      kb.loop(kb.index(0), kb.index(width), [&](Value d) { kb.store(kb.f32(0.0f), part, {r, d}); });
    }
    kb.loop(kb.index(0), kb.keyEnd(i), [&](Value j) {
      addPair(bb, hh, i, j, delta, {dq, Value(), Value(), dCenter, {}, r, parts});
    });
  });
  // A thread per key row: d_k_j and d_v_j over the queries that see key j, in order.
  kb.forEachPoint({kb.B, kb.H, kb.S}, [&](ValueRange at, Value) {
    Value bb = at[0], hh = at[1], j = at[2];
    kb.loop(kb.index(0), kb.index(kb.T), [&](Value i) {
      Value r = kb.queryRow(bb, hh, i);
      Value seen = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, j, kb.keyEnd(i));
      kb.when(seen, [&] {
        addPair(bb, hh, i, j, kb.load(deltas, {r, kb.index(0)}),
                {Value(), dk, dv, Value(), {}, Value(), {}});
      });
    });
  });
  // A thread per element of each capture's gradient: its partials, in row order.
  for (auto [n, dc] : llvm::enumerate(dCaptures)) {
    Value part = parts[n];
    bool perHead = kb.capturePerHead[n];
    int64_t width = perHead ? kb.H : cast<MemRefType>(part.getType()).getShape()[1];
    kb.forEachPoint({width}, [&](ValueRange at, Value) {
      Value x = at[0];
      Value column = perHead ? kb.index(0) : x;
      Value sum = kb.fold(kb.index(0), kb.index(rows), 0.0f, [&](Value r, Value acc) {
        Value x2 = kb.load(part, {r, column});
        if (!perHead)
          return b.create<arith::AddFOp>(loc, acc, x2).getResult();
        // Row r is head (r / T) mod H's.
        Value head = b.create<arith::RemUIOp>(loc, b.create<arith::DivUIOp>(loc, r, kb.index(kb.T)),
                                              kb.index(kb.H));
        Value mine = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, head, x);
        return b.create<arith::SelectOp>(loc, mine, b.create<arith::AddFOp>(loc, acc, x2), acc)
            .getResult();
      });
      kb.store(sum, dc,
               kb.captureIsScalar[n] && !perHead ? kb.scalarAt(dc) : SmallVector<Value>{x});
    });
  }
  b.create<func::ReturnOp>(loc);
  return f;
}
