// Spec -> attn IR through the spec's family (Family.h), with the bounds every imported
// program is checked against.
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Family.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cctype>
#include <map>

using namespace mlir;

namespace attn::yaml {

namespace {
// Per tensor and per program: the spec's per-key bounds (Schema.cpp) keep every dimension
// sane, but their products can still be far beyond memory (a 16384-wide LSTM has a
// [16384, 65536] recurrent weight), which LLVM then met with "out of memory". Checked on the
// types, before anything of that size exists.
constexpr int64_t kMaxTensorElements = int64_t(1) << 28;    // 1 GiB of f32
constexpr int64_t kMaxParameterElements = int64_t(1) << 28; // all weights together

LogicalResult checkSizes(ModuleOp module) {
  auto tooBig = [](Type type) {
    auto t = dyn_cast<RankedTensorType>(type);
    return t && t.hasStaticShape() && t.getNumElements() > kMaxTensorElements;
  };
  auto report = [](Operation *op, Type type, const char *what) {
    op->emitError() << what << " " << type << " has "
                    << cast<RankedTensorType>(type).getNumElements()
                    << " elements, more than attnc's limit of " << kMaxTensorElements
                    << " per tensor (1 GiB of f32); make the model or its batch smaller";
  };
  std::map<std::string, int64_t> parameters; // a parameter read by several functions is one
  WalkResult walk = module.walk([&](Operation *op) {
    if (auto p = dyn_cast<mlir::attn::ParamOp>(op))
      parameters[p.getName().str()] =
          cast<RankedTensorType>(p.getResult().getType()).getNumElements();
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        if (tooBig(arg.getType())) {
          report(op, arg.getType(), "argument");
          return WalkResult::interrupt();
        }
    for (Value result : op->getResults())
      if (tooBig(result.getType())) {
        report(op, result.getType(), "result");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  int64_t total = 0;
  for (const auto &entry : parameters)
    total += entry.second;
  if (total > kMaxParameterElements)
    return module.emitError() << "the model has " << total
                              << " weights, more than attnc's limit of " << kMaxParameterElements
                              << " (1 GiB of f32)";
  return success();
}
} // namespace

OwningOpRef<ModuleOp> importSpec(const Spec &spec, MLIRContext &context,
                                 const ImportOptions &options) {
  context.loadDialect<mlir::attn::AttnDialect, func::FuncDialect>();
  const Family *family = familyOf(spec);
  if (!family)
    return nullptr;
  OwningOpRef<ModuleOp> module = family->import(spec, context, options);
  if (module && failed(checkSizes(*module)))
    return nullptr;
  return module;
}

std::string cName(const std::string &name) {
  std::string out;
  for (char c : name)
    out += std::isalnum((unsigned char)c) ? c : '_';
  if (out.empty() || std::isdigit((unsigned char)out[0]))
    out = "m_" + out;
  return out;
}

} // namespace attn::yaml
