// attnc: the user's command line. One binary, verbs like Marian's and IREE's:
//   attnc check | emit | run | train | eval | translate | compile  MODEL.yaml [options]
#include "Compiler.h"
#include "Verbs.h"

#include "attn/Numbers.h"

#include <fcntl.h>


#include <iostream>
#include <map>
#include <sstream>

using attnc::Options;

namespace {

const char *kUsage = R"(attnc: compile and run sequence models written in YAML

usage: attnc <verb> MODEL.yaml [options]

verbs:
  check     parse and validate the spec, build its attn IR, report problems
  emit      print one stage of the compilation (--stage)
  run       compile in-process (JIT) and run the model's forward pass on data
  train     compile the training step and train, with checkpoints, logs and a loss plot
  eval      the validation loss of a trained model (from its checkpoint)
  translate decode lines from stdin with a trained seq2seq model (greedy or beam search)
  compile   compile ahead of time to an object file and a C header

common options:
  --set KEY=VALUE   override one spec key (YAML value), e.g. --set train.batch_size=8
  --no-fuse         no structural fusion (attn-fuse-recurrence, attn-fuse-attention): every
                    scan stays a scan, attention stays unfused; the unfused reference
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
  attn      the attn dialect as imported from the spec (@forward, @loss)
  fused     attn after structural fusion (attn-fuse-recurrence, attn-fuse-attention; none
            with --no-fuse)
  grad      attn after fusion, attn-autodiff and attn-train-step (@loss_grad, @train_step)
  lowered   after attn-lower: linalg/tensor/scf on tensors plus oneDNN kernel calls
  llvm      the optimised LLVM IR that is JIT-compiled or written as an object
)"},
    {"run", R"(usage: attnc run MODEL.yaml [--ckpt DIR|FILE] [--input FILE] [--count N] [--seed N]
                 [--output FILE] [--plots DIR] [--prime TEXT] [--temperature T] [--top-k K]
                 [--sample-seed N] [--sample] [--no-cache] [--set KEY=VALUE]...

Compiles the model in-process and runs its forward pass with the parameters of a trained
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
--sample, --temperature, --top-k, --sample-seed and --no-cache decode as for translate.
)"},
    {"train", R"(usage: attnc train MODEL.yaml [--steps N] [--out DIR] [--resume [--accept-changes]]
                   [--overwrite] [--set KEY=VALUE]...

Compiles @train_step (loss, gradients by attn-autodiff, clipping, the spec's optimizer) and
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
checkpoint in place.
)"},
    {"eval", R"(usage: attnc eval [MODEL.yaml] --ckpt DIR|FILE [--set KEY=VALUE]...

Loads a checkpoint (DIR means DIR/best.safetensors, else DIR/last.safetensors) and prints the
mean loss over the validation split. Without MODEL.yaml the spec stored in the checkpoint is
used.
)"},
    {"translate", R"(usage: attnc translate [MODEL.yaml] --ckpt DIR|FILE [--beam N] [--nbest N]
                       [--scores] [--plots DIR] [--sample] [--temperature T] [--top-k K]
                       [--sample-seed N] [--no-cache] [--set KEY=VALUE]...

Reads source lines on stdin and writes one output line per input line, decoded by the trained
seq2seq model in the checkpoint (DIR means DIR/best.safetensors, else DIR/last.safetensors;
without MODEL.yaml the spec and vocabularies stored in the checkpoint are used). Decoding
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
from --sample-seed N (decode.seed). --no-cache (model.transformer) decodes by recomputing the
decoder over the whole prefix at every step (@decode_full) instead of using the key/value
cache: the reference for the cache, with the same outputs.
)"},
    {"compile", R"(usage: attnc compile MODEL.yaml -o MODEL.o [--header MODEL.h] [--cpu NAME]
                     [--set KEY=VALUE]...

Compiles ahead of time for --cpu: native (default: this machine, with all its features, e.g.
AVX-512) or an LLVM CPU name for objects that run elsewhere (x86-64-v3: any AVX2 machine;
x86-64: any x86-64). MODEL.o holds the entry points
`void attn_<model>_<entry>(void **args)`, and the header declares them together with the
program manifest `attn_<model>_program` (parameters, inputs, outputs; see attn/abi.h).
Link MODEL.o with the attn runtime (AttnRuntime) and oneDNN; MLIR is not needed.
)"},
};


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
      o.seed = attn::parseUnsigned(value, "--seed");
    else if (takeValue("--count"))
      o.count = attn::parseInt(value, 1, 1000000000, "--count");
    else if (takeValue("--steps"))
      o.steps = attn::parseInt(value, 1, 1000000000000, "--steps");
    else if (takeValue("--out"))
      o.out = value;
    else if (takeValue("--plots"))
      o.plots = value;
    else if (takeValue("--ckpt"))
      o.ckpt = value;
    else if (takeValue("--cpu"))
      o.cpu = value;
    else if (takeValue("--temperature")) {
      o.temperature = attn::parseFinite(value, 0, 1e6, "--temperature");
      o.overrides.push_back({"decode.temperature", value});
    } else if (takeValue("--sample-seed")) {
      o.sampleSeed = attn::parseUnsigned(value, "--sample-seed");
      o.overrides.push_back({"decode.seed", value});
    } else if (takeValue("--top-k")) {
      o.overrides.push_back({"sample.top_k", value});
      o.overrides.push_back({"decode.top_k", value});
    } else if (a == "--sample")
      o.overrides.push_back({"decode.sample", "true"});
    else if (a == "--no-cache")
      o.noCache = true;
    else if (takeValue("--prime"))
      o.prime = value;
    else if (a == "--no-fuse")
      o.fuse = false;
    else if (takeValue("--beam"))
      o.overrides.push_back({"decode.beam", value});
    else if (takeValue("--nbest"))
      o.overrides.push_back({"decode.nbest", value});
    else if (a == "--scores")
      o.scores = true;
    else if (a == "--resume")
      o.resume = true;
    else if (a == "--overwrite")
      o.overwrite = true;
    else if (a == "--accept-changes")
      o.acceptChanges = true;
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

} // namespace

