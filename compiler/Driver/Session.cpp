#include "compiler/Driver/Session.h"

#include "compiler/Driver/Checkpoint.h"
#include "compiler/Driver/CompileCache.h"
#include "compiler/Driver/TaskConfig.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Object.h"

#include "attn/File.h"
#include "attn/Init.h"
#include "attn/train/Trainer.h"
#ifdef ATTN_HAVE_CUDA
#include "attn/cuda/Device.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

namespace attn::driver {

namespace {

constexpr const char *kStageNames[] = {"spec", "attn", "fused", "grad", "lowered", "llvm", "ptx"};

mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry registry;
  pipelines::registerDialects(registry);
  return registry;
}

} // namespace

std::optional<Stage> parseStage(const std::string &name) {
  for (int i = 0; i <= (int)Stage::PTX; ++i)
    if (name == kStageNames[i])
      return (Stage)i;
  return std::nullopt;
}

const char *stageName(Stage stage) { return kStageNames[(int)stage]; }

Session::Session(SessionOptions options)
    : options_(options), context_(std::make_unique<mlir::MLIRContext>(makeRegistry())) {
  context_->loadAllAvailableDialects();
  // IR diagnostics as the spec's are written: "file:line:col: error: ..." (MLIR's default
  // handler prints loc("file":line:col)), with the op that failed named in the message.
  context_->getDiagEngine().registerHandler([this](mlir::Diagnostic &d) {
    std::string where;
    if (auto loc = mlir::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
      where = loc.getFilename().str() + ":" + std::to_string(loc.getLine()) + ":" +
              std::to_string(loc.getColumn()) + ": ";
    const char *severity = d.getSeverity() == mlir::DiagnosticSeverity::Error     ? "error"
                           : d.getSeverity() == mlir::DiagnosticSeverity::Warning ? "warning"
                           : d.getSeverity() == mlir::DiagnosticSeverity::Remark  ? "remark"
                                                                                  : "note";
    std::string line = (where.empty() ? "attnc: " : where) + severity + ": " + d.str() + "\n";
    if (d.getSeverity() == mlir::DiagnosticSeverity::Remark && !remarksSaid_.insert(line).second)
      return mlir::success();
    std::ostream &os = diagnostics();
    os << line;
    // A remark's notes are the op MLIR prints with it: whole scans, noise beside one line.
    if (d.getSeverity() != mlir::DiagnosticSeverity::Remark)
      for (const mlir::Diagnostic &note : d.getNotes())
        os << "  note: " << note.str() << "\n";
    return mlir::success();
  });
}

Session::~Session() = default;

std::ostream &Session::diagnostics() const {
  return options_.diagnostics ? *options_.diagnostics : std::cerr;
}

void Session::report(const yaml::Diagnostic &d) const {
  ++reported_;
  diagnostics() << d.str() << "\n";
}

bool Session::parsed(std::optional<yaml::Spec> spec, const std::vector<yaml::Diagnostic> &diags) {
  for (const auto &d : diags)
    report(d);
  if (!spec)
    return false;
  // Before anything reads the spec's data: a combination of keys that cannot work (a tagger
  // of subwords) is the spec's error, not the data reader's.
  std::vector<yaml::Diagnostic> problems;
  if (!yaml::checkConsistency(*spec, problems)) {
    for (const auto &d : problems)
      report(d);
    return false;
  }
  spec_ = std::move(spec);
  name_ = spec_->name;
  stage_ = Stage::Spec;
  return true;
}

bool Session::loadSpec(const std::vector<std::string> &files,
                       const std::vector<yaml::Override> &overrides) {
  std::vector<yaml::Diagnostic> diags;
  std::optional<yaml::Spec> spec = yaml::parseSpecFiles(files, overrides, diags);
  return parsed(std::move(spec), diags);
}

bool Session::loadSpecText(const std::string &text, const std::string &name,
                           const std::vector<yaml::Override> &overrides) {
  std::vector<yaml::Diagnostic> diags;
  std::optional<yaml::Spec> spec = yaml::parseSpecString(text, name, overrides, diags);
  return parsed(std::move(spec), diags);
}

bool Session::openCheckpoint(const std::string &path,
                             const std::vector<yaml::Override> &overrides) {
  std::string warning;
  std::string file = task::checkpointFile(path, &warning);
  if (!warning.empty())
    diagnostics() << "attnc: warning: " << warning << "\n";
  task::Metadata meta = train::readCheckpointMetadata(file);
  if (!spec_) {
    // The checkpoint carries the spec it was trained from.
    auto it = meta.find(task::kSpecKey);
    if (it == meta.end())
      throw std::runtime_error(file + ": holds no spec; name the MODEL.yaml");
    if (!loadSpecText(it->second, file + ":spec", overrides))
      return false;
    if (yaml::upgradeStoredSpec(*spec_))
      diagnostics() << "attnc: note: " << file
                    << ": its spec predates model.attention.gaussian; keeping the Gaussian "
                       "its local attention was trained with (gaussian: true)\n";
  } else {
    checkModelMatches(*spec_, meta, file);
  }
  checkpoint_ = file;
  checkpointMeta_ = std::move(meta);
  compiledData_.reset();
  return true;
}

task::DataConfig Session::dataConfig() const {
  task::DataConfig c = driver::dataConfig(*spec_);
  c.cacheDir = dataCacheDir_;
  return c;
}

const task::PairData &Session::trainingData() {
  if (!trainingData_) {
    try {
      trainingData_ = task::buildPairs(dataConfig());
    } catch (const FileError &e) {
      // The user's SentencePiece model: named where the spec names it.
      const yaml::Spec &s = *spec_;
      if (s.data.spmModel.empty() || e.path != s.data.spmModel)
        throw;
      throw std::runtime_error(
          yaml::Diagnostic{s.locOf("data.spm_model", s.data.loc),
                           "data.spm_model " + e.path + ": " + e.why,
                           "data.spm_model names a SentencePiece .model file (relative to the "
                           "spec); data.tokens: unigram or bpe trains one instead"}
              .str());
    }
  }
  return *trainingData_;
}

const task::PairData &Session::compiledData(bool withValidation) {
  if (!hasCheckpoint())
    return trainingData();
  if (!compiledData_) {
    task::DataConfig c = dataConfig();
    compiledData_ = task::pairDataFromMetadata(c.task, c.tokens, c.reverseSource,
                                               checkpointMeta_, checkpoint_);
  }
  // The validation pairs, split by the checkpoint's tokenizers (its subword models are not
  // trained again).
  if (withValidation && compiledData_->valid.empty() && compiledData_->textWindows[1].empty()) {
    std::optional<task::PairData> fresh;
    const task::PairData &built =
        trainingData_ ? *trainingData_
                      : fresh.emplace(task::buildPairs(dataConfig(), &*compiledData_));
    compiledData_->valid = built.valid;
    compiledData_->textWindows[1] = built.textWindows[1]; // a language model's
  }
  return *compiledData_;
}

void Session::setModule(mlir::OwningOpRef<mlir::ModuleOp> module, const std::string &name) {
  module_ = std::move(module);
  name_ = name;
  stage_ = Stage::Attn;
  manifest_.reset();
}

bool Session::import() {
  const yaml::Spec &s = *spec_;
  std::vector<yaml::Diagnostic> problems;
  if (!yaml::checkConsistency(s, problems)) {
    for (const auto &d : problems)
      report(d);
    return false;
  }
  task::Task task = task::parseTask(yaml::nameOf(s.task));
  if (options_.uncachedDecoding && !yaml::parallelDecoder(s)) {
    report({s.model.loc,
            "--no-cache decodes an encoder-decoder (task seq2seq) with model.transformer or "
            "model.conv, or samples a Transformer language model (task lm), without its step "
            "cache; this model is task '" +
                std::string(yaml::nameOf(s.task)) + "' with model." + yaml::architectureOf(s),
            "drop --no-cache"});
    return false;
  }
  yaml::ImportOptions options;
  if (importOptions_)
    options = *importOptions_;
  else if (task::usesText(dataConfig()))
    options.vocabSize = compiledData().source.size();
  else if (task == task::Task::Lm)
    options.vocabSize = task::textVocab().size();
  else if (task::usesPairs(task))
    options = importOptions(compiledData());
  options.decodeFull = options_.uncachedDecoding;
  // Each rank of a data-parallel run compiles its shard; the spec (and every checkpoint's copy
  // of it) keeps the global batch, so a run resumes on any number of ranks.
  yaml::Spec shard = s;
  if (int64_t n = options_.batchShards; n > 1) {
    if (s.train.batchSize % n != 0) {
      int64_t up = (s.train.batchSize + n - 1) / n * n;
      report({s.locOf("train.batch_size", s.train.loc),
              "train.batch_size = " + std::to_string(s.train.batchSize) +
                  " is the global batch, and it does not divide over " + std::to_string(n) +
                  " ranks",
              "use a multiple of " + std::to_string(n) +
                  ", e.g. --set train.batch_size=" + std::to_string(up)});
      return false;
    }
    shard.train.batchSize /= n;
  }
  module_ = yaml::importSpec(shard, *context_, options);
  return module_ && succeeded(mlir::verify(*module_));
}

pipelines::FusionOptions Session::fusionOptions(bool training) const {
  pipelines::FusionOptions fusion;
  fusion.recurrence = options_.fuse && options_.fuseRecurrence;
  fusion.attention = options_.fuse && options_.fuseAttention;
  fusion.hoist = options_.fuse && options_.hoist;
  fusion.precision = precision(training);
  return fusion;
}

std::string Session::precision(bool training) const {
  if (!options_.precision.empty())
    return options_.precision;
  if (!spec_)
    return "f32";
  return training ? yaml::nameOf(spec_->train.precision) : yaml::nameOf(spec_->decode.precision);
}

bool Session::precisionRuns(bool training, const std::string &cpu) const {
  // oneDNN's bf16 and int8 matmuls emulate the instructions where they are missing, slower
  // than f32: such a program there would be a slower f32 one, so it is refused rather than run.
  struct Needs {
    const char *policy, *feature, *isa;
  };
  static const Needs kNeeds[] = {{"bf16", "avx512bf16", "AVX512_BF16"},
                                 {"int8", "avx512vnni", "AVX512_VNNI"}};
  std::string policy = precision(training);
  const Needs *needs = nullptr;
  for (const Needs &n : kNeeds)
    if (policy == n.policy)
      needs = &n;
  if (!needs)
    return true;
  std::string features = "," + target::cpuFeatures(cpu) + ",";
  if (features.find("," + std::string(needs->feature) + ",") != std::string::npos)
    return true;
  std::string key = training ? "train.precision" : "decode.precision";
  std::string which = cpu.empty() || cpu == "native" ? "this CPU (" + target::cpuName(cpu) + ")"
                                                      : "the target CPU " + cpu;
  yaml::Loc loc = spec_ ? spec_->locOf(key, training ? spec_->train.loc : spec_->decode.loc)
                        : yaml::Loc{};
  report({loc,
          key + " is " + policy + ", but " + which + " has no " + needs->isa + " instructions (" +
              needs->feature + ")",
          "use precision f32 (--precision f32), or compile for a CPU that has them"});
  return false;
}

bool Session::runPasses(Stage stage) {
  mlir::PassManager pm(context_.get());
  // Fusion runs again in the lowering (for entries training did not see); its remarks once.
  // A program that went through the training pipeline computes in train.precision.
  trained_ = trained_ || stage == Stage::Grad;
  pipelines::FusionOptions fusion = fusionOptions(trained_);
  fusion.remarks = options_.remarks && !remarked_ &&
                   (stage == Stage::Fused || stage == Stage::Grad || stage == Stage::Lowered);
  remarked_ = remarked_ || fusion.remarks;
  switch (stage) {
  case Stage::Fused:
    pipelines::buildFusion(pm, fusion);
    break;
  case Stage::Grad: {
    // A bare attn module trains with the pipeline's defaults (Adam), as attn-opt's attn-train.
    pipelines::TrainingOptions t = spec_ ? trainingOptions(spec_->train) : pipelines::TrainingOptions{};
    t.fusion = fusion;
    t.storeRemarks = options_.remarks; // the grad stage runs once
    t.dataParallel = options_.batchShards > 1;
    pipelines::buildTraining(pm, t);
    break;
  }
  case Stage::Lowered:
    pipelines::buildAttnToLowered(pm, fusion, options_.device);
    break;
  case Stage::LLVM:
    pipelines::buildLoweredToLLVM(pm, target::entryPrefix(manifest_->cname), options_.device);
    break;
  default:
    return false;
  }
  if (failed(pm.run(*module_)))
    return false;
  if (stage == Stage::Lowered) {
    auto manifest = target::readManifest(*module_, name_, yaml::cName(name_));
    if (failed(manifest))
      return false;
    manifest_ = std::move(*manifest);
    // Every loop nest of a --device cuda program is a GPU kernel (attn-linalg-to-gpu, in the
    // LLVM stage), whatever runtime kernels it calls.
    if (options_.device == pipelines::Device::CUDA)
      manifest_->device = "cuda";
  }
  return true;
}

bool Session::runTo(Stage target) {
  if (!stage_)
    return false;
  // Fused and Grad are detours: a module for inference goes from attn straight to the
  // lowering (which fuses), and a module past one of them is past the other's purpose.
  auto done = [&] {
    if (*stage_ == target)
      return true;
    if (target == Stage::Fused && *stage_ > Stage::Fused)
      return true;
    return target != Stage::Grad && *stage_ > target;
  };
  while (!done()) {
    if (target == Stage::Grad && *stage_ > Stage::Grad) {
      // The training entries are added before the lowering, not after.
      diagnostics() << "attnc: error: the module is " << stageName(*stage_)
                    << " already; the training pipeline (grad) runs before that\n";
      return false;
    }
    Stage next = Stage::LLVM;
    switch (*stage_) {
    case Stage::Spec:
      if (!import())
        return false;
      stage_ = Stage::Attn;
      continue;
    case Stage::Attn:
      next = target == Stage::Fused ? Stage::Fused
             : target == Stage::Grad ? Stage::Grad
                                     : Stage::Lowered;
      break;
    case Stage::Fused:
      next = target == Stage::Grad ? Stage::Grad : Stage::Lowered;
      break;
    case Stage::Grad:
      next = Stage::Lowered;
      break;
    case Stage::Lowered:
      next = Stage::LLVM;
      break;
    case Stage::LLVM:
      return true; // unreachable: LLVM is past every other stage
    }
    if (!runPasses(next))
      return false;
    stage_ = next;
  }
  return true;
}

std::optional<std::string> Session::print(Stage stage) {
  if (stage == Stage::Spec)
    return yaml::specToYaml(*spec_);
  if (stage == Stage::PTX)
    return printPTX();
  if (!runTo(stage))
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (stage == Stage::LLVM) {
    llvm::LLVMContext llvmContext;
    auto module = target::toOptimizedLLVMIR(*module_, llvmContext);
    if (!module)
      return std::nullopt;
    module->print(os, nullptr);
  } else {
    module_->print(os);
    os << "\n";
  }
  return os.str();
}

std::optional<std::string> Session::printPTX() {
  if (!runTo(Stage::Lowered))
    return std::nullopt;
  // On a copy: the session's module stays at the lowered stage.
  mlir::OwningOpRef<mlir::ModuleOp> kernels = module_->clone();
  mlir::PassManager pm(context_.get());
  pipelines::buildLoweredToPTX(pm);
  if (failed(pm.run(*kernels)))
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  kernels->walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute a : binary.getObjects()) {
      // (The serializer keeps the C string's terminating NUL, which ptxas refuses.)
      llvm::StringRef ptx = mlir::cast<mlir::gpu::ObjectAttr>(a).getObject().getValue();
      os << "// kernel module @" << binary.getSymName() << "\n" << ptx.rtrim('\0') << "\n";
    }
  });
  return os.str();
}

