#include "Compiler.h"

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/yaml/Importer.h"

#include "Data.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <iostream>

namespace attnc {

static mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry registry;
  attn::pipelines::registerDialects(registry);
  return registry;
}

Compiler::Compiler() : context_(makeRegistry()) {
  context_.loadAllAvailableDialects();
  // IR diagnostics as the spec's are written: "file:line:col: error: ..." (MLIR's default
  // handler prints loc("file":line:col)), with the op that failed named in the message.
  context_.getDiagEngine().registerHandler([](mlir::Diagnostic &d) {
    std::string where;
    if (auto loc = mlir::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
      where = loc.getFilename().str() + ":" + std::to_string(loc.getLine()) + ":" +
              std::to_string(loc.getColumn()) + ": ";
    const char *severity = d.getSeverity() == mlir::DiagnosticSeverity::Error     ? "error"
                           : d.getSeverity() == mlir::DiagnosticSeverity::Warning ? "warning"
                                                                                  : "note";
    std::cerr << (where.empty() ? "attnc: " : where) << severity << ": " << d.str() << "\n";
    for (const mlir::Diagnostic &note : d.getNotes())
      std::cerr << "  note: " << note.str() << "\n";
    return mlir::success();
  });
}

bool Compiler::load(const std::string &path,
                    const std::vector<attn::yaml::Override> &overrides) {
  std::vector<attn::yaml::Diagnostic> diags;
  spec_ = attn::yaml::parseSpecFile(path, overrides, diags);
  for (const auto &d : diags)
    std::cerr << d.str() << "\n";
  return spec_.has_value();
}

bool Compiler::loadText(const std::string &text, const std::string &name,
                        const std::vector<attn::yaml::Override> &overrides) {
  std::vector<attn::yaml::Diagnostic> diags;
  spec_ = attn::yaml::parseSpecString(text, name, overrides, diags);
  for (const auto &d : diags)
    std::cerr << d.str() << "\n";
  return spec_.has_value();
}

bool Compiler::import() {
  std::vector<attn::yaml::Diagnostic> problems;
  if (!attn::yaml::checkConsistency(*spec_, problems)) {
    for (const auto &d : problems)
      std::cerr << d.str() << "\n";
    return false;
  }
  if (uncached_ && !(spec_->model.transformer && spec_->task == "seq2seq")) {
    std::cerr << attn::yaml::Diagnostic{spec_->model.loc,
                                        "--no-cache decodes a Transformer encoder-decoder without "
                                        "its key/value cache, but this model has none",
                                        "drop --no-cache"}
                     .str()
              << "\n";
    return false;
  }
  attn::yaml::ImportOptions options;
  if (importOptions_)
    options = *importOptions_;
  else if (spec_->task == "lm")
    options.vocabSize = textVocab().size();
  else if (usesPairs(*spec_))
    options = pairImportOptions(pairData(*spec_));
  options.decodeFull = uncached_;
  module_ = attn::yaml::importSpec(*spec_, context_, options);
  return module_ && succeeded(mlir::verify(*module_));
}

bool Compiler::fuse() {
  mlir::PassManager pm(&context_);
  if (fuse_)
    attn::pipelines::buildFusion(pm);
  return succeeded(pm.run(*module_));
}

bool Compiler::addTraining() {
  mlir::PassManager pm(&context_);
  // Fusion first, so that a fused op differentiates as one op (its backward is oneDNN's).
  if (fuse_)
    attn::pipelines::buildFusion(pm);
  attn::yaml::addTrainingPasses(pm, spec_->train);
  return succeeded(pm.run(*module_));
}

bool Compiler::lower() {
  mlir::PassManager pm(&context_);
  attn::pipelines::buildAttnToLowered(pm, fuse_);
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

std::unique_ptr<attn::target::JitProgram> Compiler::jit() {
  auto program = attn::target::JitProgram::create(*module_, *manifest_);
  if (!program) {
    std::cerr << "attnc: error: JIT compilation failed: " << llvm::toString(program.takeError())
              << "\n";
    return nullptr;
  }
  return std::move(*program);
}

} // namespace attnc
