// What a compiled model does for its user, as `attnc run / train / eval / translate` and a
// standalone executable (`attnc compile --exe`) both do it: one function per verb over a
// loaded program, its parameters and its ModelConfig. Output goes to stdout, errors to stderr
// as "<tool>: error: ..."; each returns an exit code. The callers own everything that needs
// the compiler (compiling, checking a checkpoint's spec) and the command line.
#ifndef ATTN_APP_VERBS_H
#define ATTN_APP_VERBS_H

#include "attn/Program.h"
#include "attn/app/Config.h"
#include "attn/task/Data.h"
#include "attn/task/Labelling.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/TokenBatches.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attn::app {

/// A loaded program with its parameters (in manifest order) and where they came from
/// ("from FILE (step N)" | "initialised from seed N").
struct Model {
  const Program &program;
  std::vector<Tensor> &params;
  std::string origin;
  // decode.buckets: the same seq2seq model compiled for shorter sources (parameters shared by
  // name), which evaluation decodes with as translate does.
  std::vector<const Program *> buckets = {};
};

/// What was decoded, batch by batch: the source lines, as encoded, and their hypotheses
/// (attnc draws attention plots from it).
using DecodedBatch = std::function<void(const std::vector<std::string> &lines,
                                        const std::vector<task::Encoded> &sources,
                                        const std::vector<std::vector<decode::Hypothesis>> &)>;

/// Reads source lines from stdin and writes one output line per input line (Marian's n-best
/// form `INDEX ||| OUTPUT ||| log_prob=L score=S` with `scores` or decode.nbest > 1), in
/// batches of the compiled rows as input arrives. A line that cannot be encoded gets an empty
/// output line and an error naming its line number; the exit code is then 1.
int translate(const std::string &tool, const task::Seq2SeqDecoder &decoder, bool scores,
              const DecodedBatch &decoded = {});
/// The same for a tagger or classifier: per input line, its tags (space-separated, one per
/// token) or its label.
int label(const std::string &tool, const task::Labeller &labeller);

/// `run` on a seq2seq model: the first `count` validation sources decoded, each beside its
/// reference. Calls `decoded` once with all of them.
int runSeq2Seq(const ModelConfig &config, const Model &model, const task::Seq2SeqDecoder &decoder,
               const task::PairData &data, int64_t count, const DecodedBatch &decoded = {});
/// `run` on a tagger or classifier: the first `count` validation examples with their labels.
int runLabeller(const ModelConfig &config, const Model &model, const task::PairData &data,
                int64_t count);
/// `run` on a language model: config.sample's prime, then config.sample.options.length
/// sampled tokens (characters of the builtin text; `text`'s tokens for a model of its own).
int generate(const ModelConfig &config, const Model &model, const task::PairData *text = nullptr);
/// A language model's text from `prime`: the builtin text's characters, or (`text`: a model
/// of its own text, task::usesText) the prime split by its tokenizer, `options.length` tokens
/// sampled after it, and the prime and the sample detokenized together.
std::string generateText(const Program &program, const std::vector<Tensor> &params,
                         const task::PairData *text, const std::string &prime,
                         const decode::SampleOptions &options);
/// `run` on a regressor: the forward pass over --input FILE (data.window numbers per line) or
/// the first `count` examples of the builtin validation split; `output` also gets the raw
/// outputs.
int runRegressor(const ModelConfig &config, const Model &model, const std::string &input,
                 const std::string &output, std::optional<int64_t> count);

/// `train`: the training loop with its reports (data, settings, result, validation quality).
struct TrainRun {
  std::optional<int64_t> steps; // default train.steps
  std::string out;              // the run directory (runDirectory)
  bool resume = false, overwrite = false;
  dist::Communicator *comm = nullptr; // under mpirun
  // Draws DIR/loss.png (train::TrainOptions::plotLoss); unset: no plot.
  std::function<void(const std::string &dir, const std::string &title)> plotLoss;
  // Compiles the training step for each shape of token-count batches (train.batch_tokens),
  // sharing the model's parameters; empty on failure (reported). Unset (an executable, the
  // C API, which cannot compile): batches of train.batch_size, with a note.
  std::function<std::vector<const Program *>(const std::vector<task::TokenBucket> &)>
      compileBuckets;
};
/// `data`: a pair task's data (built by the caller), else null.
int train(const std::string &tool, const ModelConfig &config, const Model &model,
          const task::PairData *data, const TrainRun &run);

/// `eval`: the validation loss of the checkpoint `file` (saved at `step`), then what the
/// model gets right (a seq2seq model: exact match, token accuracy, BLEU and chrF).
/// `bleuOnly`: a seq2seq model's corpus BLEU and chrF2 on the validation pairs alone, as
/// sacreBLEU prints them with its signatures.
int evaluate(const ModelConfig &config, const Model &model, const task::PairData *data,
             const std::string &file, const std::string &step, bool bleuOnly = false);

/// `eval --hyp`: corpus BLEU and chrF2 of the lines of `hypothesesPath` (one translation per
/// pair, in order: another system's output) against the targets of the TSV `pairsPath`,
/// printed as evaluate's bleuOnly prints a model's. Throws on files that cannot be read or
/// whose counts differ.
int scoreTranslations(const std::string &pairsPath, const std::string &hypothesesPath);

/// The validation quality of a pair model: a seq2seq model's decoded outputs (exact match,
/// token accuracy), a tagger's tags or a classifier's labels (accuracy).
void reportQuality(const ModelConfig &config, const Model &model, const task::PairData &data);

/// The validation quality of a regressor (task regress): @forward's mean squared error on the
/// validation split, per predicted step when it predicts several, and that of repeating the
/// window's last value (the naive forecast).
void reportSeries(const ModelConfig &config, const Model &model);

} // namespace attn::app

#endif
