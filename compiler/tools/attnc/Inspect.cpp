// attnc check / emit: validate a spec and print any stage of its compilation.
#include "Verbs.h"

#include "compiler/Target/Object.h"

#include "llvm/Support/raw_ostream.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace attnc {

int check(Compiler &c, const Options &) {
  if (!c.import())
    return 1;
  const auto &s = c.spec();
  std::cout << s.file << ": ok: model '" << s.name << "' (" << s.task << ", "
            << (s.model.rnn ? "rnn" : s.model.transformer ? "transformer" : "mlp") << ")\n";
  return 0;
}

int emit(Compiler &c, const Options &o) {
  if (o.stage == "spec")
    return writeText(o.output, attn::yaml::specToYaml(c.spec()));
  if (o.stage != "attn" && o.stage != "fused" && o.stage != "grad" && o.stage != "lowered" &&
      o.stage != "llvm")
    return usageError("--stage must be spec, attn, fused, grad, lowered or llvm (got '" +
                      o.stage + "')");
  if (!c.import())
    return 1;
  if (o.stage == "fused" && !c.fuse())
    return 1;
  if (o.stage == "grad" && !c.addTraining())
    return 1;
  if ((o.stage == "lowered" || o.stage == "llvm") && !c.lower())
    return 1;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (o.stage == "llvm") {
    if (!c.lowerToLLVM())
      return 1;
    llvm::LLVMContext llvmContext;
    auto module = attn::target::toOptimizedLLVMIR(c.module(), llvmContext);
    if (!module)
      return 1;
    module->print(os, nullptr);
  } else {
    c.module().print(os);  // attn, grad or lowered
    os << "\n";
  }
  return writeText(o.output, os.str());
}

} // namespace attnc
