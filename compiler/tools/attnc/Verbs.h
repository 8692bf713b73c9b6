// The verbs of attnc, one function each: argument handling and printing over the driver
// (attn::driver::Session) and the runtime's task library. attnc.cpp declares the command
// line (CLI11) and dispatches.
#pragma once

#include "compiler/Driver/Session.h"

#include "attn/dist/Communicator.h"

#include <optional>
#include <string>
#include <vector>

namespace attnc {

/// What every verb reads: the spec (MODEL.yaml and -c layers) and how to compile it.
struct Common {
  std::vector<std::string> files; // MODEL.yaml first, then each -c layer
  std::vector<attn::yaml::Override> overrides;
  bool fuse = true, fuseAttention = true, fuseRecurrence = true, hoist = true; // --no-fuse[=...]
  bool remarks = false; // fusion says why what it left was not fused
  bool noCache = false; // seq2seq Transformers: decode through @decode_full, without the cache
  bool stdinClosed = false; // attnc was started with fd 0 closed
  std::string cacheDir;     // the compile cache (--cache-dir; default CompileCache::defaultDir)
  bool noCompileCache = false;
  std::string device = "cpu"; // --device: cpu | cuda
};

/// `run` and `translate`: decoding and sampling (each also sets its decode.* key).
struct DecodeFlags {
  std::string ckpt, plots;
  std::optional<double> temperature;
  std::optional<uint64_t> sampleSeed;
};

struct RunOptions : DecodeFlags {
  std::string input, output;
  std::optional<uint64_t> seed;
  std::optional<int64_t> count;
  std::optional<std::string> prime;
};

struct TrainOptions {
  std::optional<int64_t> steps;
  std::string out;
  bool resume = false, overwrite = false, acceptChanges = false;
  double rankTimeout = 300; // data parallelism: how long a rank waits for the others
  attn::dist::Communicator *comm = nullptr; // under mpirun: this rank of the run
};

struct TranslateOptions : DecodeFlags {
  bool scores = false;
};

struct EmitOptions {
  std::string stage, output;
  int ranks = 1;      // the program one of this many data-parallel ranks compiles
  bool train = false; // lowered, llvm: the training program (through the grad stage)
};

struct CompileOptions {
  std::string output, header, cpu = "native";
  bool exe = false;        // a standalone executable instead of an object and a header
  bool lib = false;        // a library with the C API (attn/capi.h)
  std::string weightsFile; // --exe: the weights in this file beside it, not embedded
  std::string ckpt;        // --exe, --lib: the parameters of this checkpoint
};

struct BenchOptions {
  int64_t steps = 20;  // timed train steps
  int64_t warmup = 3;  // untimed steps first
  int64_t decodes = 3; // timed decoding batches (seq2seq)
  std::string ckpt;    // start from this checkpoint's weights
};

/// Prints `attnc: error: msg` and a pointer to --help; returns the exit code 2.
int usageError(const std::string &msg);
/// Writes `text` to `path` ("" or "-": stdout); returns an exit code.
int writeText(const std::string &path, const std::string &text);
/// Loads the spec of `c.files` into `session`; with `ckpt` also opens the checkpoint (and,
/// without MODEL.yaml, takes the spec it stores). Returns 0 or the exit code of a failure
/// it has reported.
int load(attn::driver::Session &session, const Common &c, const std::string &ckpt = "");

int check(attn::driver::Session &s, const Common &c);                          // Inspect.cpp
int emit(attn::driver::Session &s, const Common &c, const EmitOptions &o);     // Inspect.cpp
int compile(attn::driver::Session &s, const Common &c, const CompileOptions &o); // Inspect.cpp
int run(attn::driver::Session &s, const Common &c, const RunOptions &o);       // Run.cpp
int train(attn::driver::Session &s, const Common &c, const TrainOptions &o);   // Train.cpp
// What `attnc eval` reports, and on which pairs.
struct EvalOptions {
  bool bleu = false; // only BLEU and chrF2 (seq2seq)
  std::string pairs; // a TSV of pairs in place of the validation split
  std::string hyp;   // translations to score against `pairs` (no model)
};
int eval(attn::driver::Session &s, const Common &c, const std::string &ckpt,
         const EvalOptions &o);  // Train.cpp
int translate(attn::driver::Session &s, const Common &c, const TranslateOptions &o); // Translate.cpp
int runSeq2Seq(attn::driver::Session &s, const RunOptions &o);                // Translate.cpp
int runLabeller(attn::driver::Session &s, const RunOptions &o);               // Labelling.cpp
int bench(attn::driver::Session &s, const Common &c, const BenchOptions &o);   // Bench.cpp

} // namespace attnc
