// One model's way through the compiler: spec (or an attn module) -> attn -> fused -> grad ->
// lowered -> LLVM, stopping at any stage, and from there a JIT-loaded Model (the program with
// its parameters, from init or a checkpoint) or an object file. Every attnc verb, benchmark
// and test goes through a Session, so they all see the same IR; the pass order itself lives
// in compiler/Pipelines.
#pragma once

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Jit.h"
#include "compiler/Target/Manifest.h"
#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "attn/Program.h"
#include "attn/dist/Communicator.h"
#include "attn/task/Data.h"
#include "attn/task/Metadata.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attn::driver {

/// The stages `attnc emit --stage` prints, in pipeline order.
/// PTX is a product of Lowered beside LLVM: the generated GPU kernels (print only).
enum class Stage { Spec, Attn, Fused, Grad, Lowered, LLVM, PTX };
/// "spec" | "attn" | "fused" | "grad" | "lowered" | "llvm"; nullopt for anything else.
std::optional<Stage> parseStage(const std::string &name);
const char *stageName(Stage stage);

struct SessionOptions {
  /// Structural fusion (attn-fuse-recurrence, attn-fuse-attention) and the scan rewrites
  /// (attn-hoist-scan-projections, attn-batch-scan-gradients, attn-store-scan-residuals)
  /// before and after autodiff and in the lowering; off is the unfused
  /// reference (`--no-fuse`).
  bool fuse = true;
  /// One of them alone off (`--no-fuse=attention`, `=recurrence`, `=hoist`).
  bool fuseAttention = true, fuseRecurrence = true, hoist = true;
  /// Fusion says why each attention or scan it left was not fused (remarks, `--remarks`), once:
  /// at the first stage that fuses.
  bool remarks = false;
  /// Data parallelism: the program is compiled for one of `batchShards` equal shards of
  /// train.batch_size (each rank's), with @apply_update and @loss_weight for combining the
  /// shards' gradients. 1: the whole batch, one process.
  int batchShards = 1;
  /// Also compile a Transformer encoder-decoder's @decode_full, decoding without its cache.
  bool uncachedDecoding = false;
  /// The compile cache's directory (CompileCache): loadModel loads a program compiled
  /// before from it instead of compiling it again. "": no cache.
  std::string compileCache;
  /// Where the runtime kernels run (`--device`): with CUDA, the fused attentions the GPU
  /// kernels compute and the LSTM/GRU layers run on the GPU (attn-to-cuda),
  /// everything else on the CPU.
  pipelines::Device device = pipelines::Device::CPU;
  /// attn-precision's policy ("f32" | "bf16") for every program, instead of the spec's
  /// train.precision (training) and decode.precision (inference); "" takes the spec's (f32
  /// for a module given by setModule).
  std::string precision;
  /// Where diagnostics go ("file:line:col: error: ..."); stderr by default.
  std::ostream *diagnostics = nullptr;
};

/// Why programs compiled for `device` cannot run in this process ("" when they can): a build
/// without the CUDA backend, no driver, no GPU.
std::string deviceUnavailable(pipelines::Device device);

/// A compiled program, JIT-loaded, with its parameters.
struct Model {
  std::unique_ptr<target::JitProgram> jit; // owns the code `program` runs
  std::unique_ptr<Program> program;
  std::vector<Tensor> params;              // in manifest order
  std::string origin; // "from FILE (step N)" | "initialised from seed N", for reports
};

class Session {
public:
  explicit Session(SessionOptions options = {});
  ~Session();

  // --- The spec -------------------------------------------------------------------------
  /// Parses and validates the spec file(s): later files are layered over earlier ones (maps
  /// merge, other values replace), then the overrides; every diagnostic is reported.
  bool loadSpec(const std::vector<std::string> &files,
                const std::vector<yaml::Override> &overrides = {});
  bool loadSpec(const std::string &file, const std::vector<yaml::Override> &overrides = {}) {
    return loadSpec(std::vector<std::string>{file}, overrides);
  }
  /// The same from spec text (a checkpoint's, a benchmark's); `name` names it in diagnostics.
  bool loadSpecText(const std::string &text, const std::string &name,
                    const std::vector<yaml::Override> &overrides = {});
  bool hasSpec() const { return spec_.has_value(); }
  const yaml::Spec &spec() const { return *spec_; }

