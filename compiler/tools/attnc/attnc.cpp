// attnc: the user's command line. One binary, verbs like Marian's and IREE's:
//   attnc check | emit | run | train | eval | translate | compile | bench  MODEL.yaml [options]
// This file declares the command line (CLI11) and dispatches; the verbs (Verbs.h) print
// what the driver (compiler/Driver) and the runtime's task library compute.
#include "Verbs.h"

#include "compiler/Driver/CompileCache.h"
#include "compiler/Driver/Version.h"

#include "attn/Numbers.h"
#include "attn/dist/Communicator.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <sstream>
#include <streambuf>

namespace {

constexpr const char *kCheckHelp = R"(Parses and validates the spec (errors as file:line:col with a hint), imports it into the attn
dialect and verifies the IR. Prints a one-line summary and exits 0 when the model is sound.)";

constexpr const char *kEmitHelp = R"(Prints one stage of the compilation:
  spec      the validated spec with every default filled in (YAML)
  attn      the attn dialect as imported from the spec (@forward, @loss)
  fused     attn after structural fusion (attn-fuse-recurrence, attn-fuse-attention) and
            attn-hoist-scan-projections; none with --no-fuse
  grad      attn after fusion, attn-autodiff, attn-store-scan-residuals and attn-train-step
            (@loss_grad, @train_step)
  lowered   after attn-lower: linalg/tensor/scf on tensors plus oneDNN kernel calls
  llvm      the optimised LLVM IR that is JIT-compiled or written as an object
  ptx       the compiler's generated GPU kernels (every loop nest no runtime kernel computes),
            as PTX for sm_90 (docs/cuda.md, "Generated kernels")
lowered, llvm and ptx show the inference program (@forward, @loss, decoding steps); with --train,
the training program that attnc train compiles (through the grad stage).)";

constexpr const char *kRunHelp = R"(Compiles the model in-process and runs its forward pass with the parameters of a trained
checkpoint (--ckpt; DIR means DIR/best.safetensors, else DIR/last.safetensors), or freshly
initialised from --seed (default: train.seed). Inputs come from the spec's builtin data (the first --count
validation examples, default one batch) or from --input FILE: whitespace-separated numbers,
one example (data.window values) per line, '#' comments. Prints one line per example;
--output FILE also writes the raw outputs, one example per line.

A language model (task: lm) generates text instead: it reads --prime (default sample.prime)
and samples --count characters (default sample.length) at --temperature (default
sample.temperature; 0 is greedy) among the --top-k likeliest (default sample.top_k; 0: all)
with --sample-seed (default sample.seed).

A seq2seq model translates the first --count validation sources (default 8) and prints each
output next to the reference; tag and classify models print their labels. With --plots DIR,
a model with attention also writes DIR/attention-<i>.png, its attention weights for source i;
--sample, --temperature, --top-k, --sample-seed and --no-cache decode as for translate.)";

constexpr const char *kTrainHelp = R"(Compiles @train_step (loss, gradients by attn-autodiff, clipping, the spec's optimizer) and
trains for train.steps (or --steps) on the builtin data's training split, validating every
train.eval_every steps. The run directory (--out, else train.checkpoint.dir, else runs/<name>)
receives last.safetensors (every train.checkpoint.every steps and at the end),
best.safetensors (best validation loss), metrics.jsonl and loss.png. One train at a time
writes a run directory (a second one is refused), and a directory that holds a run is not
replaced without --overwrite. --resume continues from last.safetensors exactly as if the run
had not stopped; the spec must be the one the run was trained with, except for train.steps,
eval_every, log_every, checkpoint and early_stopping.patience and the decode and sample keys
(--accept-changes resumes with other training settings too, listing them; the model itself
must match). A NaN or infinite loss stops training with exit code 1 and leaves the last good
checkpoint in place.)";

