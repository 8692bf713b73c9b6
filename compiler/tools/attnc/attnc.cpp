// attnc: the user's command line. One binary, verbs like Marian's and IREE's:
//   attnc check | emit | run | compile  MODEL.yaml [options]
#include "Compiler.h"

#include "compiler/Target/Jit.h"
#include "compiler/Target/Object.h"

#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/data/Sine.h"
#include "attn/data/TextFile.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <iomanip>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace {

const char *kUsage = R"(attnc: compile and run sequence models written in YAML

usage: attnc <verb> MODEL.yaml [options]

verbs:
  check     parse and validate the spec, build its attn IR, report problems
  emit      print one stage of the compilation (--stage)
  run       compile in-process (JIT) and run the model's forward pass on data
  compile   compile ahead of time to an object file and a C header

common options:
  --set KEY=VALUE   override one spec key (YAML value), e.g. --set train.batch_size=8
  -h, --help        help for a verb: attnc run --help
)";

const std::map<std::string, std::string> kVerbHelp = {
    {"check", R"(usage: attnc check MODEL.yaml [--set KEY=VALUE]...

Parses and validates the spec (errors as file:line:col with a hint), imports it into the attn
dialect and verifies the IR. Prints a one-line summary and exits 0 when the model is sound.
)"},
    {"emit", R"(usage: attnc emit MODEL.yaml --stage=STAGE [-o FILE] [--set KEY=VALUE]...

Prints one stage of the compilation:
  spec      the validated spec with every default filled in (YAML)
  attn      the attn dialect as imported from the spec
  lowered   after attn-lower: linalg/tensor/scf on tensors plus oneDNN kernel calls
  llvm      the optimised LLVM IR that is JIT-compiled or written as an object
)"},
    {"run", R"(usage: attnc run MODEL.yaml [--input FILE] [--count N] [--seed N] [--output FILE]
                 [--set KEY=VALUE]...

Compiles the model in-process and runs its forward pass with parameters initialised from
--seed (default: train.seed). Inputs come from the spec's builtin data (the first --count
validation examples, default one batch) or from --input FILE: whitespace-separated numbers,
one example (data.window values) per line, '#' comments. Prints one line per example;
--output FILE also writes the raw outputs, one example per line.
)"},
    {"compile", R"(usage: attnc compile MODEL.yaml -o MODEL.o [--header MODEL.h] [--set KEY=VALUE]...

Compiles ahead of time for the host CPU: MODEL.o holds the entry points
`void attn_<model>_<entry>(void **args)`, and the header declares them together with the
program manifest `attn_<model>_program` (parameters, inputs, outputs; see attn/abi.h).
Link MODEL.o with the attn runtime (AttnRuntime) and oneDNN; MLIR is not needed.
)"},
};

struct Options {
  std::string verb, model, stage, output, header, input;
  std::vector<attn::yaml::Override> overrides;
  std::optional<uint64_t> seed;
  std::optional<int64_t> count;
  bool help = false;
};

int usageError(const std::string &msg) {
  std::cerr << "attnc: error: " << msg << "\n(see attnc --help)\n";
  return 2;
}

// Returns an error message, or "" when the arguments parse.
std::string parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    auto takeValue = [&](const std::string &flag) -> bool {
      if (a.rfind(flag + "=", 0) == 0) {
        value = a.substr(flag.size() + 1);
        return true;
      }
      if (a == flag) {
        if (i + 1 >= args.size())
          throw std::runtime_error(flag + " needs a value");
        value = args[++i];
        return true;
      }
      return false;
    };
    if (a == "-h" || a == "--help")
      o.help = true;
    else if (takeValue("--stage"))
      o.stage = value;
    else if (takeValue("-o"))
      o.output = value;
    else if (takeValue("--output"))
      o.output = value;
    else if (takeValue("--header"))
      o.header = value;
    else if (takeValue("--input"))
      o.input = value;
    else if (takeValue("--seed"))
      o.seed = std::stoull(value);
    else if (takeValue("--count"))
      o.count = std::stoll(value);
    else if (takeValue("--set")) {
      auto eq = value.find('=');
      if (eq == std::string::npos)
        return "--set needs KEY=VALUE, got '" + value + "'";
      o.overrides.push_back({value.substr(0, eq), value.substr(eq + 1)});
    } else if (!a.empty() && a[0] == '-')
      return "unknown option '" + a + "'";
    else if (o.verb.empty())
      o.verb = a;
    else if (o.model.empty())
      o.model = a;
    else
      return "unexpected argument '" + a + "'";
  }
  return "";
}

std::string specYaml(const attn::yaml::Spec &s) {
  std::ostringstream os;
  os << "name: " << s.name << "\ntask: " << s.task << "\ndata:\n  builtin: " << s.data.builtin
     << "\n  window: " << s.data.window << "\n  train: " << s.data.train
     << "\n  valid: " << s.data.valid << "\n  seed: " << s.data.seed << "\nmodel:\n";
  if (s.model.mlp) {
    os << "  mlp:\n    hidden: [";
    for (size_t i = 0; i < s.model.mlp->hidden.size(); ++i)
      os << (i ? ", " : "") << s.model.mlp->hidden[i];
    os << "]\n    activation: " << s.model.mlp->activation << "\n";
  } else {
    os << "  rnn:\n    cell: " << s.model.rnn->cell << "\n    hidden: " << s.model.rnn->hidden
       << "\n    layers: " << s.model.rnn->layers << "\n";
  }
  os << "  output:\n    size: " << s.model.output.size << "\ntrain:\n  batch_size: "
     << s.train.batchSize << "\n  seed: " << s.train.seed << "\n";
  return os.str();
}

