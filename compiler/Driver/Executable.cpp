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
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;

namespace attn::driver {
namespace {

// The runtime an executable links, where this attnc finds it: an installed copy beside it
// (PREFIX/bin/attnc, PREFIX/lib, PREFIX/include), else the build tree it was built in.
struct RuntimeFiles {
  std::string includeDir;
  std::vector<std::string> libraries; // static archives, any order (linked as a group)
  std::string capiLibrary, capiHeader; // a library's C API in place of the executable's main
  // What a program compiled with --device cuda links besides: attnc's CUDA runtime, then the
  // toolkit's (kCudaLinkFlags: the static CUDA runtime's archive first, then a run path for
  // cuBLASLt, which the runtime opens at its first product, and the system libraries the CUDA
  // runtime needs); empty where attnc was built without CUDA.
  std::vector<std::string> cuda;
  std::string subwords; // runtime/subwords' archive (SentencePiece's libraries come with it)
};

// The CUDA part of `r`, with attnc's CUDA runtime at `library` (absent: none).
void addCuda(RuntimeFiles &r, const std::string &library) {
  std::error_code ec;
  if (library.empty() || !fs::exists(library, ec))
    return;
  r.cuda.push_back(library);
  for (const char *const *flag = kCudaLinkFlags; *flag; ++flag)
    r.cuda.push_back(*flag);
}

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
    r.capiLibrary = (prefix / ATTN_INSTALL_LIBDIR / "libAttnRuntimeCApi.a").string();
    r.subwords = (prefix / ATTN_INSTALL_LIBDIR / "libAttnRuntimeSubwords.a").string();
    r.capiHeader = r.includeDir + "/attn/capi.h";
    addCuda(r, (prefix / ATTN_INSTALL_LIBDIR / "libAttnRuntimeCuda.a").string());
    return r;
  }
  r.includeDir = ATTN_BUILD_RUNTIME_INCLUDE;
  r.libraries.assign(std::begin(kBuildRuntimeLibraries), std::end(kBuildRuntimeLibraries));
  r.capiLibrary = kBuildCApiLibrary;
  r.subwords = kBuildSubwordsLibrary;
  r.capiHeader = r.includeDir + "/attn/capi.h";
  addCuda(r, kBuildCudaLibrary);
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
    // The session took the checkpoint for this spec's model (attnc's own check); the bundled
    // copy records this attnc's equations, which the executable checks its weights file against.
    ckpt.metadata[task::kEquationsKey] =
        app::checkpointMetadata(modelConfig(s)).at(task::kEquationsKey);
  } else {
    ckpt.metadata = app::checkpointMetadata(modelConfig(s));
    if (task::hasVocabularies(session.dataConfig()))
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
  return "  .section .rodata\n" + blob("attn_bundle_config", config, configSize) +
         blob("attn_bundle_weights", weights, weightsSize) +
         "  .section .note.GNU-stack,\"\",@progbits\n";
}