constexpr const char *kEvalHelp = R"(Loads a checkpoint (DIR means DIR/best.safetensors, else DIR/last.safetensors) and prints the
mean loss over the validation split (--pairs FILE.tsv: over those pairs), and what the model
gets right: a seq2seq model's exact match, token accuracy, BLEU and chrF2 of its decoding
(decode: section), a tagger's or classifier's accuracy. --bleu prints only BLEU and chrF2,
as sacreBLEU does (13a tokens, exp smoothing; chrF2 of 6-grams of characters). Without
MODEL.yaml the spec stored in the checkpoint is used. --hyp FILE --pairs FILE.tsv scores
another system's translations the same way, with no model.)";

constexpr const char *kTranslateHelp =
    R"(Reads source lines on stdin and writes one output line per input line, decoded by the trained
seq2seq model in the checkpoint; a tagger writes each line's tags (one per token), a
classifier its label. --ckpt DIR means DIR/best.safetensors, else DIR/last.safetensors;
without MODEL.yaml the spec and vocabularies stored in the checkpoint are used. Decoding
follows the spec's `decode:` section; --beam N and --nbest N set decode.beam and
decode.nbest (--beam 1 decodes greedily). With --scores, or nbest > 1, each hypothesis is
printed as `INDEX ||| OUTPUT ||| log_prob=L score=S` (INDEX counts input lines from 0;
S = L / ((5 + length) / 6)^decode.length_penalty). A line with more tokens than the model
reads (data.max_len) gets an empty output line and an error on stderr naming it; the exit
code is then 1. With --plots DIR, a model with attention (model.attention) also writes
DIR/attention-<i>.png for input line i (counting the lines that could be translated): its
attention weights while writing the best output, source tokens across, output tokens down
(a Transformer: the cross attention of decode.attention_layer / attention_head).
--sample draws each token from the model's distribution (decode.sample, greedy rows only),
divided by --temperature T and among the --top-k K likeliest (decode.temperature, top_k),
from --sample-seed N (decode.seed). --no-cache (model.transformer, model.conv, a graph lm) decodes by
recomputing the decoder over the whole prefix at every step (@decode_full; a Transformer
or graph language model's run: @step_full) instead of using the step cache: the reference for
the cache, with the same outputs.)";

constexpr const char *kCompileHelp =
    R"(Compiles ahead of time for --cpu: native (default: this machine, with all its features, e.g.
AVX-512) or an LLVM CPU name for objects that run elsewhere (x86-64-v3: any AVX2 machine;
x86-64: any x86-64). MODEL.o holds the entry points
`void attn_<model>_<entry>(void **args)`, and the header declares them together with the
program manifest `attn_<model>_program` (parameters, inputs, outputs; see attn/abi.h).
Link MODEL.o with the attn runtime (AttnRuntime) and oneDNN; MLIR is not needed.
With --exe, OUT is a standalone executable of the model instead, linked by the system's C++
compiler (c++, or $CXX): `OUT translate`, `OUT run`, `OUT train`, `OUT eval` and `OUT info`
do what the attnc verbs do, with the parameters of --ckpt (else freshly initialised ones) and
the vocabularies built in (--weights-file NAME: in the file NAME beside it). It needs libc,
libstdc++, libgomp and oneDNN only (docs/deploy.md).
With --lib, OUT is a library with the C API of attn/capi.h (LIB.a: the model and the whole
runtime in one archive; LIB.so: a shared library), and --header (default LIB.h) its header.)";

constexpr const char *kBenchHelp =
    R"(Compiles the spec's train step and times it on batches drawn from the spec's data (after
--warmup untimed steps, the median of --steps timed ones), and for a seq2seq model its
greedy decoding of one compiled batch; prints the FLOPs per step counted from the compiled
program (its matrix products) and the fraction of the machine's f32 GEMM peak that is, the
peak measured in the same run (oneDNN, 1024^3, at OMP_NUM_THREADS threads). With
--precision bf16 or int8 (decode.precision), a seq2seq model's inference programs are also
compiled in f32 and in that precision and their greedy decodings timed in turns on the same
weights, with the bf16 or int8 GEMM peak of the same run. Nothing is written. tests/bench
compares the same figures with PyTorch.)";

constexpr const char *kDescription =
    "attnc: compile and run sequence models written in YAML\n\n"
    "Every verb reads MODEL.yaml (or -c BASE.yaml -c LAYER.yaml...: later files are layered\n"
    "over earlier ones, maps merged key by key) and --set KEY=VALUE overrides, in that order.";

