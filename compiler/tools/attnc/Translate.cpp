// attnc translate: a trained seq2seq model decodes lines read from stdin, streaming (a
// tagger or classifier labels them); and `run` for a seq2seq model. The decoding is
// attn::task::Seq2SeqDecoder's.
#include "Verbs.h"

#include "compiler/Driver/TaskConfig.h"

#include "attn/app/Verbs.h"
#include "attn/plot/Plot.h"
#include "attn/task/Seq2SeqDecoder.h"

#include <iostream>

namespace attnc {
namespace {

// --plots on a model without attention is an error, found before any decoding: 0 or the exit
// code.
int checkPlots(const attn::task::Seq2SeqDecoder &decoder, const std::string &plots) {
  if (plots.empty() || decoder.hasAttention())
    return 0;
  return usageError("--plots draws attention weights, but this model has none (no "
                    "model.attention, model.transformer or model.conv)");
}

// What was decoded, collected for --plots.
struct Decoded {
  std::vector<std::string> lines;
  std::vector<attn::task::Encoded> sources;
  std::vector<std::vector<attn::decode::Hypothesis>> hypotheses;
  attn::app::DecodedBatch collector() {
    return [this](const std::vector<std::string> &l, const std::vector<attn::task::Encoded> &s,
                  const std::vector<std::vector<attn::decode::Hypothesis>> &h) {
      lines.insert(lines.end(), l.begin(), l.end());
      sources.insert(sources.end(), s.begin(), s.end());
      hypotheses.insert(hypotheses.end(), h.begin(), h.end());
    };
  }
};

// --plots DIR: one heatmap per source (best hypothesis); see checkPlots.
int plotAlignments(const attn::task::Seq2SeqDecoder &decoder, const std::string &dir,
                   const Decoded &decoded) {
  std::vector<attn::decode::Hypothesis> best;
  for (const auto &hyps : decoded.hypotheses)
    best.push_back(hyps[0]);
  try {
    for (const std::string &path :
         attn::plot::writeAlignmentPlots(decoder, dir, decoded.lines, decoded.sources, best))
      std::cout << "wrote " << path << "\n";
  } catch (const std::exception &e) {
    std::cerr << "attnc: error: " << e.what() << "\n";
    return 1;
  }
  std::cout.flush();
  return 0;
}

} // namespace

int runSeq2Seq(attn::driver::Session &session, const RunOptions &o) {
  attn::app::ModelConfig config = attn::driver::modelConfig(session.spec());
  const attn::task::PairData &data = session.compiledData(/*withValidation=*/true);
  std::unique_ptr<attn::driver::Model> m = session.loadModel(o.seed);
  if (!m)
    return 1;
  attn::task::Seq2SeqDecoder decoder(*m->program, m->params, data, config.decode);
  std::optional<std::vector<std::unique_ptr<attn::driver::Model>>> buckets = session.loadBuckets();
  if (!buckets)
    return 1;
  for (const auto &bucket : *buckets) // decode.buckets, as translate decodes
    decoder.addBucket(*bucket->program);
  if (int rc = checkPlots(decoder, o.plots))
    return rc;
  Decoded all;
  if (int rc = attn::app::runSeq2Seq(config, {*m->program, m->params, m->origin}, decoder, data,
                                     o.count.value_or(8), all.collector()))
    return rc;
  return o.plots.empty() ? 0 : plotAlignments(decoder, o.plots, all);
}

int translate(attn::driver::Session &session, const Common &c, const TranslateOptions &o) {
  if (c.stdinClosed) { // before compiling anything
    std::cerr << "attnc: error: stdin is closed; translate reads one source per line from it\n";
    return 1;
  }
  if (o.ckpt.empty())
    return usageError("translate needs --ckpt DIR|FILE");
  if (int rc = load(session, c, o.ckpt))
    return rc;
  const attn::yaml::Spec &s = session.spec();
  bool labels = s.task == attn::yaml::Task::Tag || s.task == attn::yaml::Task::Classify;
  if (s.task != attn::yaml::Task::Seq2seq && !labels)
    return usageError("translate needs a seq2seq, tag or classify model; " + s.name + " is task '" +
                      attn::yaml::nameOf(s.task) + "'");
  if (labels && (!o.plots.empty() || o.scores))
    return usageError(std::string(o.scores ? "--scores" : "--plots") + " is for seq2seq models; " +
                      s.name + " is task '" + attn::yaml::nameOf(s.task) + "'");
  const attn::task::PairData &data = session.compiledData();
  std::unique_ptr<attn::driver::Model> m = session.loadModel();
  if (!m)
    return 1;
  if (labels) // a tagger's tags or a classifier's label per line
    return attn::app::label("attnc", attn::task::Labeller(*m->program, m->params, data));
  attn::task::Seq2SeqDecoder decoder(*m->program, m->params, data, attn::driver::decodeConfig(s));
  // decode.buckets: the same model for shorter sources, each line to the shortest that fits.
  std::optional<std::vector<std::unique_ptr<attn::driver::Model>>> buckets = session.loadBuckets();
  if (!buckets)
    return 1;
  for (const auto &bucket : *buckets)
    decoder.addBucket(*bucket->program);
  if (int rc = checkPlots(decoder, o.plots)) // before reading any input
    return rc;
  Decoded all; // with --plots: every source and its best output
  int rc = attn::app::translate("attnc", decoder, o.scores,
                                o.plots.empty() ? attn::app::DecodedBatch() : all.collector());
  if (!o.plots.empty())
    if (int plotted = plotAlignments(decoder, o.plots, all))
      return plotted;
  return rc;
}

} // namespace attnc
