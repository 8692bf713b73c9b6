// In-process execution of a compiled model: its native object (from compileObject, or the
// compile cache) linked into this process by LLVM's ORC JIT, with the runtime's kernels. The
// way there from attn (or a spec) is attn::driver::Session's.
#pragma once

#include "compiler/Target/Manifest.h"

#include "attn/abi.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
}

namespace attn::target {

class JitProgram {
public:
  /// Links `objects` (relocatable objects for this host that together are one program, e.g.
  /// compileObjects(.., "native", ..)) into the process, resolving the runtime's kernels and
  /// libc, and finds the manifest's entry points in them.
  static llvm::Expected<std::unique_ptr<JitProgram>> load(const std::vector<std::string> &objects,
                                                          const Manifest &manifest);
  ~JitProgram();
  /// The program as the runtime sees it; valid while this object lives.
  const attn_program_info *info() const { return program->get(); }

private:
  JitProgram() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<ProgramInfo> program;
};

} // namespace attn::target
