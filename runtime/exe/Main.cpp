// The main of a standalone executable (`attnc compile MODEL.yaml --exe -o OUT`): one model's
// verbs (translate, run, train, eval, info) from the command line, as attnc has them, over the
// program, configuration and weights linked into it. What it prints is attn::app's, so its
// outputs equal attnc's on the same inputs. It links the runtime, oneDNN and libgomp only.
//
// attnc links this with the model's object and the bundle's symbols (attn/app/Bundle.h).
#include "attn/Cpu.h"
#include "attn/Init.h"
#include "attn/Numbers.h"
#include "attn/Program.h"
#include "attn/app/Bundle.h"
#include "attn/app/Config.h"
#include "attn/app/Verbs.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/task/Metadata.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>

namespace {

using attn::app::ModelConfig;
using attn::task::Task;

std::string tool = "model"; // argv[0]'s file name, in messages

int fail(const std::string &message) {
  std::cerr << tool << ": error: " << message << "\n";
  return 1;
}

int usage(const std::string &message) {
  std::cerr << tool << ": error: " << message << "\nRun with --help for more information.\n";
  return 2;
}

// The directory holding this executable (where its weights file lies).
std::string ownDirectory() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

using attn::app::load;
using attn::app::Loaded;
using attn::app::pairData;
using attn::app::Weights;

// The weights of --ckpt, else the bundled ones (embedded, or the file beside the executable).
Weights readWeights(const std::string &ckpt) {
  if (ckpt.empty())
    return attn::app::bundledWeights(ownDirectory());
  std::string warning;
  Weights w = attn::app::checkpointWeights(ckpt, attn::app::bundledConfig(), &warning);
  if (!warning.empty())
    std::cerr << tool << ": warning: " << warning << "\n";
  return w;
}

// " (step N)" of weights a training run wrote; "" for weights that were initialised when the
// executable was compiled (no --ckpt).
std::string trainedSteps(const Weights &w) {
  std::string step = attn::task::stepOf(w.ckpt.metadata);
  return step == "?" ? "" : " (step " + step + ")";
}

// The command line's values before they are checked (numbers are read by attn::parse*).
struct Raw {
  std::string ckpt, count, seed, prime, temperature, topK, sampleSeed, beam, nbest, steps;
  std::string lengthPenalty, input, output, out;
  bool sample = false, scores = false, resume = false, overwrite = false, fresh = false;
  // The numbers of count, seed and steps once checked.
  std::optional<int64_t> countValue, stepsValue;
  std::optional<uint64_t> seedValue;
};

// Every number of the command line, checked before any work (a bad one is a usage error, as
// attnc's); --beam, --nbest, --sample... go onto config.decode (and --temperature... onto
// config.sample for a language model), checked as the spec's validator checks their keys.
void checkFlags(Raw &r, ModelConfig &c) {
  if (!r.count.empty())
    r.countValue = attn::parseInt(r.count, 1, 1000000000, "--count");
  if (!r.steps.empty())
    r.stepsValue = attn::parseInt(r.steps, 1, 1000000000000, "--steps");
  if (!r.seed.empty())
    r.seedValue = attn::parseUnsigned(r.seed, "--seed");
  attn::task::DecodeConfig &d = c.decode;
  attn::decode::SampleOptions &s = c.sample.options;
  if (!r.beam.empty())
    d.beam = attn::parseInt(r.beam, 1, 1024, "--beam");
  if (!r.nbest.empty())
    d.nbest = attn::parseInt(r.nbest, 1, 1024, "--nbest");
  if (!r.lengthPenalty.empty())
    d.lengthPenalty = attn::parseFinite(r.lengthPenalty, 0, 1e6, "--length-penalty");
  if (r.sample)
    d.sample = true;
  if (!r.temperature.empty())
    d.temperature = s.temperature = attn::parseFinite(r.temperature, 0, 1e6, "--temperature");
  if (!r.topK.empty())
    d.topK = s.topK = attn::parseInt(r.topK, 0, 10000000, "--top-k");
  if (!r.sampleSeed.empty())
    d.seed = s.seed = attn::parseUnsigned(r.sampleSeed, "--sample-seed");
  if (r.countValue && c.data.task == Task::Lm)
    s.length = *r.countValue;
  if (!r.prime.empty())
    c.sample.prime = r.prime;
  if (d.nbest > d.beam)
    throw std::runtime_error("--nbest (" + std::to_string(d.nbest) + ") cannot exceed --beam (" +
                             std::to_string(d.beam) + "); raise --beam or lower --nbest");
  if (d.sample && d.beam > 1)
    throw std::runtime_error("--sample decodes greedy rows only; it needs --beam 1");
}

int translate(const ModelConfig &c, const Raw &r) {
  bool labels = c.data.task == Task::Tag || c.data.task == Task::Classify;
  if (c.data.task != Task::Seq2Seq && !labels)
    return usage("translate needs a seq2seq, tag or classify model; " + c.name + " is task '" +
                 attn::task::taskName(c.data.task) + "'");
  if (labels && r.scores)
    return usage("--scores is for seq2seq models; " + c.name + " is task '" +
                 attn::task::taskName(c.data.task) + "'");
  Weights w = readWeights(r.ckpt);
  attn::task::PairData data = pairData(c, w);
  Loaded l = load(&w, c.train.seed);
  if (labels) // a tagger's tags or a classifier's label per line
    return attn::app::label(tool, attn::task::Labeller(*l.program, l.params, data));
  attn::task::Seq2SeqDecoder decoder(*l.program, l.params, data, c.decode);
  for (const auto &bucket : l.buckets) // decode.buckets
    decoder.addBucket(*bucket);
  if (c.decode.beam > decoder.batchRows())
    return usage("--beam " + std::to_string(c.decode.beam) + " needs " +
                 std::to_string(c.decode.beam) + " decoder rows; this executable has " +
                 std::to_string(decoder.batchRows()) +
                 " (compile it with a larger decode.beam or decode.batch)");
  return attn::app::translate(tool, decoder, r.scores);
}

int run(const ModelConfig &c, const Raw &r) {
  std::optional<int64_t> count = c.data.task == Task::Lm ? std::nullopt : r.countValue;
  bool trained = !r.ckpt.empty() || !r.seedValue;
  std::optional<Weights> w;
  if (trained || attn::task::hasVocabularies(c.data))
    w = readWeights(r.ckpt);
  uint64_t seed = r.seedValue.value_or(c.train.seed);
  Loaded l = load(trained ? &*w : nullptr, seed);
  switch (c.data.task) {
  case Task::Seq2Seq:
  case Task::Tag:
  case Task::Classify: {
    attn::task::PairData data = pairData(c, *w);
    data.valid = attn::task::buildPairs(c.data, &data).valid;
    if (c.data.task != Task::Seq2Seq)
      return attn::app::runLabeller(c, l.model(), data, count.value_or(8));
    attn::task::Seq2SeqDecoder decoder(*l.program, l.params, data, c.decode);
    for (const auto &bucket : l.buckets) // decode.buckets
      decoder.addBucket(*bucket);
    return attn::app::runSeq2Seq(c, l.model(), decoder, data, count.value_or(8));
  }
  case Task::Lm: {
    std::optional<attn::task::PairData> text;
    if (attn::task::usesText(c.data))
      text = pairData(c, *w);
    return attn::app::generate(c, l.model(), text ? &*text : nullptr);
  }
  case Task::Regress:
    return attn::app::runRegressor(c, l.model(), r.input, r.output, count);
  }
  return 1;
}

int train(const ModelConfig &c, const Raw &r) {
  attn::app::TrainRun run;
  run.steps = r.stepsValue;
  run.out = r.out;
  run.resume = r.resume;
  run.overwrite = r.overwrite;
  std::optional<attn::task::PairData> data;
  if (attn::task::hasVocabularies(c.data)) {
    // The program's shapes are the vocabularies' the model was compiled with: the data must
    // give the same ones (it does when it is the spec's).
    attn::task::PairData compiled = pairData(c, readWeights(""));
    attn::task::DataConfig d = c.data;
    d.cacheDir = attn::app::runDirectory(c, r.out) + "/data"; // a streamed corpus's index
    data = attn::task::buildPairs(d, &compiled);
    attn::app::checkVocabularies(c, *data, compiled);
  }
  std::string last = attn::app::runDirectory(c, r.out) + "/last.safetensors";
  if (r.resume && std::filesystem::exists(last)) {
    auto meta = attn::train::readCheckpointMetadata(last);
    auto spec = meta.find(attn::task::kSpecKey);
    if (spec != meta.end() && spec->second != c.spec)
      return fail(last + " was trained from another spec than " + c.name +
                  " was compiled from; resume it with attnc train --resume");
  }
  // Training continues from the weights it has (--ckpt's, else the compiled-in ones), as a
  // new run with a fresh optimizer; --fresh starts from newly initialised weights. (--resume
  // of an existing run takes the run's own last checkpoint, optimizer state and step.)
  std::optional<Weights> w;
  if (!r.fresh)
    w = readWeights(r.ckpt);
  Loaded l = load(w ? &*w : nullptr, c.train.seed);
  attn::app::restartOptimizer(l, c.train.seed);
  if (!(r.resume && std::filesystem::exists(last)))
    std::cout << c.name << ": starting from "
              << (w ? w->name + trainedSteps(*w) +
                          " with a fresh optimizer; --fresh starts from new weights"
                    : "freshly initialised weights (seed " + std::to_string(c.train.seed) + ")")
              << std::endl;
  return attn::app::train(tool, c, l.model(), data ? &*data : nullptr, run);
}

int eval(const ModelConfig &c, const Raw &r) {
  Weights w = readWeights(r.ckpt);
  Loaded l = load(&w, c.train.seed);
  std::optional<attn::task::PairData> data;
  if (attn::task::hasVocabularies(c.data)) {
    data = pairData(c, w);
    attn::task::PairData built = attn::task::buildPairs(c.data, &*data);
    data->valid = std::move(built.valid);
    data->textWindows[1] = std::move(built.textWindows[1]); // a language model's
  }
  return attn::app::evaluate(c, l.model(), data ? &*data : nullptr, w.name,
                             attn::task::stepOf(w.ckpt.metadata));
}

int info(const ModelConfig &c) {
  // The program info as it is, not through attn::Program, which refuses a program this
  // machine cannot run: info says what the executable holds anywhere.
  const attn_program_info &p = *attn::app::bundledProgram();
  std::cout << c.name << ": " << attn::task::taskName(c.data.task) << " model compiled by attnc"
            << " for the CPU " << (p.cpu ? p.cpu : "?")
            << (p.device ? std::string(", running on ") + p.device : std::string()) << "\nentries:";
  for (int32_t i = 0; i < p.num_entries; ++i)
    std::cout << " " << p.entries[i].name;
  std::cout << "\nweights: "
            << (attn::app::bundledWeightsFile().empty()
                    ? std::string("embedded")
                    : ownDirectory() + "/" + attn::app::bundledWeightsFile())
            << "\n";
  // Whether it runs here: the other verbs refuse a program whose instructions this CPU lacks.
  std::vector<std::string> missing =
      attn::missingCpuFeatures(p.cpu_features ? p.cpu_features : "");
  if (missing.empty()) {
    std::cout << "runs on this CPU: yes\n";
    return 0;
  }
  std::string list;
  for (const std::string &f : missing)
    list += (list.empty() ? "" : ", ") + f;
  std::cout << "runs on this CPU: no, it lacks " << list << "\n";
  return fail("this CPU cannot run " + c.name + " (compiled for the CPU " +
              std::string(p.cpu ? p.cpu : "?") + "): it lacks " + list +
              "; compile it again here (attnc compile --cpu native) or for an older CPU "
              "(--cpu x86-64-v3)");
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 0 && argv[0])
    tool = std::filesystem::path(argv[0]).filename().string();
  // As attnc: a closed standard descriptor gets /dev/null, so that no file opened later
  // takes its number and receives what is meant for it.
  bool stdinClosed = fcntl(0, F_GETFD) == -1;
  for (int fd = 0; fd < 3; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
      return 1;
  ModelConfig config;
  try {
    config = attn::app::bundledConfig();
  } catch (const std::exception &e) {
    return fail(e.what());
  }

  Raw r;
  CLI::App app{config.name + ": the model " + config.name + " (" +
                   attn::task::taskName(config.data.task) + "), compiled ahead of time by attnc",
               tool};
  app.require_subcommand(0, 1);
  auto ckpt = [&](CLI::App *v) {
    v->add_option("--ckpt", r.ckpt, "parameters of a checkpoint instead of the built-in ones")
        ->type_name("DIR|FILE");
  };
  auto decodeFlags = [&](CLI::App *v) {
    v->add_flag("--sample", r.sample, "sample each token (decode.sample)");
    v->add_option("--temperature", r.temperature, "sampling temperature")->type_name("T");
    v->add_option("--top-k", r.topK, "sample among the K likeliest")->type_name("K");
    v->add_option("--sample-seed", r.sampleSeed, "sampling seed")->type_name("N");
  };
  CLI::App *translate =
      app.add_subcommand("translate", "answer each line of stdin (seq2seq; tag, classify: labels)");
  ckpt(translate);
  decodeFlags(translate);
  translate->add_option("--beam", r.beam, "beam size (decode.beam; 1: greedy)")->type_name("N");
  translate->add_option("--nbest", r.nbest, "hypotheses per input (decode.nbest)")->type_name("N");
  translate->add_option("--length-penalty", r.lengthPenalty, "decode.length_penalty")
      ->type_name("A");
  translate->add_flag("--scores", r.scores, "print scores (Marian's n-best form)");
  CLI::App *run = app.add_subcommand("run", "run the model as attnc run does");
  ckpt(run);
  decodeFlags(run);
  run->add_option("--input", r.input, "examples to run (regress)")->type_name("FILE");
  run->add_option("--output", r.output, "also write the raw outputs to FILE");
  run->add_option("--count", r.count, "examples (or characters) to run")->type_name("N");
  run->add_option("--seed", r.seed, "initialise the parameters from seed N")->type_name("N");
  run->add_option("--prime", r.prime, "lm: the text to start from")->type_name("TEXT");
  CLI::App *train = app.add_subcommand(
      "train", "train with the compiled train step, from the weights it has (--fresh: new ones)");
  CLI::Option *trainCkpt = train->add_option("--ckpt", r.ckpt, "start from this checkpoint's weights")
                              ->type_name("DIR|FILE");
  train->add_flag("--fresh", r.fresh, "start from freshly initialised weights (seed train.seed)")
      ->excludes(trainCkpt);
  train->add_option("--steps", r.steps, "train this many steps (default train.steps)")
      ->type_name("N");
  train->add_option("--out", r.out, "the run directory")->type_name("DIR");
  train->add_flag("--resume", r.resume, "continue the run in the directory");
  train->add_flag("--overwrite", r.overwrite, "replace the run in the directory");
  CLI::App *eval = app.add_subcommand("eval", "the validation loss of the parameters");
  ckpt(eval);
  CLI::App *info = app.add_subcommand("info", "what this executable holds");
  try {
    app.parse(argc, argv);
    checkFlags(r, config);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return usage(e.what());
  } catch (const std::exception &e) {
    return usage(e.what());
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 2;
  }
  CLI::App *chosen = app.get_subcommands()[0];
  int rc = 1;
  try {
    if (chosen == translate)
      rc = stdinClosed ? fail("stdin is closed; translate reads one source per line from it")
                       : ::translate(config, r);
    else if (chosen == run)
      rc = ::run(config, r);
    else if (chosen == train)
      rc = ::train(config, r);
    else if (chosen == eval)
      rc = ::eval(config, r);
    else
      rc = ::info(config);
  } catch (const std::bad_alloc &) {
    return fail("out of memory: the model or its data does not fit in this machine's memory");
  } catch (const std::exception &e) {
    // As attnc: a message that is already located ("data.tsv:3: error: ...") as it is.
    std::string what = e.what();
    if (what.find(": error: ") != std::string::npos)
      return std::cerr << what << "\n", 1;
    return fail(what);
  }
  // Output that never arrived (a full disk, /dev/full, a closed pipe) is a failure.
  if (!std::cout.flush())
    return fail("cannot write the output to stdout");
  return rc;
}