  // --- A checkpoint ---------------------------------------------------------------------
  /// Opens a checkpoint (DIR: its best, else last; see task::checkpointFile) to load its
  /// parameters into the Model and its vocabularies into the program. Without a loaded spec
  /// the one the checkpoint stores is loaded (with `overrides`); with one, a checkpoint
  /// trained as another model is refused (throws, naming every key with both values).
  bool openCheckpoint(const std::string &path,
                      const std::vector<yaml::Override> &overrides = {});
  bool hasCheckpoint() const { return !checkpoint_.empty(); }
  const std::string &checkpointPath() const { return checkpoint_; }
  const task::Metadata &checkpointMetadata() const { return checkpointMeta_; }

  // --- The task's data ------------------------------------------------------------------
  /// The spec's data, as a task::DataConfig.
  task::DataConfig dataConfig() const;
  /// Where a streamed corpus's index is kept (data.stream; a run directory's data/). Unset:
  /// a temporary index.
  void setDataCacheDir(std::string dir) { dataCacheDir_ = std::move(dir); }
  /// A pair task's data as the spec's `data:` makes it (pairs and vocabularies; built once).
  const task::PairData &trainingData();
  /// The vocabularies and lengths the program is compiled for: the checkpoint's when one is
  /// open (with the spec's validation pairs when `withValidation`), else trainingData().
  const task::PairData &compiledData(bool withValidation = false);
  /// Replaces what the importer is told about the data (benchmarks and tests that compile a
  /// spec without its data).
  void setImportOptions(const yaml::ImportOptions &options) { importOptions_ = options; }

  // --- Stages ---------------------------------------------------------------------------
  /// Starts from an attn module instead of a spec (tests, attn-opt style inputs); `name`
  /// names the program (entry symbols attn_<cName(name)>_<entry>).
  void setModule(mlir::OwningOpRef<mlir::ModuleOp> module, const std::string &name);
  /// Runs every stage up to `stage` that has not run yet; false (reported) on failure. The
  /// Grad stage is only reached when asked for: a module for inference skips it. It trains
  /// with the spec's `train:` settings, or, for a module given by setModule, Adam at its
  /// defaults (the learning rate is an input of @train_step either way).
  bool runTo(Stage stage);
  /// Removes the public entries `unused` names, and what only they call, from the module
  /// (before its lowering): what a run never calls is not compiled. False (reported) if
  /// that fails.
  bool removeEntries(llvm::function_ref<bool(llvm::StringRef)> unused);
  /// Where the module is now.
  std::optional<Stage> stage() const { return stage_; }
  /// The module (or the spec) at `stage`, as text (LLVM: the optimised LLVM IR).
  std::optional<std::string> print(Stage stage);

  /// The program JIT-compiled for this machine (running the stages up to LLVM first), with
  /// parameters from the open checkpoint or else from `seed` (default train.seed). With a
  /// compile cache, a program compiled before is loaded from it and the stages do not run.
  std::unique_ptr<Model> loadModel(std::optional<uint64_t> seed = std::nullopt);
  /// loadModel on every rank of a data-parallel run, compiled once: with a compile cache,
  /// rank 0 compiles into it while the other ranks wait (up to `compileWait` seconds), then
  /// they load its code (a rank that finds no entry, its cache on another machine, compiles
  /// for itself). Without a cache every rank compiles.
  std::unique_ptr<Model> loadModelOnce(dist::Communicator &ranks, double compileWait,
                                       std::optional<uint64_t> seed = std::nullopt);
  /// The buckets of a seq2seq spec (decode.buckets, decode.batch_buckets; yaml::
  /// decodeBuckets): per (length L, rows R), this model compiled for sources of L tokens (the
  /// targets keep their length) decoded R at a time, JIT-loaded, with the same parameters as
  /// loadModel's (checked; the Models hold no parameters of their own). Empty without
  /// buckets; nullopt (reported) on failure.
  std::optional<std::vector<std::unique_ptr<Model>>> loadBuckets();
  /// What a bucket's program changes of the model's shapes (0: the model's own).
  struct BucketShape {
    int64_t sourceLength = 0; // source tokens
    int64_t targetLength = 0; // target tokens (a training bucket's)
    int64_t decodeRows = 0;   // decoder rows (decode.batch)
    int64_t trainRows = 0;    // examples per training step (train.batch_size: all ranks')
  };
  /// The Session of one bucket, its spec loaded and its program named
  /// <name>-s<source>-t<target>-b<decode rows>-r<train rows> (the parts it changes; its own
  /// symbols). Null (reported) on failure.
  std::unique_ptr<Session> bucketSession(const BucketShape &shape);
  /// The training program of one shape of token-count batches (train.batch_tokens;
  /// attn/task/TokenBatches.h), compiled to @train_step like this one (with `ranks`, once
  /// for them all, as loadModelOnce), JIT-loaded, with this program's parameters (checked;
  /// the Model holds none of its own). Null (reported) on failure.
  std::unique_ptr<Model> loadTrainingBucket(const BucketShape &shape,
                                            dist::Communicator *ranks = nullptr,
                                            double compileWait = 1800);
  /// Whether the training and the inference programs compute in one precision: a program
  /// with both (an executable's) is compiled through the training pipeline only then.
  bool trainsInDecodePrecision() const { return precision(true) == precision(false); }
  /// This model's inference programs (no training pipeline) compiled with their products
  /// in `precision` (decode.precision's policies), JIT-loaded, as a Model without parameters
  /// (attn::paramsFor gives it a trained program's): `attnc bench` times decoding in two
  /// precisions side by side with it. Null (reported) on failure.
  std::unique_ptr<Model> loadInferenceModel(yaml::DecodePrecision precision);
  /// Whether each parameter of `bucket` (compiled) is one of this program's (compiled), by
  /// name and shape; reported, as a fault of the spec's key `key`, when not.
  bool sharesParameters(const Session &bucket, const std::string &key = "decode.buckets") const;
  /// Writes the program for `cpu` as an object file and its C header; "" or the error.
  std::string writeObject(const std::string &objectPath, const std::string &headerPath,
                          const std::string &cpu);
  /// The same as objects `<stem>.<i>.o` compiled at once on every core (target::
  /// compileObjects), which together are the program: their paths in `paths`.
  std::string writeObjects(const std::string &stem, const std::string &headerPath,
                           const std::string &cpu, std::vector<std::string> &paths);

