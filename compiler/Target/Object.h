// Ahead-of-time output: LLVM dialect -> optimised LLVM IR -> native object file.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>

namespace attn::target {

/// Translates to LLVM IR and optimises it at -O3 for the host CPU. nullptr on failure (a
/// diagnostic has been emitted).
std::unique_ptr<llvm::Module> toOptimizedLLVMIR(mlir::ModuleOp llvmModule,
                                                llvm::LLVMContext &context);

/// Writes a relocatable object for the host CPU. Returns an error message, empty on success.
std::string writeObject(mlir::ModuleOp llvmModule, const std::string &path);

} // namespace attn::target