// Runs `args` (args[0] found on PATH); "" or the error with what it printed.
std::string runTool(const std::vector<std::string> &args, const fs::path &log,
                    const fs::path &input = {}) {
  auto found = llvm::sys::findProgramByName(args[0]);
  if (!found)
    return "attnc compile --exe, --lib and an object with decode buckets need '" + args[0] +
           "', which is not on PATH (apt-get install g++ binutils, or set CXX)";
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string logPath = log.string();
  std::string inputPath = input.string();
  std::optional<llvm::StringRef> redirects[] = {input.empty() ? std::optional<llvm::StringRef>()
                                                              : llvm::StringRef(inputPath),
                                                llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*found, refs, std::nullopt, redirects, 0, 0, &error);
  if (rc == 0)
    return "";
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string command;
  for (const std::string &a : args)
    command += (command.empty() ? "" : " ") + a;
  return "building the executable, library or object failed (" +
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

// The model's programs written into `dir` as objects and C headers: the full program (stem
// "model") and, for decode.buckets / decode.batch_buckets, the inference program of each
// shorter source length and fewer rows (stem "bucket<length>x<rows>"), which must read the
// full program's parameters. With `parts`, each program is objects compiled on every core
// (Session::writeObjects), else one object.
struct Programs {
  std::vector<std::string> objects; // every program's
  std::vector<std::string> headers; // names in `dir`: the full program's, then each bucket's
  std::string bucketList;           // "&attn_<bucket>_program, " for each bucket
  bool cuda = false;                // some program runs on the GPU (--device cuda)
};

std::string writePrograms(Session &session, const fs::path &dir, const std::string &cpu,
                          bool parts, Programs &out) {
  auto write = [&](Session &program, const std::string &stem) {
    std::string header = stem + ".h", object = (dir / (stem + ".o")).string();
    std::vector<std::string> objects = {object};
    std::string error =
        parts ? program.writeObjects((dir / stem).string(), (dir / header).string(), cpu, objects)
              : program.writeObject(object, (dir / header).string(), cpu);
    out.objects.insert(out.objects.end(), objects.begin(), objects.end());
    out.headers.push_back(header);
    if (error.empty() && program.manifest().device == "cuda")
      out.cuda = true;
    return error;
  };
  if (std::string error = write(session, "model"); !error.empty() || !session.hasSpec())
    return error;
  for (auto [length, rows] : yaml::decodeBuckets(session.spec())) {
    std::unique_ptr<Session> bucket = session.bucketSession({length, 0, rows, 0});
    if (!bucket)
      return "decode buckets: the model does not compile for " + std::to_string(length) +
             " source tokens in " + std::to_string(rows) + " rows";
    if (std::string error =
            write(*bucket, "bucket" + std::to_string(length) + "x" + std::to_string(rows));
        !error.empty())
      return error;
    if (!session.sharesParameters(*bucket))
      return "decode.buckets: this model cannot be bucketed";
    out.bucketList += "&attn_" + bucket->manifest().cname + "_program, ";
  }
  return "";
}

// The model's parts in a temporary directory: its objects (the program, then one per length
// bucket), their manifests (program.c) and its configuration and weights (payload.s, and the
// weights image for a file beside it).
struct Bundle {
  TempDir tmp;
  std::vector<std::string> objects;
  fs::path program, payload, weightsImage;
  bool cuda = false; // it links the CUDA runtime (Programs::cuda)
  bool subwords = false; // its model reads subwords: it links runtime/subwords and SentencePiece
};

std::string makeBundle(Session &session, const std::string &cpu, const std::string &weightsFile,
                       Bundle &b) {
  // The bundle's program trains too, in train.precision; where decode.precision differs (int8
  // decoding, which has no training), it is the inference program alone, in decode.precision:
  // such an executable or library decodes and refuses to train (StepRunner).
  bool trains = session.trainsInDecodePrecision();
  if ((trains && !session.runTo(Stage::Grad)) || !session.runTo(Stage::LLVM))
    return "the model does not compile";
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("attnc-bundle", dir))
    return "cannot create a temporary directory";
  b.tmp.path = dir.str().str();
  Programs programs;
  if (std::string error = writePrograms(session, b.tmp.path, cpu, /*parts=*/true, programs);
      !error.empty())
    return error;
  b.objects = programs.objects;
  b.cuda = programs.cuda;
  if (b.cuda && runtimeFiles().cuda.empty())
    return "this attnc has no CUDA runtime to link a --device cuda program with (it was built "
           "without the CUDA backend, or installed without libAttnRuntimeCuda.a; docs/cuda.md)";
  std::string programC;
  for (const std::string &header : programs.headers)
    programC += "#include \"" + header + "\"\n";

  app::ModelConfig model = modelConfig(session.spec());
  // A subword model's program references runtime/subwords, so that its registering object is
  // linked from the archive (nothing else names it), and SentencePiece with it.
  b.subwords = data::isSubwords(model.data.tokens);
  if (b.subwords)
    programC += "extern const char attn_subwords_linked;\n"
                "const char *const attn_bundle_subwords = &attn_subwords_linked;\n";
  // An executable reads a relative data path from its working directory (docs/deploy.md), as
  // written in the spec, not from where the spec was when it was compiled.
  for (auto [key, path] : {std::pair{"data.path", &model.data.path},
                           std::pair{"data.valid_path", &model.data.validPath}}) {
    auto written = session.spec().writtenPaths.find(key);
    if (written != session.spec().writtenPaths.end())
      *path = written->second;
  }
  std::string config = app::toJson(model);
  fs::path configFile = b.tmp.path / "config.json";
  b.weightsImage = b.tmp.path / "weights.safetensors";
  if (std::string error = writeFile(configFile, config); !error.empty())
    return error;
  try {
    checkpoint::save(b.weightsImage.string(), weightsOf(session));
  } catch (const std::exception &e) {
    return e.what();
  }
  uint64_t weightsSize = fs::file_size(b.weightsImage);
  bool embedded = weightsFile.empty();
  b.payload = b.tmp.path / "payload.s";
  b.program = b.tmp.path / "program.c";
  if (std::string error =
          writeFile(b.payload, payloadAssembly(configFile, config.size(),
                                               embedded ? b.weightsImage : fs::path(),
                                               embedded ? weightsSize : 0));
      !error.empty())
    return error;
  programC += "const attn_program_info *const attn_bundle_program = &attn_" +
              session.manifest().cname + "_program;\n" +
              "const attn_program_info *const attn_bundle_buckets[] = {" + programs.bucketList +
              "0};\n" +
              "const char *const attn_bundle_weights_file = " +
              (embedded ? std::string("0") : cString(weightsFile)) + ";\n";
  return writeFile(b.program, programC);
}

