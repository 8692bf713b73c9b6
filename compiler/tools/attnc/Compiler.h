// One model's way through the compiler: spec -> attn -> lowered -> LLVM, stopping at any
// stage. Every attnc verb goes through it, so `emit`, `run` and `compile` see the same IR.
#pragma once

#include "compiler/Target/Jit.h"
#include "compiler/Target/Manifest.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnc {

class Compiler {
public:
  Compiler();

  /// Parses and validates the spec; prints diagnostics to stderr on failure.
  bool load(const std::string &path, const std::vector<attn::yaml::Override> &overrides);
  /// The same from spec text (a checkpoint's); `name` names it in diagnostics.
  bool loadText(const std::string &text, const std::string &name,
                const std::vector<attn::yaml::Override> &overrides = {});
  const attn::yaml::Spec &spec() const { return *spec_; }

  /// What the importer is told about the data (vocabularies, lengths); by default it is
  /// derived from the spec's data. A checkpoint's metadata sets it instead.
  void setImportOptions(const attn::yaml::ImportOptions &o) { importOptions_ = o; }
  /// Importer output (stage "attn").
  bool import();
  /// Structural fusion (attn-fuse-recurrence) before autodiff and in the lowering; on unless
  /// turned off (`--no-fuse`).
  void setFuse(bool fuse) { fuse_ = fuse; }
  /// Also compile a Transformer's @decode_full, for decoding without its cache (--no-cache).
  void setUncachedDecoding(bool uncached) { uncached_ = uncached; }
  /// Structural fusion alone (stage "fused"); addTraining and lower run it too, and on a
  /// fused module it changes nothing.
  bool fuse();

  /// Adds @loss_grad and @train_step (attn-autodiff, attn-train-step with the spec's
  /// optimizer) to the imported module (stage "grad").
  bool addTraining();
  /// attn -> lowered tensors; also reads the manifest (stage "lowered").
  bool lower();
  /// lowered -> LLVM dialect (stage "llvm").
  bool lowerToLLVM();
  /// The LLVM-dialect module JIT-compiled for this machine; null (the error printed) on
  /// failure.
  std::unique_ptr<attn::target::JitProgram> jit();

  mlir::ModuleOp module() { return *module_; }
  const attn::target::Manifest &manifest() const { return *manifest_; }
  mlir::MLIRContext &context() { return context_; }

private:
  mlir::MLIRContext context_;
  std::optional<attn::yaml::Spec> spec_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::optional<attn::target::Manifest> manifest_;
  bool fuse_ = true;
  bool uncached_ = false;
  std::optional<attn::yaml::ImportOptions> importOptions_;
};

} // namespace attnc