  mlir::ModuleOp module() { return *module_; }
  const target::Manifest &manifest() const { return *manifest_; }
  mlir::MLIRContext &context() { return *context_; }
  std::ostream &diagnostics() const;
  /// How many diagnostics the session has reported: a caller that fails after one need not
  /// add a vaguer message of its own.
  size_t reportedCount() const { return reported_; }
  /// Whether this machine runs the spec's precisions (train.precision for training,
  /// decode.precision for inference), as train, run and translate will ask; each that does not
  /// is reported at the key (or flag) that asked for it. `attnc check`'s last question.
  bool precisionsRunHere() const {
    bool training = precisionRuns(true, "native"), inference = precisionRuns(false, "native");
    return training && inference;
  }

private:
  bool parsed(std::optional<yaml::Spec> spec, const std::vector<yaml::Diagnostic> &diags);
  bool import();
  bool runPasses(Stage stage);
  /// The generated GPU kernels' PTX, from a copy of the module at the lowered stage.
  std::optional<std::string> printPTX();
  void report(const yaml::Diagnostic &d) const;
  /// Which structural fusions the options ask for (remarks off), and the precision of a
  /// training (`training`) or an inference program.
  pipelines::FusionOptions fusionOptions(bool training) const;
  /// attn-precision's policy for a training or an inference program (SessionOptions::
  /// precision, else the spec's train.precision or decode.precision).
  std::string precision(bool training) const;
  /// Whether the CPU the program is compiled for (`cpu`: "native" or an LLVM CPU name) runs
  /// `training`'s policy; reported (at the spec key that asked for it) when not.
  bool precisionRuns(bool training, const std::string &cpu) const;
  /// What identifies the compilation loadModel would do from here (a compile-cache key).
  std::string compileKey();
  /// The native objects of the module (to LLVM first, then compiled on every core) and its
  /// manifest: from the compile cache when it holds them, else compiled (and stored). False
  /// (reported) on failure.
  bool compiledObjects(std::vector<std::string> &objects);
  /// How many parts a program is compiled in at once: one per core, up to 8.
  static unsigned compileParts();
  std::string writeHeader(const std::string &headerPath, const std::string &cpu);

  SessionOptions options_;
  std::unique_ptr<mlir::MLIRContext> context_;
  std::optional<yaml::Spec> spec_;
  std::string name_; // the program's name: the spec's, or setModule's
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::optional<Stage> stage_;
  bool remarked_ = false; // fusion remarks given (SessionOptions::remarks)
  mutable size_t reported_ = 0; // diagnostics reported (report())
  bool trained_ = false;  // the training pipeline ran: a training program (train.precision)
  // The remarks printed: fusion sees a layer once in each entry point that holds it (@forward,
  // @loss, ...), and says why it is not fused once per layer.
  std::set<std::string> remarksSaid_;
  std::optional<target::Manifest> manifest_;
  std::optional<yaml::ImportOptions> importOptions_;
  std::string checkpoint_;
  task::Metadata checkpointMeta_;
  std::optional<task::PairData> trainingData_, compiledData_;
  std::string dataCacheDir_;
};

} // namespace attn::driver