// The C++ compiler: $CXX (its words: "ccache g++" runs g++ under ccache), else c++.
std::vector<std::string> compilerCommand() {
  const char *cxx = std::getenv("CXX");
  std::vector<std::string> words;
  std::istringstream in(cxx && *cxx ? cxx : "c++");
  for (std::string w; in >> w;)
    words.push_back(w);
  return words.empty() ? std::vector<std::string>{"c++"} : words;
}

// What links oneDNN where attnc found it (-L and a run path when it is not a system
// directory, so that a oneDNN under /opt both links and loads).
std::vector<std::string> onednnFlags() {
  std::string dir = kOneDnnLibraryDir;
  std::vector<std::string> flags;
  if (!dir.empty() && dir.rfind("/usr/lib", 0) != 0 && dir.rfind("/lib", 0) != 0)
    flags = {"-L" + dir, "-Wl,-rpath," + dir};
  flags.push_back("-ldnnl");
  return flags;
}

// The shared libraries a program with the runtime links beside it: SentencePiece for a
// subword model, oneDNN, zlib (checkpoints' CRC-32), libgomp, libm. The executable's link and
// the line `--lib` prints for a C program both take them from here.
std::vector<std::string> systemLibraries(bool subwords) {
  std::vector<std::string> flags;
  if (subwords)
    flags = {"-lsentencepiece", "-lsentencepiece_train"};
  for (const std::string &f : onednnFlags())
    flags.push_back(f);
  flags.insert(flags.end(), {"-lz", "-fopenmp", "-lm"});
  return flags;
}

// Each `from` into place as its `to` (parent directories created): all are copied beside
// their places first, then renamed there one after the other, so each appears whole and a
// failure before the renames leaves every old file as it was.
std::string placeAll(const std::vector<std::pair<fs::path, fs::path>> &files) {
  std::error_code ec;
  std::vector<fs::path> staged;
  auto unstage = [&] {
    for (const fs::path &p : staged)
      fs::remove(p, ec);
  };
  for (const auto &[from, to] : files) {
    fs::create_directories(to.has_parent_path() ? to.parent_path() : fs::path("."), ec);
    fs::path tmp = to.string() + ".tmp-" + std::to_string(::getpid());
    fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      std::string error = "cannot write " + to.string() + ": " + ec.message();
      unstage();
      return error;
    }
    staged.push_back(tmp);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    fs::rename(staged[i], files[i].second, ec);
    if (ec) {
      std::string error = "cannot write " + files[i].second.string() + ": " + ec.message();
      unstage();
      return error;
    }
  }
  return "";
}

// The compiler's command that links the bundle `b`: `head` (the output and its kind), its
// program.c, payload.s and objects, then `whole` (archives taken whole), `libraries` (as a
// group: any order), for a --device cuda bundle the CUDA runtime and its libraries, then
// oneDNN, OpenMP and libm.
std::vector<std::string> linkCommand(const Bundle &b, const RuntimeFiles &runtime,
                                     const std::vector<std::string> &head,
                                     const std::vector<std::string> &whole,
                                     const std::vector<std::string> &libraries) {
  std::vector<std::string> args = compilerCommand();
  args.insert(args.end(), head.begin(), head.end());
  args.insert(args.end(), {"-I" + runtime.includeDir, "-x", "c", b.program.string(), "-x",
                           "assembler", b.payload.string(), "-x", "none"});
  args.insert(args.end(), b.objects.begin(), b.objects.end());
  args.insert(args.end(), whole.begin(), whole.end());
  // The probes attn::Program and the decoders reach through weak references
  // (attn/cuda/Offload.h), which pull nothing from an archive by themselves: all of them are
  // in the object that defines this one (runtime/cuda/program.cpp).
  if (b.cuda)
    args.push_back("-Wl,-u,attn_cuda_device_unavailable");
  args.push_back("-Wl,--start-group");
  args.insert(args.end(), libraries.begin(), libraries.end());
  if (b.cuda)
    args.push_back(runtime.cuda.front());
  args.push_back("-Wl,--end-group");
  if (b.cuda)
    args.insert(args.end(), runtime.cuda.begin() + 1, runtime.cuda.end());
  if (b.subwords)
    args.push_back(runtime.subwords);
  for (const std::string &f : systemLibraries(b.subwords))
    args.push_back(f);
  return args;
}

} // namespace

