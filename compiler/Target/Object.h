// Ahead-of-time output: LLVM dialect -> optimised LLVM IR -> native object file.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::target {

/// Translates to LLVM IR and optimises it at -O3 for `cpu`: "native" (the host, with all its
/// features) or an LLVM CPU name such as "x86-64-v3". nullptr on failure (a diagnostic has
/// been printed).
std::unique_ptr<llvm::Module> toOptimizedLLVMIR(mlir::ModuleOp llvmModule,
                                                llvm::LLVMContext &context,
                                                const std::string &cpu = "native");

/// LLVM's global options for attnc's code (once per process; the JIT and the object writer
/// call it): a cap on full loop unrolling, plus ATTN_LLVM_ARGS from the environment.
void configureLLVM();

/// The CPU that code compiled for `cpu` targets: `cpu` itself, unless it is "native" (or
/// empty) and ATTN_MAX_CPU caps this machine at an x86-64 level (attn/Cpu.h): then that level.
std::string effectiveCpu(const std::string &cpu);

/// The instruction-set features code compiled for `cpu` ("native" or an LLVM CPU name) may
/// use, as attn_program_info::cpu_features lists them (those attn::cpuHas can test), and the
/// CPU's name ("native": the host's, e.g. "znver4").
std::string cpuFeatures(const std::string &cpu);
std::string cpuName(const std::string &cpu);

/// Compiles to a relocatable object for `cpu` (as above), in memory: `object` receives its
/// bytes. Returns an error message, empty on success.
std::string compileObject(mlir::ModuleOp llvmModule, const std::string &cpu, std::string &object);

/// The same as up to `parts` objects, compiled at once on as many threads: the module is
/// split by function (its loops are outlined into functions of their own, attn-outline-loops)
/// and each part optimised and code-generated in its own LLVM context. Linked together (the
/// JIT links them all) they are the module. What was private to the module becomes a hidden
/// symbol named `<prefix>local.<name>`: `prefix` (the program's entry prefix) keeps the programs
/// of one executable apart. Returns an error message, empty on success.
std::string compileObjects(mlir::ModuleOp llvmModule, const std::string &cpu, unsigned parts,
                           const std::string &prefix, std::vector<std::string> &objects);

/// Writes a relocatable object for `cpu` (as above). Returns an error message, empty on
/// success.
std::string writeObject(mlir::ModuleOp llvmModule, const std::string &path,
                        const std::string &cpu = "native");

} // namespace attn::target