int writeText(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(path);
  out << text;
  if (!out)
    return std::cerr << "attnc: error: cannot write " << path << "\n", 1;
  return 0;
}

int check(attnc::Compiler &c) {
  if (!c.import())
    return 1;
  const auto &s = c.spec();
  std::cout << s.file << ": ok: model '" << s.name << "' (" << s.task << ", "
            << (s.model.rnn ? "rnn" : "mlp") << ")\n";
  return 0;
}

int emit(attnc::Compiler &c, const Options &o) {
  if (o.stage == "spec")
    return writeText(o.output, specYaml(c.spec()));
  if (o.stage != "attn" && o.stage != "lowered" && o.stage != "llvm")
    return usageError("--stage must be spec, attn, lowered or llvm (got '" + o.stage + "')");
  if (!c.import())
    return 1;
  if (o.stage != "attn" && !c.lower())
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
    c.module().print(os);
    os << "\n";
  }
  return writeText(o.output, os.str());
}

// The forward pass over `x` [n, window] in batches of the compiled batch size.
int run(attnc::Compiler &c, const Options &o) {
  if (!c.import() || !c.lower() || !c.lowerToLLVM())
    return 1;
  auto jit = attn::target::JitProgram::create(c.module(), c.manifest());
  if (!jit) {
    std::cerr << "attnc: error: JIT compilation failed: " << llvm::toString(jit.takeError())
              << "\n";
    return 1;
  }
  const auto &s = c.spec();
  attn::Program program((*jit)->info());
  const attn_entry_info &forward = program.entry("forward");
  std::vector<int64_t> xShape(forward.inputs[0].shape,
                              forward.inputs[0].shape + forward.inputs[0].rank);
  int64_t batch = xShape[0], window = s.data.window;
  int64_t outWidth = forward.outputs[0].shape[1];

  attn::Tensor x, target;
  std::string source;
  if (!o.input.empty()) {
    x = attn::data::readNumbers(o.input, window);
    source = o.input;
  } else {
    // The validation split of the builtin data: a seed apart from the training split.
    auto examples = attn::data::makeSine(window, o.count.value_or(batch), s.data.seed + 1);
    x = std::move(examples.x);
    target = std::move(examples.y);
    source = "builtin " + s.data.builtin + " (validation split)";
  }
  uint64_t seed = o.seed.value_or(s.train.seed);
  auto params = attn::initParams(program.info(), seed);
  int64_t n = x.shape()[0];
  std::cout << s.name << ": forward on " << n << " examples of " << source
            << ", parameters initialised from seed " << seed << "\n";
  std::cout << "      #" << (target.numel() ? "      target" : "") << "      output\n";

  std::ofstream raw;
  if (!o.output.empty())
    raw.open(o.output);
  for (int64_t start = 0; start < n; start += batch) {
    attn::Tensor xb(ATTN_F32, xShape); // zero-padded past the last example
    int64_t rows = std::min(batch, n - start);
    std::copy(x.data<float>() + start * window, x.data<float>() + (start + rows) * window,
              xb.data<float>());
    auto outputs = program.call("forward", params, {xb});
    const float *y = outputs[0].data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%7lld", (long long)(start + r));
      std::string line = cell;
      if (target.numel()) {
        std::snprintf(cell, sizeof cell, "  %10.6f", target.data<float>()[start + r]);
        line += cell;
      }
      for (int64_t j = 0; j < outWidth; ++j) {
        float v = y[r * outWidth + j];
        std::snprintf(cell, sizeof cell, "  %10.6f", v);
        line += cell;
        if (raw)
          raw << (j ? " " : "") << std::setprecision(9) << v;
      }
      std::cout << line << "\n";
      if (raw)
        raw << "\n";
    }
  }
  return 0;
}

int compile(attnc::Compiler &c, const Options &o) {
  if (o.output.empty())
    return usageError("compile needs -o MODEL.o");
  if (!c.import() || !c.lower() || !c.lowerToLLVM())
    return 1;
  std::string error = attn::target::writeObject(c.module(), o.output);
  if (!error.empty())
    return std::cerr << "attnc: error: " << error << "\n", 1;
  std::string header = o.header;
  if (header.empty()) {
    header = o.output;
    auto dot = header.rfind('.');
    header = (dot == std::string::npos ? header : header.substr(0, dot)) + ".h";
  }
  if (int rc = writeText(header, attn::target::renderHeader(c.manifest(), c.spec().file)))
    return rc;
  std::cout << "wrote " << o.output << " and " << header << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string error;
  try {
    error = parseArgs(argc, argv, o);
  } catch (const std::exception &e) {
    error = e.what();
  }
  if (!error.empty())
    return usageError(error);
  if (o.verb.empty() || (o.help && !kVerbHelp.count(o.verb))) {
    std::cout << kUsage;
    return o.help ? 0 : 2;
  }
  if (!kVerbHelp.count(o.verb))
    return usageError("unknown verb '" + o.verb + "'");
  if (o.help) {
    std::cout << kVerbHelp.at(o.verb);
    return 0;
  }
  if (o.model.empty())
    return usageError(o.verb + " needs a MODEL.yaml");
  attnc::Compiler c;
  if (!c.load(o.model, o.overrides))
    return 1;
  try {
    if (o.verb == "check")
      return check(c);
    if (o.verb == "emit")
      return emit(c, o);
    if (o.verb == "run")
      return run(c, o);
    return compile(c, o);
  } catch (const std::exception &e) {
    // Runtime errors (bad input files, shape mismatches) carry their own context.
    std::cerr << "attnc: error: " << e.what() << "\n";
    return 1;
  }
}
