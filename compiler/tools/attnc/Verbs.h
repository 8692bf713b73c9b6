// The verbs of attnc, one function each (attnc.cpp parses the command line and dispatches).
#pragma once

#include "Compiler.h"
#include "Data.h"

#include "attn/Program.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnc {

struct Options {
  std::string verb, model, stage, output, header, input, out, ckpt;
  std::string plots; // run / translate: write attention heatmaps into this directory
  std::string cpu = "native";
  std::vector<attn::yaml::Override> overrides;
  std::optional<uint64_t> seed;
  std::optional<int64_t> count, steps;
  std::optional<double> temperature;
  std::optional<uint64_t> sampleSeed;
  std::optional<std::string> prime;
  bool resume = false;
  bool overwrite = false;     // train: replace the run in the output directory
  bool acceptChanges = false; // train --resume: with training settings that differ
  bool stdinClosed = false;   // attnc was started with fd 0 closed
  bool fuse = true;
  bool noCache = false; // seq2seq Transformers: decode through @decode_full, without the cache
  bool scores = false;
  bool help = false;
};

/// Prints `attnc: error: msg` and a pointer to --help; returns the exit code 2.
int usageError(const std::string &msg);
/// Writes `text` to `path` ("" or "-": stdout); returns an exit code.
int writeText(const std::string &path, const std::string &text);

/// A checkpoint named on the command line: DIR means DIR/best.safetensors, else
/// DIR/last.safetensors (also when best.safetensors is another run's: their specs differ);
/// a file is itself.
std::string checkpointFile(const std::string &path);

/// The keys for which `relevant` holds on which the spec stored in checkpoint `file` (its
/// metadata `meta`) and `given` differ; none for a checkpoint without a stored spec. Throws
/// when the stored spec does not parse.
std::vector<attn::yaml::SpecDifference>
checkpointDifferences(const attn::yaml::Spec &given,
                      const std::map<std::string, std::string> &meta, const std::string &file,
                      bool (*relevant)(const std::string &key));

/// Throws when checkpointDifferences finds any, naming each key with both values; `why` says
/// what that means and `hint` what to do.
void checkCheckpointSpec(const attn::yaml::Spec &given,
                         const std::map<std::string, std::string> &meta, const std::string &file,
                         bool (*relevant)(const std::string &key), const std::string &why,
                         const std::string &hint);

/// checkCheckpointSpec for the keys that change a model's equations (attn::yaml::changesEquations):
/// a checkpoint trained as another model is refused.
void checkModelMatches(const attn::yaml::Spec &given,
                       const std::map<std::string, std::string> &meta, const std::string &file);

/// For verbs that read a checkpoint (--ckpt): loads the spec from MODEL.yaml or, without one,
/// from the checkpoint's metadata (with --set overrides either way); fills `file` and `meta`.
/// Returns 0, or the exit code of a failure it has reported.
int loadForCheckpoint(Compiler &c, const Options &o, std::string &file,
                      std::map<std::string, std::string> &meta);

/// `run` for a model that learns from text pairs (seq2seq, tag, classify): the compiled
/// program with the checkpoint's parameters and vocabularies (--ckpt), or fresh ones from
/// --seed and the spec's data; the validation pairs always come from the spec's data.
struct PairModel {
  PairData data;
  std::unique_ptr<attn::target::JitProgram> jit;
  std::unique_ptr<attn::Program> program;
  std::vector<attn::Tensor> params;
  std::string origin; // "from FILE (step N)" / "initialised from seed N", for the report
};
/// Null (the error printed) when the spec does not compile.
std::unique_ptr<PairModel> loadPairModel(Compiler &c, const Options &o);

int check(Compiler &c, const Options &o);    // Inspect.cpp
int emit(Compiler &c, const Options &o);     // Inspect.cpp
int run(Compiler &c, const Options &o);      // Run.cpp
int compile(Compiler &c, const Options &o);  // Run.cpp
int train(Compiler &c, const Options &o);    // Train.cpp
int eval(Compiler &c, const Options &o);     // Train.cpp
int translate(Compiler &c, const Options &o); // Translate.cpp
int runSeq2Seq(Compiler &c, const Options &o); // Translate.cpp: `run` for a seq2seq model
int runLabeller(Compiler &c, const Options &o); // Labelling.cpp: `run` for tag / classify

} // namespace attnc
