#include "Compiler.h"

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/yaml/Importer.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <iostream>

namespace attnc {

static mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry registry;
  attn::pipelines::registerDialects(registry);
  return registry;
}

Compiler::Compiler() : context_(makeRegistry()) { context_.loadAllAvailableDialects(); }

bool Compiler::load(const std::string &path,
                    const std::vector<attn::yaml::Override> &overrides) {
  std::vector<attn::yaml::Diagnostic> diags;
  spec_ = attn::yaml::parseSpecFile(path, overrides, diags);
  for (const auto &d : diags)
    std::cerr << d.str() << "\n";
  return spec_.has_value();
}

bool Compiler::import() {
  module_ = attn::yaml::importSpec(*spec_, context_);
  return module_ && succeeded(mlir::verify(*module_));
}

bool Compiler::lower() {
  mlir::PassManager pm(&context_);
  attn::pipelines::buildAttnToLowered(pm);
  if (failed(pm.run(*module_)))
    return false;
  auto manifest =
      attn::target::readManifest(*module_, spec_->name, attn::yaml::cName(spec_->name));
  if (failed(manifest))
    return false;
  manifest_ = std::move(*manifest);
  return true;
}

bool Compiler::lowerToLLVM() {
  mlir::PassManager pm(&context_);
  attn::pipelines::buildLoweredToLLVM(pm, attn::target::entryPrefix(manifest_->cname));
  return succeeded(pm.run(*module_));
}

} // namespace attnc