std::string Session::compileKey() {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << CompileCache::identity() << "\nprogram " << name_ << ", at stage " << stageName(*stage_)
     << "\nfuse recurrence " << fusionOptions(false).recurrence << " attention "
     << fusionOptions(false).attention << " hoist " << fusionOptions(false).hoist << "\nprecision "
     << precision(trained_) << "\ndevice " << pipelines::deviceName(options_.device) << "\n";
  // LLVM's own options change its code (configureLLVM).
  if (const char *llvmArgs = std::getenv("ATTN_LLVM_ARGS"))
    os << "llvm " << llvmArgs << "\n";
  module_->print(os);
  return CompileCache::keyOf(os.str());
}

bool Session::compiledObjects(std::vector<std::string> &objects) {
  if (!stage_ || (*stage_ == Stage::Spec && !runTo(Stage::Attn)) ||
      !precisionRuns(trained_, "native"))
    return false;
  // Remarks come from the fusion in the lowering: a cached program would say nothing.
  std::optional<CompileCache> cache;
  if (!options_.compileCache.empty() && !(options_.remarks && !remarked_))
    cache.emplace(options_.compileCache);
  std::string key;
  if (cache) {
    key = compileKey();
    std::string damaged;
    if (auto entry = cache->find(key, &damaged)) {
      manifest_ = std::move(entry->manifest);
      objects = std::move(entry->objects);
      return true;
    }
    if (!damaged.empty())
      diagnostics() << "attnc: warning: compile cache: " << damaged
                    << "; removed it, compiling again\n";
  }
  if (!runTo(Stage::LLVM))
    return false;
  if (std::string error = target::compileObjects(*module_, "native", compileParts(),
                                                 target::entryPrefix(manifest_->cname), objects);
      !error.empty()) {
    diagnostics() << "attnc: error: " << error << "\n";
    return false;
  }
  if (cache)
    if (std::string error = cache->store(key, {*manifest_, objects}); !error.empty())
      diagnostics() << "attnc: warning: " << error << " (the program works; it will be "
                    << "compiled again next time)\n";
  return true;
}

