// task: regress, an mlp or rnn that maps a window of numbers to the next one.
#include "frontends/yaml/Family.h"
#include "frontends/yaml/RecurrentImporter.h"

namespace attn::yaml::recurrent {
namespace {

class RegressorImporter : public RecurrentImporter {
public:
  using RecurrentImporter::RecurrentImporter;

  // @forward(x) -> y and @loss(x, target) -> mean squared error.
  void entries(ModuleOp module) {
    b.setInsertionPointToEnd(module.getBody());
    int64_t batch = spec.train.batchSize, window = spec.data.window;
    // The rnn reads one feature per step; the mlp sees the whole window as one vector.
    SmallVector<int64_t> xShape = spec.model.rnn ? SmallVector<int64_t>{batch, window, 1}
                                                 : SmallVector<int64_t>{batch, window};
    auto xType = RankedTensorType::get(xShape, b.getF32Type());
    auto yType = RankedTensorType::get({batch, spec.model.output.size}, b.getF32Type());
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Location l = loc(spec.model.loc);

    auto forward = entry("forward", {xType}, {"x"}, {yType}, {"y"}, l);
    b.create<func::ReturnOp>(l, network(forward.getArgument(0)));

    b.setInsertionPointToEnd(module.getBody());
    auto loss = lossEntry({xType, yType}, {"x", "target"}, {{"rnn", window}}, l);
    Value prediction = network(loss.getArgument(0));
    dropout.clear();
    b.create<func::ReturnOp>(l, b.create<mlir::attn::MseOp>(l, prediction, loss.getArgument(1))
                                    .getResult());
  }

};

} // namespace
} // namespace attn::yaml::recurrent

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.task == Task::Regress; }

void validate(const Spec &s, Problems &p) {
  if (checkNoPairFile(s, p) && s.data.builtin != "sine")
    p.error(s.data.loc,
            "task 'regress' learns from numbers, but data.builtin is '" + s.data.builtin + "'",
            "set data.builtin: sine, or task: lm");
  if (s.model.output.size != 1)
    p.error(s.model.output.loc,
            "data.builtin sine has one target per example, but model.output.size is " +
                std::to_string(s.model.output.size),
            "set model.output.size to 1");
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> importRegressor(const Spec &spec, mlir::MLIRContext &context,
                                      const ImportOptions &options) {
  return recurrent::RecurrentImporter::import<recurrent::RegressorImporter>(spec, options, context);
}

const Family kRegressorFamily = {"regressor",
                                 "mlp and rnn regressors of the next value of a sequence",
                                 claims, validate, importRegressor};

} // namespace attn::yaml
