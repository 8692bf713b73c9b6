// `attnc compile --exe | --lib`: a standalone executable, or a library with a C API, of one
// model. The model's object (for a
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

struct ObjectOptions {
  std::string output; // MODEL.o
  std::string header; // MODEL.h
  std::string cpu = "native";
};

struct LibraryOptions {
  std::string output; // LIB.a or LIB.so
  std::string header; // the C API's header (a copy of attn/capi.h)
  std::string cpu = "native";
  // Receives the command that builds a C program (PROGRAM.c) against the library: the
  // libraries it needs beside it (oneDNN, libgomp, SentencePiece for a subword model, ...).
  std::string *linkLine = nullptr;
};

/// Writes the model as a relocatable object and its C header (`attnc compile -o MODEL.o`): the
/// program and, with decode.buckets / decode.batch_buckets, each bucket's inference program
/// (its own symbols, the full program's parameters), listed in the header as
/// `attn_<model>_buckets` (null-terminated). With buckets the programs' objects are merged by
/// the system's compiler driver (`c++ -r`). Atomic, as writeExecutable. Returns "" or the
/// error.
std::string writeObjectFile(Session &session, const ObjectOptions &options);

/// Writes the model as a library with the C API of attn/capi.h: a static archive holding the
/// model, its weights and the whole runtime (link it with -ldnnl -fopenmp -lstdc++ -lm), or a
/// shared library. Atomic, as writeExecutable. Returns "" or the error.
std::string writeLibrary(Session &session, const LibraryOptions &options);

/// Writes the executable (atomically: it appears whole or not at all) for the Session's spec,
/// with the open checkpoint's parameters or else freshly initialised ones. Returns "" or the
/// error.
std::string writeExecutable(Session &session, const ExecutableOptions &options);

} // namespace attn::driver