std::string deviceUnavailable(pipelines::Device device) {
  if (device != pipelines::Device::CUDA)
    return "";
#ifdef ATTN_HAVE_CUDA
  return attn::cuda::deviceUnavailable();
#else
  return "this attnc was built without the CUDA backend (CMake found no nvcc; docs/cuda.md)";
#endif
}

std::unique_ptr<Model> Session::loadModel(std::optional<uint64_t> seed) {
  // Before compiling: a program for a GPU this machine lacks would abort at its first call.
  if (std::string why = deviceUnavailable(options_.device); !why.empty()) {
    diagnostics() << "attnc: error: --device cuda: " << why << "\n";
    return nullptr;
  }
  std::vector<std::string> objects;
  if (!compiledObjects(objects))
    return nullptr;
  auto jit = target::JitProgram::load(objects, *manifest_);
  if (!jit) {
    diagnostics() << "attnc: error: cannot load the compiled program: "
                  << llvm::toString(jit.takeError()) << "\n";
    return nullptr;
  }
  auto m = std::make_unique<Model>();
  m->jit = std::move(*jit);
  m->program = std::make_unique<Program>(m->jit->info());
  uint64_t s = seed.value_or(spec_ ? spec_->train.seed : 1);
  m->params = initParams(m->program->info(), s);
  m->origin = "initialised from seed " + std::to_string(s);
  if (hasCheckpoint()) {
    auto meta = train::loadCheckpoint(checkpoint_, m->program->info(), m->params,
                                      /*statesOptional=*/true);
    m->origin = "from " + checkpoint_ + " (step " + task::stepOf(meta) + ")";
  }
  return m;
}

