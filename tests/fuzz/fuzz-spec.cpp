// libFuzzer harness for the YAML frontend: parse and validate any text as a spec; a spec that
// passes must print (specToYaml) to text that parses back to the same spec, pass or fail the
// consistency checks without crashing, and, when consistent, import into attn IR that
// verifies. A failure must come with a diagnostic. Inputs starting with "--set " use their
// first line as an override (KEY=VALUE) of a valid spec instead.
//
//   scripts/fuzz.sh spec 600     # build with clang's libFuzzer and run for 10 minutes
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace attn::yaml;

namespace {

const char *kValid = "name: fuzz\ntask: seq2seq\ndata: {builtin: reverse, max_len: 6}\n"
                     "model: {rnn: {cell: gru, hidden: 8}, embedding: {dim: 4}}\n";

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "fuzz-spec: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void importAndVerify(const Spec &spec) {
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext();
    c->loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect>();
    c->printOpOnDiagnostic(false);
    // Size errors are diagnostics: keep them off stderr.
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
    return c;
  }();
  ImportOptions o;
  o.vocabSize = 30;
  o.sourceVocab = o.targetVocab = 16;
  o.sourceLength = spec.data.maxLen;
  o.targetLength = spec.data.maxLen + 1;
  mlir::OwningOpRef<mlir::ModuleOp> module = importSpec(spec, *context, o);
  if (module && mlir::failed(mlir::verify(*module)))
    fail("the imported module does not verify", specToYaml(spec));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<Diagnostic> diags;
  std::optional<Spec> spec;
  if (text.rfind("--set ", 0) == 0) {
    std::string line = text.substr(6, text.find('\n') == std::string::npos
                                          ? std::string::npos
                                          : text.find('\n') - 6);
    size_t eq = line.find('=');
    std::vector<Override> overrides = {
        {line.substr(0, eq), eq == std::string::npos ? "" : line.substr(eq + 1)}};
    spec = parseSpecString(kValid, "fuzz.yaml", overrides, diags);
  } else {
    spec = parseSpecString(text, "fuzz.yaml", diags);
  }
  if (!spec) {
    if (diags.empty())
      fail("a spec was refused without a diagnostic", text);
    return 0;
  }
  std::string printed = specToYaml(*spec);
  std::vector<Diagnostic> again;
  std::optional<Spec> reparsed = parseSpecString(printed, "printed.yaml", again);
  if (!reparsed)
    fail("the printed spec does not parse", printed + "\n" + again.at(0).str());
  if (specToYaml(*reparsed) != printed)
    fail("printing the reparsed spec gives other text", printed);
  std::vector<Diagnostic> problems;
  if (checkConsistency(*spec, problems))
    importAndVerify(*spec);
  else if (problems.empty())
    fail("an inconsistent spec without a diagnostic", printed);
  return 0;
}