// The command line's values before they are checked: numbers are read strictly by
// attn::parse* (CLI11's own conversions accept "2.5" for an integer's "2").
struct Raw {
  std::string model;
  std::vector<std::string> layers, sets;
  std::string seed, count, steps, temperature, sampleSeed, topK, beam, nbest, prime;
  std::string lengthPenalty;
  std::string precision; // "", f32, bf16 or int8: train.precision or decode.precision, by verb
  std::string
      noFuse; // "", or what --no-fuse names: all, or a list of attention | recurrence | hoist
  bool sample = false;
};

void addCommon(CLI::App *verb, Raw &raw, attnc::Common &c, bool modelOptional) {
  verb->add_option("MODEL", raw.model,
                   modelOptional ? "the spec (default: the one the checkpoint stores)"
                                 : "the spec (MODEL.yaml)");
  verb->add_option("-c,--config", raw.layers,
                   "a spec layered over MODEL.yaml (repeatable; later files win)")
      ->allow_extra_args(false);
  verb->add_option("--set", raw.sets, "override one spec key (YAML value), e.g. "
                                      "--set train.batch_size=8")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  verb->add_flag("--no-fuse{all}", raw.noFuse,
                 "no structural fusion (attn-fuse-recurrence, attn-fuse-attention) nor scan "
                 "rewrites (attn-hoist-scan-projections, attn-batch-scan-gradients, "
                 "attn-store-scan-residuals): the unfused reference; "
                 "--no-fuse=attention, =recurrence or =hoist turns one off (a comma list "
                 "turns several off: --no-fuse=recurrence,hoist)")
      ->type_name("[=all|attention,recurrence,hoist]");
  verb->add_flag("--remarks", c.remarks,
                 "say why each attention or recurrent layer that stays unfused was not fused, "
                 "and in training what each generic layer stores for its backward (remarks at "
                 "the spec's file:line:col)");
  verb->add_option("--precision", raw.precision,
                   "the number type of the program's products (docs/precision.md): sets "
                   "train.precision for train (and emit --train or --stage grad), "
                   "decode.precision for the other verbs")
      ->check(CLI::IsMember({"f32", "bf16", "int8"}))
      ->type_name("f32|bf16|int8");
  verb->add_option("--cache-dir", c.cacheDir,
                   "the compile cache (default $XDG_CACHE_HOME/attnc, else ~/.cache/attnc)")
      ->type_name("DIR");
  verb->add_flag("--no-compile-cache", c.noCompileCache,
                 "compile the program even if the compile cache holds it, and do not store it");
  verb->add_option("--device", c.device,
                   "cpu (default); cuda: the program runs on an NVIDIA GPU (generated kernels, "
                   "cuBLASLt products, the GPU's attention and recurrent kernels, managed "
                   "memory; int8 products stay on the CPU); cuda-on-cpu: "
                   "the compiler's generated GPU kernels, run as CPU loops, to check them "
                   "without a GPU (docs/cuda.md)")
      ->check(CLI::IsMember({"cpu", "cuda", "cuda-on-cpu"}))
      ->type_name("cpu|cuda|cuda-on-cpu");
}

void addDecode(CLI::App *verb, Raw &raw, attnc::DecodeFlags &d, attnc::Common &c) {
  verb->add_option("--ckpt", d.ckpt, "a checkpoint: FILE, or DIR (its best, else last)")
      ->type_name("DIR|FILE");
  verb->add_option("--plots", d.plots, "write attention heatmaps into DIR")->type_name("DIR");
  verb->add_flag("--sample", raw.sample, "sample each token (decode.sample)");
  verb->add_option("--temperature", raw.temperature, "sampling temperature")->type_name("T");
  verb->add_option("--top-k", raw.topK, "sample among the K likeliest")->type_name("K");
  verb->add_option("--sample-seed", raw.sampleSeed, "sampling seed")->type_name("N");
  verb->add_flag("--no-cache", c.noCache,
                 "model.transformer, model.conv, model.graph's lm: decode without the step "
                 "cache (@decode_full, @step_full)");
}