std::unique_ptr<Model> Session::loadModelOnce(dist::Communicator &ranks, double compileWait,
                                              std::optional<uint64_t> seed) {
  bool share = ranks.size() > 1 && !options_.compileCache.empty();
  if (share && ranks.rank() != 0)
    ranks.barrier("rank 0's compile", compileWait);
  std::unique_ptr<Model> m = loadModel(seed);
  // Rank 0 reaches the barrier when its object is in the cache (or its compile failed, and
  // the error ends every rank).
  if (share && ranks.rank() == 0 && m)
    ranks.barrier("rank 0's compile", compileWait);
  return m;
}

std::unique_ptr<Session> Session::bucketSession(const BucketShape &shape) {
  auto bucket = std::make_unique<Session>(options_);
  std::string what;
  using Part = std::pair<const char *, int64_t>;
  for (auto [tag, value] : {Part{"-s", shape.sourceLength}, Part{"-t", shape.targetLength},
                            Part{"-b", shape.decodeRows}, Part{"-r", shape.trainRows}})
    if (value)
      what += tag + std::to_string(value);
  if (!bucket->loadSpecText(yaml::specToYaml(*spec_), spec_->file + " (bucket " + what + ")"))
    return nullptr;
  // Its own symbols, so that an executable links every bucket beside the full program.
  bucket->name_ = name_ + what;
  yaml::ImportOptions o = importOptions_ ? *importOptions_ : importOptions(compiledData());
  if (shape.sourceLength)
    o.sourceLength = shape.sourceLength;
  if (shape.targetLength)
    o.targetLength = shape.targetLength;
  bucket->setImportOptions(o);
  if (shape.decodeRows) // the decoder's rows (the importer reads decode.batch)
    bucket->spec_->decode.batch = shape.decodeRows;
  if (shape.trainRows)
    bucket->spec_->train.batchSize = shape.trainRows;
  // A bucket has none of its own.
  bucket->spec_->decode.buckets.clear();
  bucket->spec_->decode.batchBuckets.clear();
  bucket->spec_->train.batchTokens = 0;
  bucket->spec_->train.lengthBuckets = yaml::TrainSpec().lengthBuckets;
  return bucket;
}