std::string writeExecutable(Session &session, const ExecutableOptions &o) {
  Bundle b;
  if (std::string error = makeBundle(session, o.cpu, o.weightsFile, b); !error.empty())
    return error;
  RuntimeFiles runtime = runtimeFiles();
  fs::path linked = b.tmp.path / "exe";
  std::vector<std::string> args =
      linkCommand(b, runtime, {"-o", linked.string()}, {}, runtime.libraries);
  if (std::string error = runTool(args, b.tmp.path / "link.log"); !error.empty())
    return error;
  std::error_code ec;
  fs::permissions(linked,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  // The weights file first: an executable never names a file not there yet.
  fs::path out = o.output;
  std::vector<std::pair<fs::path, fs::path>> files;
  if (!o.weightsFile.empty())
    files.push_back({b.weightsImage,
                     (out.has_parent_path() ? out.parent_path() : fs::path(".")) / o.weightsFile});
  files.push_back({linked, out});
  return placeAll(files);
}

std::string writeObjectFile(Session &session, const ObjectOptions &o) {
  if (!session.runTo(Stage::LLVM))
    return "the model does not compile";
  TempDir tmp;
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("attnc-object", dir))
    return "cannot create a temporary directory";
  tmp.path = dir.str().str();
  Programs programs;
  if (std::string error = writePrograms(session, tmp.path, o.cpu, /*parts=*/false, programs);
      !error.empty())
    return error;
  std::string text;
  for (const std::string &header : programs.headers) {
    std::ifstream in(tmp.path / header);
    text += (text.empty() ? "" : "\n") +
            std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::path object = programs.objects.front();
  if (!programs.bucketList.empty()) {
    const std::string &cname = session.manifest().cname;
    std::string guard = "ATTN_MODEL_" + llvm::StringRef(cname).upper() + "_BUCKETS_H";
    text += "\n#ifndef " + guard + "\n#define " + guard +
            "\n/* The bucket programs (decode.buckets, decode.batch_buckets): inference for shorter\n"
            " * sources or fewer rows, each with its own entries, all reading the parameters of\n"
            " * attn_" + cname + "_program. Null-terminated. */\n"
            "static const attn_program_info *const attn_" + cname + "_buckets[] = {" +
            programs.bucketList +
            "0};\n#endif\n";
    fs::path merged = tmp.path / "merged.o";
    std::vector<std::string> args = compilerCommand();
    args.insert(args.end(), {"-r", "-nostdlib", "-o", merged.string()});
    args.insert(args.end(), programs.objects.begin(), programs.objects.end());
    if (std::string error = runTool(args, tmp.path / "merge.log"); !error.empty())
      return error;
    object = merged;
  }
  fs::path finalHeader = tmp.path / "final.h";
  if (std::string error = writeFile(finalHeader, text); !error.empty())
    return error;
  return placeAll({{object, o.output}, {finalHeader, o.header}});
}

std::string writeLibrary(Session &session, const LibraryOptions &o) {
  bool shared = llvm::StringRef(o.output).ends_with(".so");
  if (!shared && !llvm::StringRef(o.output).ends_with(".a"))
    return "--lib writes LIB.a (a static library) or LIB.so (a shared one), got '" + o.output + "'";
  Bundle b;
  if (std::string error = makeBundle(session, o.cpu, "", b); !error.empty())
    return error;
  RuntimeFiles runtime = runtimeFiles();
  // The C API in place of the executable's main.
  std::vector<std::string> libraries;
  for (const std::string &lib : runtime.libraries)
    if (lib.find("libAttnRuntimeExe.a") == std::string::npos)
      libraries.push_back(lib);
  libraries.insert(libraries.begin(), runtime.capiLibrary);
  fs::path built = b.tmp.path / (shared ? "lib.so" : "lib.a");
  std::vector<std::string> cxx = compilerCommand();
  if (shared) {
    // Only the C API is exported: the runtime's and the bundle's symbols stay inside, so two
    // such libraries in one process do not resolve to one another's model.
    fs::path exports = b.tmp.path / "exports.map";
    if (std::string error = writeFile(exports, "{ global: attnc_*; local: *; };\n"); !error.empty())
      return error;
    std::vector<std::string> args =
        linkCommand(b, runtime,
                    {"-shared", "-Wl,--version-script=" + exports.string(), "-o", built.string()},
                    {"-Wl,--whole-archive", libraries[0], "-Wl,--no-whole-archive"},
                    std::vector<std::string>(libraries.begin() + 1, libraries.end()));
    if (std::string error = runTool(args, b.tmp.path / "link.log"); !error.empty())
      return error;
  } else {
    fs::path program = b.tmp.path / "program.o", payload = b.tmp.path / "payload.o";
    for (auto [source, object, language] :
         {std::tuple(b.program, program, "c"), std::tuple(b.payload, payload, "assembler")}) {
      std::vector<std::string> args = cxx;
      args.insert(args.end(), {"-c", "-fPIC", "-I" + runtime.includeDir, "-x", language,
                               source.string(), "-o", object.string()});
      if (std::string error = runTool(args, b.tmp.path / "compile.log"); !error.empty())
        return error;
    }
    // One archive with everything: the model's parts and the runtime's objects, for --device
    // cuda attnc's CUDA runtime and the static CUDA runtime too (cuBLASLt, a shared library,
    // is opened at run time: docs/cuda.md). ar's MRI script merges archives; it cannot quote, so a
    // path with a space or one of +,;* would be misread.
    if (b.cuda)
      libraries.insert(libraries.end(), runtime.cuda.begin(), runtime.cuda.begin() + 2);
    // A subword model's: runtime/subwords (SentencePiece itself is shared: the program that
    // links the archive adds -lsentencepiece -lsentencepiece_train, docs/deploy.md).
    if (b.subwords)
      libraries.push_back(runtime.subwords);
    for (const std::string &path : libraries)
      if (path.find_first_of(" \t+,;*") != std::string::npos)
        return "--lib cannot merge the runtime library '" + path +
               "' (ar scripts cannot quote its characters); install attnc under a plainer path";
    std::string script = "CREATE " + built.string() + "\n";
    for (const std::string &lib : libraries)
      script += "ADDLIB " + lib + "\n";
    std::vector<std::string> objects = b.objects;
    objects.insert(objects.end(), {program.string(), payload.string()});
    for (const std::string &obj : objects)
      script += "ADDMOD " + obj + "\n";
    script += "SAVE\nEND\n";
    fs::path mri = b.tmp.path / "lib.mri";
    if (std::string error = writeFile(mri, script); !error.empty())
      return error;
    if (std::string error = runTool({"ar", "-M"}, b.tmp.path / "ar.log", mri); !error.empty())
      return error;
  }
  if (o.linkLine) {
    fs::path out(o.output), headerDir = fs::path(o.header).parent_path();
    std::string line = "cc PROGRAM.c -I" + (headerDir.empty() ? std::string(".") : headerDir.string());
    std::string dir = out.has_parent_path() ? out.parent_path().string() : ".";
    std::string file = out.filename().string();
    if (shared) {
      // Its own dependencies are recorded in it: the program names it and where to find it.
      if (file.rfind("lib", 0) == 0)
        line += " -L" + dir + " -l" + file.substr(3, file.size() - 6);
      else
        line += " " + o.output;
      line += " -Wl,-rpath," + fs::absolute(dir).lexically_normal().string();
    } else {
      // A C program's driver does not add the C++ library the archive needs.
      line += " " + o.output;
      for (const std::string &f : systemLibraries(b.subwords))
        line += " " + f;
      line += " -lstdc++";
      if (b.cuda)
        for (auto f = runtime.cuda.begin() + 2; f != runtime.cuda.end(); ++f)
          line += " " + *f;
    }
    *o.linkLine = line;
  }
  return placeAll({{runtime.capiHeader, o.header}, {built, o.output}});
}

} // namespace attn::driver