// The checked values of `raw`: numbers, and the flags that stand for spec keys.
void finish(const Raw &raw, attnc::Common &c, attnc::RunOptions &run, attnc::TrainOptions &train,
            attnc::DecodeFlags &decode) {
  if (!raw.noFuse.empty()) {
    std::stringstream list(raw.noFuse);
    for (std::string name; std::getline(list, name, ',');) {
      if (name == "all")
        c.fuse = false;
      else if (name == "attention")
        c.fuseAttention = false;
      else if (name == "recurrence")
        c.fuseRecurrence = false;
      else if (name == "hoist")
        c.hoist = false;
      else
        throw std::runtime_error("--no-fuse takes all, or a comma list of attention, recurrence "
                                 "and hoist, got '" +
                                 raw.noFuse + "'");
    }
  }
  if (!raw.model.empty())
    c.files.push_back(raw.model);
  c.files.insert(c.files.end(), raw.layers.begin(), raw.layers.end());
  for (const std::string &s : raw.sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::runtime_error("--set needs KEY=VALUE, got '" + s + "'");
    c.overrides.push_back({s.substr(0, eq), s.substr(eq + 1)});
  }
  if (!raw.seed.empty())
    run.seed = attn::parseUnsigned(raw.seed, "--seed");
  if (!raw.count.empty())
    run.count = attn::parseInt(raw.count, 1, 1000000000, "--count");
  if (!raw.steps.empty())
    train.steps = attn::parseInt(raw.steps, 1, 1000000000000, "--steps");
  if (!raw.prime.empty())
    run.prime = raw.prime;
  if (!raw.temperature.empty()) {
    decode.temperature = attn::parseFinite(raw.temperature, 0, 1e6, "--temperature");
    c.overrides.push_back({"decode.temperature", raw.temperature, "--temperature " + raw.temperature});
  }
  if (!raw.sampleSeed.empty()) {
    decode.sampleSeed = attn::parseUnsigned(raw.sampleSeed, "--sample-seed");
    c.overrides.push_back({"decode.seed", raw.sampleSeed, "--sample-seed " + raw.sampleSeed});
  }
  // The decoding flags set spec keys, but their errors are the flags' (usage, exit 2), with
  // the ranges a standalone executable checks them against.
  if (!raw.topK.empty()) {
    attn::parseInt(raw.topK, 0, 10000000, "--top-k");
    c.overrides.push_back({"sample.top_k", raw.topK, "--top-k " + raw.topK});
    c.overrides.push_back({"decode.top_k", raw.topK, "--top-k " + raw.topK});
  }
  if (raw.sample)
    c.overrides.push_back({"decode.sample", "true", "--sample"});
  int64_t beam = 0, nbest = 0;
  if (!raw.beam.empty()) {
    beam = attn::parseInt(raw.beam, 1, 1024, "--beam");
    c.overrides.push_back({"decode.beam", raw.beam, "--beam " + raw.beam});
  }
  if (!raw.nbest.empty()) {
    nbest = attn::parseInt(raw.nbest, 1, 1024, "--nbest");
    c.overrides.push_back({"decode.nbest", raw.nbest, "--nbest " + raw.nbest});
  }
  if (!raw.lengthPenalty.empty()) {
    attn::parseFinite(raw.lengthPenalty, 0, 1e6, "--length-penalty");
    c.overrides.push_back({"decode.length_penalty", raw.lengthPenalty,
                           "--length-penalty " + raw.lengthPenalty});
  }
  if (beam && nbest > beam)
    throw std::runtime_error("--nbest (" + std::to_string(nbest) + ") cannot exceed --beam (" +
                             std::to_string(beam) + "); raise --beam or lower --nbest");
  if (raw.sample && beam > 1)
    throw std::runtime_error("--sample decodes greedy rows only; it needs --beam 1");
}

} // namespace