std::unique_ptr<Model> Session::loadInferenceModel(yaml::DecodePrecision precision) {
  SessionOptions o = options_;
  o.precision = yaml::nameOf(precision);
  auto inference = std::make_unique<Session>(o);
  if (!inference->loadSpecText(yaml::specToYaml(*spec_), spec_->file + " (" + o.precision + ")"))
    return nullptr;
  inference->name_ = name_ + "-" + o.precision; // its own symbols
  inference->setImportOptions(importOptions_ ? *importOptions_ : importOptions(compiledData()));
  if (!inference->precisionRuns(/*training=*/false, "native"))
    return nullptr;
  std::unique_ptr<Model> m = inference->loadModel();
  if (m)
    m->params.clear();
  return m;
}

std::unique_ptr<Model> Session::loadTrainingBucket(const BucketShape &shape,
                                                   dist::Communicator *ranks, double compileWait) {
  std::unique_ptr<Session> bucket = bucketSession(shape);
  if (!bucket || !bucket->runTo(Stage::Grad))
    return nullptr;
  // Only what a training step calls (StepRunner): decoding's entries would double the compile
  // of every shape. (@loss_grad stays even on one process: the manifest lists parameters in
  // the order the entries first read them, and the trainer matches a bucket's to this
  // program's, whose @loss reads them in @loss_grad's order.)
  bool sharded = ranks && ranks->size() > 1;
  const std::set<llvm::StringRef> steps = {"train_step", "loss_grad", "apply_update",
                                           "loss_weight"};
  if (!bucket->removeEntries([&](llvm::StringRef name) { return !steps.count(name); }))
    return nullptr;
  std::unique_ptr<Model> m =
      sharded ? bucket->loadModelOnce(*ranks, compileWait) : bucket->loadModel();
  if (!m || !sharesParameters(*bucket, "train.batch_tokens"))
    return nullptr;
  m->params.clear(); // this program's serve
  return m;
}

