#include "compiler/Driver/Executable.h"

#include "compiler/Driver/TaskConfig.h"

#include "attn/Init.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/train/Trainer.h"

#include "RuntimeFiles.inc" // generated: the build tree's runtime

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace attn::driver {
namespace {

// The runtime an executable links, where this attnc finds it: an installed copy beside it
// (PREFIX/bin/attnc, PREFIX/lib, PREFIX/include), else the build tree it was built in.
struct RuntimeFiles {
  std::string includeDir;
  std::vector<std::string> libraries; // static archives, any order (linked as a group)
};

RuntimeFiles runtimeFiles() {
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  fs::path prefix = fs::path(self).parent_path().parent_path();
  RuntimeFiles r;
  std::error_code ec;
  // (A build tree has bin/ and lib/ too, but no include/.)
  if (fs::exists(prefix / ATTN_INSTALL_LIBDIR / "libAttnRuntimeExe.a", ec) &&
      fs::exists(prefix / ATTN_INSTALL_INCLUDEDIR / "attn" / "abi.h", ec)) {
    r.includeDir = (prefix / ATTN_INSTALL_INCLUDEDIR).string();
    for (const char *part :
         {"Exe", "App", "Task", "Decode", "Train", "Data", "Checkpoint", "Cpu", "Core"})
      r.libraries.push_back(
          (prefix / ATTN_INSTALL_LIBDIR / ("libAttnRuntime" + std::string(part) + ".a")).string());
    return r;
  }
  r.includeDir = ATTN_BUILD_RUNTIME_INCLUDE;
  r.libraries.assign(std::begin(kBuildRuntimeLibraries), std::end(kBuildRuntimeLibraries));
  return r;
}

// `text` into `path`; "" or the error.
std::string writeFile(const fs::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out.flush() ? "" : "cannot write " + path.string();
}

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// The parameters (no optimizer state: a deployed model trains from scratch) with the metadata
// a checkpoint carries: the open checkpoint's, else freshly initialised from train.seed with
// the spec and the data's vocabularies.
checkpoint::Checkpoint weightsOf(Session &session) {
  target::ProgramInfo info(session.manifest(), [](const std::string &) { return nullptr; });
  const yaml::Spec &s = session.spec();
  std::vector<Tensor> params = initParams(*info.get(), s.train.seed);
  checkpoint::Checkpoint ckpt;
  if (session.hasCheckpoint()) {
    ckpt.metadata = train::loadCheckpoint(session.checkpointPath(), *info.get(), params,
                                          /*statesOptional=*/true);
  } else {
    ckpt.metadata = {{task::kModelKey, s.name}, {task::kSpecKey, yaml::specToYaml(s)}};
    if (task::usesPairs(task::parseTask(yaml::nameOf(s.task))))
      for (auto &[key, value] : task::pairMetadata(session.compiledData()))
        ckpt.metadata[key] = value;
  }
  for (int i = 0; i < info.get()->num_params; ++i)
    if (!std::strchr(info.get()->params[i].name, '/'))
      ckpt.tensors.emplace_back(info.get()->params[i].name, std::move(params[i]));
  return ckpt;
}

// payload.s: the configuration and the weights image as symbols (see runtime/exe/Main.cpp).
std::string payloadAssembly(const fs::path &config, uint64_t configSize, const fs::path &weights,
                            uint64_t weightsSize) {
  auto blob = [](const char *name, const fs::path &file, uint64_t size) {
    std::string s = "  .globl " + std::string(name) + "\n  .balign 64\n" + name + ":\n";
    if (!file.empty())
      s += "  .incbin " + cString(file.string()) + "\n";
    else
      s += "  .byte 0\n";
    s += "  .globl " + std::string(name) + "_size\n  .balign 8\n" + name + "_size:\n  .quad " +
         std::to_string(size) + "\n";
    return s;
  };
  return "  .section .rodata\n" + blob("attn_exe_config", config, configSize) +
         blob("attn_exe_weights", weights, weightsSize) +
         "  .section .note.GNU-stack,\"\",@progbits\n";
}

// Runs `args` (args[0] found on PATH); "" or the error with what it printed.
std::string runTool(const std::vector<std::string> &args, const fs::path &log) {
  auto found = llvm::sys::findProgramByName(args[0]);
  if (!found)
    return "attnc compile --exe links with a C++ compiler, and '" + args[0] +
           "' is not on PATH (apt-get install g++, or set CXX)";
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string logPath = log.string();
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath),
                                                llvm::StringRef(logPath)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*found, refs, std::nullopt, redirects, 0, 0, &error);
  if (rc == 0)
    return "";
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string command;
  for (const std::string &a : args)
    command += (command.empty() ? "" : " ") + a;
  return "linking the executable failed (" +
         (error.empty() ? "exit " + std::to_string(rc) : error) + "): " + command + "\n" + output;
}