int main(int argc, char **argv) {
  attnc::Common common;
  // A closed standard descriptor would be handed to the next file opened, and what is meant
  // for it (a prompt's input, output, errors) would go to that file: park /dev/null on it,
  // and remember that stdin was closed (translate reads it).
  common.stdinClosed = fcntl(0, F_GETFD) == -1;
  for (int fd = 0; fd < 3; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
      return 1;

  Raw raw;
  attnc::RunOptions runOptions;
  attnc::TrainOptions trainOptions;
  attnc::TranslateOptions translateOptions;
  attnc::EmitOptions emitOptions;
  attnc::CompileOptions compileOptions;
  attnc::BenchOptions benchOptions;

  CLI::App app{kDescription, "attnc"};
  app.footer("attnc VERB --help shows a verb's options.");
  app.set_version_flag("--version", [] { return attn::driver::versionReport(); },
                       "attnc's, LLVM's and oneDNN's versions, and the instruction sets in use");
  app.require_subcommand(0, 1);
  auto verb = [&](const char *name, const char *summary, const char *help, bool modelOptional) {
    CLI::App *v = app.add_subcommand(name, summary);
    v->footer(help);
    addCommon(v, raw, common, modelOptional);
    return v;
  };
  CLI::App *check = verb("check", "parse and validate the spec, build its attn IR", kCheckHelp,
                         false);
  CLI::App *emit = verb("emit", "print one stage of the compilation (--stage)", kEmitHelp, false);
  emit->add_option("--stage", emitOptions.stage,
                   "spec | attn | fused | grad | lowered | llvm | ptx")
      ->required();
  emit->add_option("-o,--output", emitOptions.output, "write to FILE instead of stdout");
  emit->add_flag("--train", emitOptions.train,
                 "lowered and llvm: the training program (@loss_grad, @train_step, with the "
                 "backward's kernel calls), as attnc train compiles it, instead of inference");
  emit->add_option("--ranks", emitOptions.ranks,
                   "the program of one of N data-parallel ranks (mpirun -np N attnc train)")
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("N");
  CLI::App *run = verb("run", "compile in-process (JIT) and run the model on data", kRunHelp,
                       false);
  addDecode(run, raw, runOptions, common);
  run->add_option("--input", runOptions.input, "examples to run (regress)")->type_name("FILE");
  run->add_option("--output", runOptions.output, "also write the raw outputs to FILE");
  run->add_option("--count", raw.count, "examples (or characters) to run")->type_name("N");
  run->add_option("--seed", raw.seed, "initialise the parameters from seed N (no --ckpt)")
      ->type_name("N");
  run->add_option("--prime", raw.prime, "lm: the text to start from")->type_name("TEXT");
  CLI::App *train = verb("train", "compile the training step and train", kTrainHelp, false);
  train->add_option("--steps", raw.steps, "train this many steps (default train.steps)")
      ->type_name("N");
  train->add_option("--out", trainOptions.out, "the run directory")->type_name("DIR");
  train->add_flag("--resume", trainOptions.resume, "continue the run in the directory");
  train->add_flag("--accept-changes", trainOptions.acceptChanges,
                  "--resume with other training settings (listed)");
  train->add_flag("--overwrite", trainOptions.overwrite, "replace the run in the directory");
  train
      ->add_option("--rank-timeout", trainOptions.rankTimeout,
                   "under mpirun: seconds a rank waits for the others before all stop")
      ->check(CLI::Range(1.0, 1e6))
      ->type_name("S");
  CLI::App *eval = verb("eval", "the validation loss of a trained model", kEvalHelp, true);
  std::string evalCkpt;
  attnc::EvalOptions evalOptions;
  eval->add_option("--ckpt", evalCkpt, "a checkpoint: FILE, or DIR (its best, else last)")
      ->type_name("DIR|FILE");
  eval->add_flag("--bleu", evalOptions.bleu,
                 "seq2seq: only corpus BLEU and chrF2 (sacreBLEU's), with their signatures");
  eval->add_option("--pairs", evalOptions.pairs,
                   "evaluate on these source<TAB>target pairs (a test split) instead of the "
                   "validation split")
      ->type_name("FILE.tsv");
  eval->add_option("--hyp", evalOptions.hyp,
                   "score these translations (one per line, another system's) against the "
                   "targets of --pairs with the same BLEU and chrF2; no --ckpt")
      ->type_name("FILE");
  CLI::App *translate = verb("translate", "decode (or label) lines from stdin with a trained model",
                             kTranslateHelp, true);
  addDecode(translate, raw, translateOptions, common);
  translate->add_option("--beam", raw.beam, "beam size (decode.beam; 1: greedy)")->type_name("N");
  translate->add_option("--nbest", raw.nbest, "hypotheses per input (decode.nbest)")
      ->type_name("N");
  translate
      ->add_option("--length-penalty", raw.lengthPenalty,
                   "beam search's length penalty alpha (decode.length_penalty; 0: none)")
      ->type_name("A");
  translate->add_flag("--scores", translateOptions.scores, "print scores (Marian's n-best form)");
  CLI::App *compile = verb("compile", "compile ahead of time to an object file and a C header",
                           kCompileHelp, false);
  compile->add_option("-o,--output", compileOptions.output, "the object file")
      ->type_name("MODEL.o");
  compile->add_option("--header", compileOptions.header, "the C header (default MODEL.h)");
  compile->add_option("--cpu", compileOptions.cpu, "native | an LLVM CPU name (x86-64-v3, ...)");
  compile->add_flag("--exe", compileOptions.exe,
                    "a standalone executable (translate, run, train, eval) instead of an object");
  compile->add_flag("--lib", compileOptions.lib,
                    "a library with a C API (LIB.a or LIB.so, and its header) instead");
  compile
      ->add_option("--ckpt", compileOptions.ckpt,
                   "--exe, --lib: the parameters of a checkpoint (FILE, or DIR: its best, else "
                   "last)")
      ->type_name("DIR|FILE");
  compile
      ->add_option("--weights-file", compileOptions.weightsFile,
                   "--exe: write the weights to NAME beside the executable, not into it")
      ->type_name("NAME");
  CLI::App *bench = verb("bench", "time the train step and decoding, FLOPs and peak fraction",
                         kBenchHelp, false);
  bench->add_option("--steps", benchOptions.steps, "timed train steps")->check(CLI::Range(1, 100000));
  bench->add_option("--warmup", benchOptions.warmup, "untimed steps first")
      ->check(CLI::Range(0, 100000));
  bench
      ->add_option("--ckpt", benchOptions.ckpt,
                   "start from this checkpoint's weights (DIR: its best, else last): decoding "
                   "then times a trained model's outputs")
      ->type_name("DIR|FILE");

  try {
    // An unknown verb is named as one (CLI11 would only say a subcommand is required).
    auto verbs = app.get_subcommands([](const CLI::App *) { return true; });
    if (argc > 1 && argv[1][0] != '-' &&
        std::none_of(verbs.begin(), verbs.end(),
                     [&](const CLI::App *v) { return v->get_name() == argv[1]; }))
      throw CLI::ParseError("unknown verb '" + std::string(argv[1]) + "'", 2);
    app.parse(argc, argv);
    finish(raw, common, runOptions, trainOptions,
           run->parsed() ? static_cast<attnc::DecodeFlags &>(runOptions) : translateOptions);
    if (!raw.precision.empty()) {
      bool training = train->parsed() || (emit->parsed() && (emitOptions.train ||
                                                              emitOptions.stage == "grad"));
      // bench times the train step and decoding; int8 is for decoding only (train refuses it).
      if (training || (bench->parsed() && raw.precision != "int8"))
        common.overrides.push_back({"train.precision", raw.precision, "--precision " + raw.precision});
      if (!training)
        common.overrides.push_back(
            {"decode.precision", raw.precision, "--precision " + raw.precision});
    }
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return attnc::usageError(e.what());
  } catch (const std::exception &e) {
    return attnc::usageError(e.what());
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 2;
  }
  CLI::App *chosen = app.get_subcommands()[0];
  std::string name = chosen->get_name();
  bool fromCheckpoint = chosen == eval || chosen == translate;
  std::string ckpt = chosen == eval ? evalCkpt : chosen == translate ? translateOptions.ckpt : "";
  bool scoresFiles = chosen == eval && !evalOptions.hyp.empty(); // needs no model
  // run --ckpt and compile --exe|--lib --ckpt, as translate, may take the spec the
  // checkpoint carries.
  bool runsACheckpoint = (chosen == run && !runOptions.ckpt.empty()) ||
                         (chosen == compile && !compileOptions.ckpt.empty() &&
                          (compileOptions.exe || compileOptions.lib));
  if (common.files.empty() && !(fromCheckpoint && !ckpt.empty()) && !scoresFiles &&
      !runsACheckpoint) {
    if (fromCheckpoint)
      return attnc::usageError(name + " needs --ckpt DIR|FILE");
    return attnc::usageError(name + " needs a MODEL.yaml");
  }
  // Under mpirun, `train` is one rank of a data-parallel run: its program takes this rank's
  // shard of every batch, and rank 0 alone prints.
  std::unique_ptr<attn::dist::Communicator> comm;
  // Static: std::cout is flushed after main returns.
  static struct Discard : std::streambuf {
    int overflow(int c) override { return c; }
  } discard;
  if (chosen == train) {
    try {
      comm = attn::dist::fromEnvironment(trainOptions.rankTimeout);
    } catch (const std::exception &e) {
      std::cerr << "attnc: error: " << e.what() << "\n";
      return 1;
    }
    trainOptions.comm = comm.get();
    if (comm && comm->rank() != 0)
      std::cout.rdbuf(&discard);
  }
  bool distributed = comm && comm->size() > 1;
  // An error on one rank ends every rank: the others would wait for it until the timeout.
  auto exitCode = [&](int rc) {
    if (rc != 0 && distributed) {
      std::cerr.flush();
      comm->abort(rc);
    }
    return rc;
  };
  std::string rankPrefix = distributed ? "rank " + std::to_string(comm->rank()) + ": " : "";
  attn::driver::SessionOptions sessionOptions;
  sessionOptions.batchShards = distributed ? comm->size() : chosen == emit ? emitOptions.ranks : 1;
  sessionOptions.fuse = common.fuse;
  sessionOptions.fuseAttention = common.fuseAttention;
  sessionOptions.fuseRecurrence = common.fuseRecurrence;
  sessionOptions.hoist = common.hoist;
  sessionOptions.remarks = common.remarks;
  sessionOptions.uncachedDecoding = common.noCache;
  sessionOptions.device = *attn::pipelines::parseDevice(common.device); // checked by CLI11
  if (!common.noCompileCache)
    sessionOptions.compileCache =
        common.cacheDir.empty() ? attn::driver::CompileCache::defaultDir() : common.cacheDir;
  attn::driver::Session session(sessionOptions);
  try {
    std::function<int()> runVerb = [&]() -> int {
      if (chosen == eval)
        return attnc::eval(session, common, evalCkpt, evalOptions);
      if (chosen == translate)
        return attnc::translate(session, common, translateOptions);
      if (int rc = attnc::load(session, common, chosen == bench ? benchOptions.ckpt : ""))
        return rc;
      if (chosen == train)
        return attnc::train(session, common, trainOptions);
      if (chosen == check)
        return attnc::check(session, common);
      if (chosen == emit)
        return attnc::emit(session, common, emitOptions);
      if (chosen == run)
        return attnc::run(session, common, runOptions);
      if (chosen == bench)
        return attnc::bench(session, common, benchOptions);
      return attnc::compile(session, common, compileOptions);
    };
    int rc = runVerb();
    // Output that never arrived (stdout on a full disk, /dev/full, a closed pipe) is a failure.
    if (!std::cout.flush()) {
      std::cerr << "attnc: error: cannot write the output to stdout\n";
      return exitCode(1);
    }
    return exitCode(rc);
  } catch (const std::bad_alloc &) {
    std::cerr << "attnc: error: " << rankPrefix
              << "out of memory: the model or its data does not fit in this machine's memory\n";
    return exitCode(1);
  } catch (const std::exception &e) {
    // Runtime errors (bad input files, shape mismatches) carry their own context; one that
    // is already located ("data.tsv:3: error: ...") is printed as it is.
    std::string what = e.what();
    std::cerr << (what.find(": error: ") == std::string::npos ? "attnc: error: " : "") << rankPrefix
              << what << "\n";
    return exitCode(1);
  }
}
