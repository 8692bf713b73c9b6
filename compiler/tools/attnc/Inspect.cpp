// attnc check / emit / compile: validate a spec, print any stage of its compilation, write
// it ahead of time (an object and a header, or a standalone executable).
#include "Verbs.h"

#include "compiler/Driver/Executable.h"

#include <filesystem>
#include <iostream>

namespace attnc {

namespace {
// A failed compile: `error`, unless the session already reported why (a precision this CPU
// lacks, a spec error), which says more than "the model does not compile".
int failed(const attn::driver::Session &session, size_t reportedBefore, const std::string &error) {
  if (session.reportedCount() == reportedBefore)
    std::cerr << "attnc: error: " << error << "\n";
  return 1;
}
} // namespace

int check(attn::driver::Session &session, const Common &) {
  if (!session.runTo(attn::driver::Stage::Attn) || !session.precisionsRunHere())
    return 1;
  const auto &s = session.spec();
  std::cout << s.file << ": ok: model '" << s.name << "' (" << attn::yaml::nameOf(s.task) << ", "
            << attn::yaml::architectureOf(s) << ")\n";
  return 0;
}

int emit(attn::driver::Session &session, const Common &, const EmitOptions &o) {
  std::optional<attn::driver::Stage> stage = attn::driver::parseStage(o.stage);
  if (!stage)
    return usageError("--stage must be spec, attn, fused, grad, lowered, llvm or ptx (got '" +
                      o.stage + "')");
  // The lowered and LLVM stages come from the inference program unless --train takes the
  // compilation through autodiff and the train step first, as `attnc train` does.
  if (o.train && *stage < attn::driver::Stage::Lowered)
    return usageError(
        "--train goes with --stage=lowered, llvm or ptx (the grad stage is always the "
        "training program)");
  if (o.train && !session.runTo(attn::driver::Stage::Grad))
    return 1;
  std::optional<std::string> text = session.print(*stage);
  if (!text)
    return 1;
  return writeText(o.output, *text);
}

int compile(attn::driver::Session &session, const Common &c, const CompileOptions &o) {
  size_t reported = session.reportedCount();
  if (o.exe && o.lib)
    return usageError("--exe and --lib are two outputs; choose one");
  bool bundle = o.exe || o.lib;
  if (o.output.empty())
    return usageError(o.exe   ? "compile --exe needs -o OUT"
                      : o.lib ? "compile --lib needs -o LIB.a or LIB.so"
                              : "compile needs -o MODEL.o");
  if (!bundle && !o.ckpt.empty())
    return usageError("--ckpt goes with --exe or --lib (an object file holds no weights)");
  if (!o.exe && !o.weightsFile.empty())
    return usageError("--weights-file goes with --exe");
  if (bundle && !o.ckpt.empty() && !session.openCheckpoint(o.ckpt, c.overrides))
    return 1;
  if (o.exe) {
    std::string outName = std::filesystem::path(o.output).filename().string();
    if (o.weightsFile.find('/') != std::string::npos || o.weightsFile == "." ||
        o.weightsFile == ".." || o.weightsFile == outName)
      return usageError("--weights-file names a file beside the executable (not a directory, "
                        "not the executable itself), got '" +
                        o.weightsFile + "'");
    std::string error = attn::driver::writeExecutable(session, {o.output, o.cpu, o.weightsFile});
    if (!error.empty())
      return failed(session, reported, error);
    std::cout << "wrote " << o.output
              << (o.weightsFile.empty() ? "" : " and " + o.weightsFile + " beside it") << "\n";
    return 0;
  }
  if (o.lib) {
    std::string header = o.header;
    if (header.empty()) { // libdates.a -> libdates.h
      auto dot = o.output.rfind('.');
      header = o.output.substr(0, dot) + ".h";
    }
    std::string link;
    std::string error = attn::driver::writeLibrary(session, {o.output, header, o.cpu, &link});
    if (!error.empty())
      return failed(session, reported, error);
    std::cout << "wrote " << o.output << " and " << header << "\n"
              << "link a C program with: " << link << "\n";
    return 0;
  }
  std::string header = o.header;
  if (header.empty()) {
    auto dot = o.output.rfind('.');
    header = (dot == std::string::npos ? o.output : o.output.substr(0, dot)) + ".h";
  }
  std::string error = attn::driver::writeObjectFile(session, {o.output, header, o.cpu});
  if (!error.empty())
    return failed(session, reported, error);
  std::cout << "wrote " << o.output << " and " << header << "\n";
  return 0;
}

} // namespace attnc
