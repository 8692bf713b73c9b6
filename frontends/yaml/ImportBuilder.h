// What every model importer needs to build attn IR from a spec: locations from spec
// positions, named entry points, parameters, dense layers, constants and the common loss and
// decoding endings. The recurrent families' importers (RecurrentImporter.h) and the
// Transformer importer (Transformer.cpp) derive from it. Private to the frontend.
#pragma once

#include "frontends/yaml/Importer.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <string>

namespace attn::yaml {

using Init = mlir::attn::Init;

class ImportBuilder {
public:
  ImportBuilder(const Spec &spec, const ImportOptions &options, mlir::MLIRContext &ctx)
      : spec(spec), options(options), b(&ctx) {}

protected:
  static constexpr int64_t kPadId = 0; // attn::data::Vocab::kPad

  mlir::Location loc(const Loc &l) {
    return mlir::FileLineColLoc::get(b.getStringAttr(l.file.empty() ? spec.file : l.file),
                                     l.line, l.col);
  }

  // The module the entries go into, named after the model.
  mlir::OwningOpRef<mlir::ModuleOp> newModule() {
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc(Loc{spec.file, 1, 1}));
    (*module)->setAttr("attn.model", b.getStringAttr(spec.name));
    return module;
  }

  mlir::RankedTensorType f32(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, b.getF32Type());
  }
  mlir::RankedTensorType i32(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, b.getI32Type());
  }

  // A public function with named inputs and results; the builder is left in its body.
  mlir::func::FuncOp entry(llvm::StringRef name, llvm::ArrayRef<mlir::Type> inputs,
                           llvm::ArrayRef<llvm::StringRef> inputNames,
                           llvm::ArrayRef<mlir::Type> results,
                           llvm::ArrayRef<llvm::StringRef> resultNames, mlir::Location l) {
    auto func = b.create<mlir::func::FuncOp>(l, name, b.getFunctionType(inputs, results));
    for (auto [i, n] : llvm::enumerate(inputNames))
      func.setArgAttr(i, "attn.name", b.getStringAttr(n));
    for (auto [i, n] : llvm::enumerate(resultNames))
      func.setResultAttr(i, "attn.name", b.getStringAttr(n));
    b.setInsertionPointToStart(func.addEntryBlock());
    return func;
  }

  mlir::Value param(mlir::Location l, const std::string &name, llvm::ArrayRef<int64_t> shape,
                    Init init, float scale) {
    return b.create<mlir::attn::ParamOp>(l, f32(shape), name, init, llvm::APFloat(scale));
  }

  // x [..., K] -> [..., n], weights initialised like PyTorch's nn.Linear: U(+-1/sqrt(K)).
  mlir::Value dense(const std::string &name, mlir::Value x, int64_t n, mlir::Location l) {
    int64_t k = mlir::cast<mlir::RankedTensorType>(x.getType()).getShape().back();
    float scale = 1.0f / std::sqrt((float)k);
    mlir::Value w = param(l, name + ".weight", {k, n}, Init::uniform, scale);
    mlir::Value bias = param(l, name + ".bias", {n}, Init::uniform, scale);
    return b.create<mlir::attn::DenseOp>(l, x, w, bias);
  }

  // A rank-0 f32 constant.
  mlir::Value scalar(float value, mlir::Location l) {
    return b.create<mlir::attn::ConstantOp>(
        l, mlir::DenseElementsAttr::get(f32({}), b.getF32FloatAttr(value)));
  }

  mlir::SmallVector<mlir::Value> zerosFor(llvm::ArrayRef<mlir::Type> types, mlir::Location l) {
    mlir::SmallVector<mlir::Value> zeros;
    for (mlir::Type t : types)
      zeros.push_back(b.create<mlir::attn::ConstantOp>(
          l, mlir::DenseElementsAttr::get(mlir::cast<mlir::RankedTensorType>(t),
                                          b.getF32FloatAttr(0.0f))));
    return zeros;
  }

  // log softmax over the last axis of x [K, V], stable: x - max - log sum exp(x - max).
  mlir::Value logSoftmax(mlir::Value x, mlir::Location l) {
    int64_t last = mlir::cast<mlir::RankedTensorType>(x.getType()).getRank() - 1;
    auto axes = b.getDenseI64ArrayAttr({last});
    mlir::Value shifted = b.create<mlir::attn::SubOp>(
        l, x, b.create<mlir::attn::ReduceMaxOp>(l, x, axes, b.getBoolAttr(true)));
    mlir::Value sum = b.create<mlir::attn::ReduceSumOp>(
        l, b.create<mlir::attn::ExpOp>(l, shifted), axes, b.getBoolAttr(true));
    return b.create<mlir::attn::SubOp>(l, shifted, b.create<mlir::attn::LogOp>(l, sum));
  }

  // Ends a @loss: the cross-entropy of `logits` against `labels`, padding ignored, with the
  // spec's label smoothing.
  void returnPaddedCrossEntropy(mlir::Value logits, mlir::Value labels, mlir::Location l,
                                int64_t ignore = kPadId) {
    b.create<mlir::func::ReturnOp>(
        l, b.create<mlir::attn::CrossEntropyOp>(l, logits, labels, b.getI64IntegerAttr(ignore),
                                                b.getF32FloatAttr(spec.train.labelSmoothing))
               .getResult());
  }

  const Spec &spec;
  ImportOptions options;
  mlir::OpBuilder b;
};

} // namespace attn::yaml
