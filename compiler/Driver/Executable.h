// `attnc compile --exe`: a standalone executable of one model. The model's object (for a
// --cpu), its manifest, its runtime configuration (attn::app::ModelConfig as JSON) and its
// weights (a safetensors image: parameters, spec, vocabularies) are linked with the runtime's
// executable main (runtime/exe) by the system's C++ compiler; the result needs libc,
// libstdc++, libgomp and oneDNN, no LLVM or MLIR.
#pragma once

#include "compiler/Driver/Session.h"

#include <string>

namespace attn::driver {

struct ExecutableOptions {
  std::string output; // the executable
  std::string cpu = "native";
  /// "": the weights are embedded; else the file name (beside the executable, in the same
  /// directory) they are written to and read from.
  std::string weightsFile;
};

/// Writes the executable (atomically: it appears whole or not at all) for the Session's spec,
/// with the open checkpoint's parameters or else freshly initialised ones. Returns "" or the
/// error.
std::string writeExecutable(Session &session, const ExecutableOptions &options);

} // namespace attn::driver