int main(int argc, char **argv) {
  Options o;
  // A closed standard descriptor would be handed to the next file opened, and what is meant
  // for it (a prompt's input, output, errors) would go to that file: park /dev/null on it,
  // and remember that stdin was closed (translate reads it).
  o.stdinClosed = fcntl(0, F_GETFD) == -1;
  for (int fd = 0; fd < 3; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
      return 1;
  std::string error;
  try {
    error = parseArgs(argc, argv, o);
  } catch (const std::exception &e) {
    error = e.what();
  }
  if (!error.empty())
    return attnc::usageError(error);
  if (o.verb.empty() || (o.help && !kVerbHelp.count(o.verb))) {
    std::cout << kUsage;
    return o.help ? 0 : 2;
  }
  if (!kVerbHelp.count(o.verb))
    return attnc::usageError("unknown verb '" + o.verb + "'");
  if (o.help) {
    std::cout << kVerbHelp.at(o.verb);
    return 0;
  }
  bool fromCheckpoint = o.verb == "eval" || o.verb == "translate";
  if (o.model.empty() && !(fromCheckpoint && !o.ckpt.empty()))
    return attnc::usageError(o.verb + " needs a MODEL.yaml");
  attnc::Compiler c;
  c.setFuse(o.fuse);
  c.setUncachedDecoding(o.noCache);
  try {
    auto runVerb = [&]() -> int {
      if (o.verb == "eval")
        return attnc::eval(c, o);
      if (o.verb == "translate")
        return attnc::translate(c, o);
      if (!c.load(o.model, o.overrides))
        return 1;
      if (o.verb == "train")
        return attnc::train(c, o);
      if (o.verb == "check")
        return attnc::check(c, o);
      if (o.verb == "emit")
        return attnc::emit(c, o);
      if (o.verb == "run")
        return attnc::run(c, o);
      return attnc::compile(c, o);
    };
    int rc = runVerb();
    // Output that never arrived (stdout on a full disk, /dev/full, a closed pipe) is a failure.
    if (!std::cout.flush()) {
      std::cerr << "attnc: error: cannot write the output to stdout\n";
      return 1;
    }
    return rc;
  } catch (const std::bad_alloc &) {
    std::cerr << "attnc: error: out of memory: the model or its data does not fit in this "
                 "machine's memory\n";
    return 1;
  } catch (const std::exception &e) {
    // Runtime errors (bad input files, shape mismatches) carry their own context; one that
    // is already located ("data.tsv:3: error: ...") is printed as it is.
    std::string what = e.what();
    std::cerr << (what.find(": error: ") == std::string::npos ? "attnc: error: " : "") << what
              << "\n";
    return 1;
  }
}