bool Session::removeEntries(llvm::function_ref<bool(llvm::StringRef)> unused) {
  for (auto f : module().getOps<mlir::func::FuncOp>())
    if (f.isPublic() && unused(f.getSymName()))
      f.setPrivate();
  mlir::PassManager dce(context_.get());
  dce.addPass(mlir::createSymbolDCEPass());
  if (succeeded(dce.run(module())))
    return true;
  diagnostics() << "attnc: error: removing unused entry points failed\n";
  return false;
}

bool Session::sharesParameters(const Session &bucket, const std::string &key) const {
  // Each of the bucket's parameters is one of this program's, by name and shape (this one may
  // hold optimizer state besides).
  for (const target::TensorDesc &p : bucket.manifest().params)
    if (std::none_of(
            manifest_->params.begin(), manifest_->params.end(),
            [&](const target::TensorDesc &q) { return q.name == p.name && q.shape == p.shape; })) {
      diagnostics() << "attnc: error: " << spec_->file << ": " << key << ": the program '"
                    << bucket.name_ << "' has the parameter '" << p.name << "' "
                    << shapeToString(p.shape) << ", which the full-length one has not; this "
                    << "model cannot be bucketed\n";
      return false;
    }
  return true;
}

std::optional<std::vector<std::unique_ptr<Model>>> Session::loadBuckets() {
  std::vector<std::unique_ptr<Model>> buckets;
  if (!spec_)
    return buckets;
  if (!manifest_ && !runTo(Stage::LLVM))
    return std::nullopt;
  for (auto [length, rows] : yaml::decodeBuckets(*spec_)) {
    // From the compile cache when it holds the bucket: nothing runs before the lookup.
    std::unique_ptr<Session> bucket = bucketSession({length, 0, rows, 0});
    std::unique_ptr<Model> m = bucket ? bucket->loadModel() : nullptr;
    if (!m || !sharesParameters(*bucket))
      return std::nullopt;
    m->params.clear(); // the full program's serve
    buckets.push_back(std::move(m));
  }
  return buckets;
}