// A directory that is removed with everything in it when the compile ends.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty())
      fs::remove_all(path, ec);
  }
};

} // namespace

std::string writeExecutable(Session &session, const ExecutableOptions &o) {
  if (!session.runTo(Stage::Grad) || !session.runTo(Stage::LLVM))
    return "the model does not compile";
  TempDir tmp;
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("attnc-exe", dir))
    return "cannot create a temporary directory";
  tmp.path = dir.str().str();
  const target::Manifest &manifest = session.manifest();
  fs::path object = tmp.path / "model.o", header = tmp.path / "model.h";
  if (std::string error = session.writeObject(object.string(), header.string(), o.cpu);
      !error.empty())
    return error;

  const yaml::Spec &s = session.spec();
  std::string config = app::toJson(modelConfig(s));
  fs::path configFile = tmp.path / "config.json", weightsImage = tmp.path / "weights.safetensors";
  if (std::string error = writeFile(configFile, config); !error.empty())
    return error;
  try {
    checkpoint::save(weightsImage.string(), weightsOf(session));
  } catch (const std::exception &e) {
    return e.what();
  }
  uint64_t weightsSize = fs::file_size(weightsImage);
  bool embedded = o.weightsFile.empty();
  fs::path payload = tmp.path / "payload.s", program = tmp.path / "program.c";
  if (std::string error = writeFile(payload, payloadAssembly(configFile, config.size(),
                                                             embedded ? weightsImage : fs::path(),
                                                             embedded ? weightsSize : 0));
      !error.empty())
    return error;
  if (std::string error = writeFile(
          program,
          "#include \"model.h\"\nconst attn_program_info *const attn_exe_program = &attn_" +
              manifest.cname + "_program;\nconst char *const attn_exe_weights_file = " +
              (embedded ? std::string("0") : cString(o.weightsFile)) + ";\n");
      !error.empty())
    return error;

  RuntimeFiles runtime = runtimeFiles();
  const char *cxx = std::getenv("CXX");
  fs::path linked = tmp.path / "exe";
  std::vector<std::string> args = {cxx && *cxx ? cxx : "c++",
                                   "-o",
                                   linked.string(),
                                   "-I" + runtime.includeDir,
                                   "-x",
                                   "c",
                                   program.string(),
                                   "-x",
                                   "assembler",
                                   payload.string(),
                                   "-x",
                                   "none",
                                   object.string(),
                                   "-Wl,--start-group"};
  args.insert(args.end(), runtime.libraries.begin(), runtime.libraries.end());
  args.insert(args.end(), {"-Wl,--end-group", "-ldnnl", "-fopenmp", "-lm"});
  if (std::string error = runTool(args, tmp.path / "link.log"); !error.empty())
    return error;

  // Into place: the weights file first (an executable never names a file not there yet),
  // each by a rename within its directory.
  fs::path out = o.output, outDir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  auto place = [&](const fs::path &from, const fs::path &to) -> std::string {
    fs::path staged = to.string() + ".tmp-" + std::to_string(::getpid());
    fs::copy_file(from, staged, fs::copy_options::overwrite_existing, ec);
    if (!ec)
      fs::rename(staged, to, ec);
    if (!ec)
      return "";
    std::string error = "cannot write " + to.string() + ": " + ec.message();
    fs::remove(staged, ec);
    return error;
  };
  fs::create_directories(outDir, ec);
  if (!embedded)
    if (std::string error = place(weightsImage, outDir / o.weightsFile); !error.empty())
      return error;
  if (std::string error = place(linked, out); !error.empty())
    return error;
  fs::permissions(out,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  return "";
}

} // namespace attn::driver
