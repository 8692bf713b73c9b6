#include "compiler/Target/Object.h"

#include "attn/Cpu.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <algorithm>
#include <map>
#include <thread>
#include <vector>

namespace attn::target {

void configureLLVM() {
  static bool done = [] {
    // ATTN_LLVM_ARGS="-opt1 -opt2=value": LLVM's own options, for experiments.
    if (const char *args = std::getenv("ATTN_LLVM_ARGS")) {
      llvm::SmallVector<const char *> argv = {"attnc"};
      llvm::BumpPtrAllocator alloc;
      llvm::StringSaver saver(alloc);
      llvm::cl::TokenizeGNUCommandLine(args, saver, argv);
      llvm::cl::ParseCommandLineOptions((int)argv.size(), argv.data(), "", &llvm::errs());
    }
    // Half of -O3's unrolling budget (unless ATTN_LLVM_ARGS sets it). With the full one,
    // nests of loops with small constant trip counts (a beam's K = 4 rows) are fully
    // unrolled level by level before the loop vectorizer sees them: copying [4, 33, 64] into
    // a concat became 50k scalar loads and stores in one block, whose instruction scheduling
    // took a minute (`attnc translate --beam 4`: 80 s -> 2 s). Train steps measured the same
    // within noise.
    auto &options = llvm::cl::getRegisteredOptions();
    if (auto *o = options.lookup("unroll-threshold"); o && !o->getNumOccurrences())
      o->addOccurrence(0, "unroll-threshold", "150");
    return true;
  }();
  (void)done;
}

std::string effectiveCpu(const std::string &cpu) {
  if (!cpu.empty() && cpu != "native")
    return cpu;
  std::string cap = attn::cpuLevelCap();
  return cap.empty() ? "native" : cap;
}

// `cpu` "native" is the host with all its features (or ATTN_MAX_CPU's level); another name is
// that CPU with its default features ("x86-64-v3": any AVX2 machine).
static std::unique_ptr<llvm::TargetMachine> targetMachine(const std::string &requested,
                                                          std::string &error) {
  std::string cpu = effectiveCpu(requested);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  bool native = cpu.empty() || cpu == "native";
  // Checked first: LLVM would only warn, and then build for a generic CPU.
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  if (!native && !info->isCPUStringValid(cpu)) {
    error = "unknown CPU '" + cpu + "' for " + triple + " (try native, x86-64, x86-64-v2, " +
            "x86-64-v3, x86-64-v4, or a name such as skylake or znver3)";
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  if (native)
    for (auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature, enabled);
  // Loops over strided views (a transpose, a head's columns) stay scalar rather than
  // vectorised with gathers and scatters: on this project's AVX-512 machines (AMD Zen 4) those
  // are microcoded and slower than the scalar loop. Once LLVM can tell buffers apart
  // (declareAllocatorNoAlias) it vectorises many such loops, and without this a Transformer's
  // greedy decoding took 1.3x as long (dates-transformer: 19.5 ms against 15.0 ms).
  if (llvm::Triple(triple).isX86()) {
    features.AddFeature("prefer-no-gather", true);
    features.AddFeature("prefer-no-scatter", true);
  }
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, native ? llvm::sys::getHostCPUName() : llvm::StringRef(cpu), features.getString(),
      options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

// The runtime's allocator (attn/Alloc.h) hands out blocks that no live pointer reaches, as
// malloc does. Saying so (noalias results, and aligned blocks from the allocator itself, so
// that no integer arithmetic hides where a buffer came from: Pipelines.cpp) lets LLVM's alias
// analysis tell a program's buffers apart. A loop that reads one buffer and writes another
// then needs no runtime overlap check, nor the scalar copy of itself the check falls back to:
// reverse-alibi-transformer's LLVM IR shrank from 9.3 to 3.9 MB and its inference program
// compiles in 4.9 s instead of 11.9.
static void declareAllocatorNoAlias(llvm::Module &module) {
  for (const char *name : {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc"})
    if (llvm::Function *f = module.getFunction(name))
      f->addRetAttr(llvm::Attribute::NoAlias);
}

std::unique_ptr<llvm::Module> toOptimizedLLVMIR(mlir::ModuleOp llvmModule,
                                                llvm::LLVMContext &context,
                                                const std::string &cpu) {
  configureLLVM();
  auto module = mlir::translateModuleToLLVMIR(llvmModule, context);
  if (!module)
    return nullptr;
  declareAllocatorNoAlias(*module);
  std::string error;
  auto machine = targetMachine(cpu, error);
  if (!machine) {
    llvm::errs() << "attnc: error: " << error << "\n";
    return nullptr;
  }
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(machine->getTargetTriple().str());
  if (auto err = mlir::makeOptimizingTransformer(3, 0, machine.get())(module.get())) {
    llvm::errs() << "attnc: LLVM optimisation failed: " << llvm::toString(std::move(err))
                 << "\n";
    return nullptr;
  }
  return module;
}

std::string cpuName(const std::string &requested) {
  std::string cpu = effectiveCpu(requested);
  return cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu;
}

std::string cpuFeatures(const std::string &requested) {
  std::string cpu = effectiveCpu(requested);
  std::vector<std::string> enabled;
  if (cpu == "native") {
    for (auto &[feature, on] : llvm::sys::getHostCPUFeatures())
      if (on)
        enabled.push_back(feature.str());
  } else {
    // The CPU's own features and those they imply (AVX2: AVX, SSE4.2, ...).
    llvm::SmallVector<llvm::StringRef> features;
    llvm::X86::getFeaturesForCPU(cpu, features);
    llvm::StringMap<bool> all;
    for (llvm::StringRef f : features) {
      all[f] = true;
      llvm::X86::updateImpliedFeatures(f, true, all);
    }
    for (auto &entry : all)
      if (entry.getValue())
        enabled.push_back(entry.getKey().str());
  }
  std::sort(enabled.begin(), enabled.end());
  std::string list;
  for (const std::string &f : enabled)
    if (attn::cpuHas(f).has_value())
      list += (list.empty() ? "" : ",") + f;
  return list;
}

// Native code for an optimised module.
static std::string emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                              std::string &object) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the host target cannot emit object files";
  pm.run(module);
  object.assign(bytes.begin(), bytes.end());
  return "";
}

std::string compileObject(mlir::ModuleOp llvmModule, const std::string &cpu, std::string &object) {
  std::string error;
  auto machine = targetMachine(cpu, error);
  if (!machine)
    return error;
  llvm::LLVMContext context;
  auto module = toOptimizedLLVMIR(llvmModule, context, cpu);
  if (!module)
    return "cannot translate the module to LLVM IR";
  return emitObject(*module, *machine, object);
}

std::string compileObjects(mlir::ModuleOp llvmModule, const std::string &cpu, unsigned parts,
                           const std::string &prefix, std::vector<std::string> &objects) {
  objects.clear();
  configureLLVM();
  std::string error;
  auto machine = targetMachine(cpu, error);
  if (!machine)
    return error;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = mlir::translateModuleToLLVMIR(llvmModule, context);
  if (!module)
    return "cannot translate the module to LLVM IR";
  declareAllocatorNoAlias(*module);
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(machine->getTargetTriple().str());
  // Each function goes to the part with the least code so far, largest first, so that the
  // parts take about as long; global variables go to the first. Private symbols become
  // hidden ones, so that each part links to what the others define, named apart from
  // another program's (an executable links a model's length buckets together).
  std::vector<llvm::Function *> defined;
  for (llvm::Function &f : *module)
    if (!f.isDeclaration())
      defined.push_back(&f);
  parts = std::max<unsigned>(1, std::min<size_t>(parts, defined.size()));
  std::stable_sort(defined.begin(), defined.end(), [](llvm::Function *a, llvm::Function *b) {
    return a->getInstructionCount() > b->getInstructionCount();
  });
  std::map<const llvm::GlobalValue *, unsigned> owner;
  std::vector<size_t> load(parts, 0);
  for (llvm::Function *f : defined) {
    unsigned p = std::min_element(load.begin(), load.end()) - load.begin();
    owner[f] = p;
    load[p] += f->getInstructionCount();
  }
  for (llvm::GlobalValue &g : module->global_values()) {
    if (!owner.count(&g))
      owner[&g] = 0;
    if (!g.hasLocalLinkage())
      continue;
    g.setLinkage(llvm::GlobalValue::ExternalLinkage);
    g.setVisibility(llvm::GlobalValue::HiddenVisibility);
    g.setName(prefix + "local." + (g.hasName() ? g.getName().str() : std::string("unnamed")));
  }
  // The parts as bitcode: each thread reads its own into its own context (a context is not
  // shared between threads).
  std::vector<llvm::SmallVector<char, 0>> bitcode(parts);
  for (unsigned p = 0; p < parts; ++p) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(*module, map, [&](const llvm::GlobalValue *g) {
          auto it = owner.find(g);
          return it != owner.end() && it->second == p;
        });
    llvm::raw_svector_ostream out(bitcode[p]);
    llvm::WriteBitcodeToFile(*part, out);
  }
  module.reset();
  objects.resize(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  auto compilePart = [&](size_t i) {
    llvm::LLVMContext partContext;
    auto part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(llvm::StringRef(bitcode[i].data(), bitcode[i].size()), "part"),
        partContext);
    if (!part) {
      errors[i] = llvm::toString(part.takeError());
      return;
    }
    std::string partError;
    auto partMachine = targetMachine(cpu, partError);
    if (!partMachine) {
      errors[i] = partError;
      return;
    }
    if (auto err = mlir::makeOptimizingTransformer(3, 0, partMachine.get())(part->get())) {
      errors[i] = "LLVM optimisation failed: " + llvm::toString(std::move(err));
      return;
    }
    errors[i] = emitObject(**part, *partMachine, objects[i]);
  };
  std::vector<std::thread> workers;
  for (size_t i = 1; i < bitcode.size(); ++i)
    workers.emplace_back(compilePart, i);
  if (!bitcode.empty())
    compilePart(0);
  for (std::thread &w : workers)
    w.join();
  for (const std::string &e : errors)
    if (!e.empty())
      return e;
  return "";
}

std::string writeObject(mlir::ModuleOp llvmModule, const std::string &path,
                        const std::string &cpu) {
  std::string object;
  if (std::string error = compileObject(llvmModule, cpu, object); !error.empty())
    return error;
  // Write to a temporary file and rename, so a failed build never leaves a half object.
  std::string tmp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return "cannot write " + tmp + ": " + ec.message();
    out << object;
    out.close();
    if (out.has_error())
      return "cannot write " + tmp + ": " + out.error().message();
  }
  if (auto rc = llvm::sys::fs::rename(tmp, path))
    return "cannot rename " + tmp + " to " + path + ": " + rc.message();
  return "";
}

} // namespace attn::target
