// In-process execution of a lowered (LLVM dialect) module through MLIR's ExecutionEngine.
// The way there from attn (or a spec) is attn::driver::Session's.
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
  /// The program as the runtime sees it; valid while this object lives.
  const attn_program_info *info() const { return program->get(); }

private:
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::unique_ptr<ProgramInfo> program;
};

} // namespace attn::target