std::string Session::writeObject(const std::string &objectPath, const std::string &headerPath,
                                 const std::string &cpu) {
  if (!precisionRuns(trained_, cpu) || !runTo(Stage::LLVM))
    return "the model does not compile";
  std::string error = target::writeObject(*module_, objectPath, cpu);
  if (!error.empty())
    return error;
  return writeHeader(headerPath, cpu);
}

std::string Session::writeObjects(const std::string &stem, const std::string &headerPath,
                                  const std::string &cpu, std::vector<std::string> &paths) {
  if (!precisionRuns(trained_, cpu) || !runTo(Stage::LLVM))
    return "the model does not compile";
  std::vector<std::string> objects;
  if (std::string error = target::compileObjects(*module_, cpu, compileParts(),
                                                 target::entryPrefix(manifest_->cname), objects);
      !error.empty())
    return error;
  paths.clear();
  for (size_t i = 0; i < objects.size(); ++i) {
    paths.push_back(stem + "." + std::to_string(i) + ".o");
    std::ofstream out(paths.back(), std::ios::binary | std::ios::trunc);
    out << objects[i];
    if (!out.flush())
      return "cannot write " + paths.back();
  }
  return writeHeader(headerPath, cpu);
}

unsigned Session::compileParts() {
  // Every core: a verb waits for its program, and its loops are many small functions.
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

std::string Session::writeHeader(const std::string &headerPath, const std::string &cpu) {
  // The header's program info says what the code needs of the CPU it runs on.
  manifest_->cpu = target::cpuName(cpu);
  manifest_->cpuFeatures = target::cpuFeatures(cpu);
  std::ofstream out(headerPath);
  out << target::renderHeader(*manifest_, spec_ ? spec_->file : name_);
  if (!out.flush())
    return "cannot write " + headerPath;
  return "";
}

} // namespace attn::driver
