// In-process execution of a lowered (LLVM dialect) module through MLIR's ExecutionEngine.
#pragma once

#include "compiler/Target/Manifest.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace attn::target {

class JitProgram {
public:
  /// JIT-compiles `llvmModule` (LLVM -O3, host CPU) with the runtime's kernels linked in.
  static llvm::Expected<std::unique_ptr<JitProgram>> create(mlir::ModuleOp llvmModule,
                                                            const Manifest &manifest);
  /// The whole way from an attn module (entry points reading attn.param ops) to a running
  /// program: the attn-lower pipeline, the manifest, attn-lower-to-llvm, then create().
  /// Entry symbols are `attn_<cname>_<entry>`. Diagnostics go to the module's context.
  /// `fuse` = false leaves structural fusion (attn-fuse-recurrence) out.
  static llvm::Expected<std::unique_ptr<JitProgram>> compile(mlir::ModuleOp attnModule,
                                                             const std::string &model,
                                                             const std::string &cname,
                                                             bool fuse = true);

  /// The program as the runtime sees it; valid while this object lives.
  const attn_program_info *info() const { return program->get(); }

private:
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::unique_ptr<ProgramInfo> program;
};

} // namespace attn::target
