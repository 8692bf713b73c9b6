// attnc translate: a trained seq2seq model decodes lines read from stdin, streaming; and
// `run` for a seq2seq model. The decoding is attn::task::Seq2SeqDecoder's.
#include "Verbs.h"

#include "compiler/Driver/TaskConfig.h"

#include "attn/plot/Plot.h"
#include "attn/task/LineReader.h"
#include "attn/task/Seq2SeqDecoder.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace attnc {
namespace {

// --plots on a model without attention is an error, found before any decoding: 0 or the exit
// code.
int checkPlots(const attn::task::Seq2SeqDecoder &decoder, const std::string &plots) {
  if (plots.empty() || decoder.hasAttention())
    return 0;
  return usageError("--plots draws attention weights, but this model has neither "
                    "model.attention nor model.transformer");
}

// --plots DIR: one heatmap per source (best hypothesis); see checkPlots.
int plotAlignments(const attn::task::Seq2SeqDecoder &decoder, const std::string &dir,
                   const std::vector<std::string> &lines, const std::vector<attn::task::Encoded> &sources,
                   const std::vector<std::vector<attn::decode::Hypothesis>> &decoded) {
  std::vector<attn::decode::Hypothesis> best;
  for (const auto &hyps : decoded)
    best.push_back(hyps[0]);
  try {
    for (const std::string &path : attn::plot::writeAlignmentPlots(decoder, dir, lines, sources, best))
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
  const attn::yaml::Spec &s = session.spec();
  const attn::task::PairData &data = session.compiledData(/*withValidation=*/true);
  std::unique_ptr<attn::driver::Model> m = session.loadModel(o.seed);
  if (!m)
    return 1;
  attn::task::Seq2SeqDecoder decoder(*m->program, m->params, data,
                                     attn::driver::decodeConfig(s));
  if (int rc = checkPlots(decoder, o.plots))
    return rc;

  std::vector<attn::data::Pair> pairs(
      data.valid.begin(),
      data.valid.begin() + std::min<int64_t>(o.count.value_or(8), (int64_t)data.valid.size()));
  std::vector<attn::task::Encoded> sources;
  for (const auto &p : pairs)
    sources.push_back(decoder.encode(p.source));
  std::vector<std::vector<attn::decode::Hypothesis>> decoded = decoder.decode(sources);
  std::cout << s.name << ": " << pairs.size() << " validation pairs, "
            << (s.decode.beam > 1 ? "beam " + std::to_string(s.decode.beam)
                : s.decode.sample ? "sampled"
                                  : "greedy")
            << " decoding, parameters " << m->origin << "\n";
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::string out = decoder.text(decoded[i][0]);
    std::cout << "  " << pairs[i].source << "  ->  " << out
              << (out == pairs[i].target ? "   (right)" : "   (expected " + pairs[i].target + ")")
              << "\n";
  }
  if (!o.plots.empty())
    return plotAlignments(decoder, o.plots, [&] {
      std::vector<std::string> lines;
      for (const auto &p : pairs)
        lines.push_back(p.source);
      return lines;
    }(), sources, decoded);
  std::cout.flush();
  return 0;
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
  if (s.task != attn::yaml::Task::Seq2seq)
    return usageError("translate needs a seq2seq model; " + s.name + " is task '" +
                      attn::yaml::nameOf(s.task) + "'");
  const attn::task::PairData &data = session.compiledData();
  std::unique_ptr<attn::driver::Model> m = session.loadModel();
  if (!m)
    return 1;
  attn::task::Seq2SeqDecoder decoder(*m->program, m->params, data,
                                     attn::driver::decodeConfig(s));

  if (int rc = checkPlots(decoder, o.plots)) // before reading any input
    return rc;
  attn::task::LineReader input;

  // Input streams through in batches of the compiled rows: a batch is decoded when it is full
  // or when no more input is waiting, so each line is answered as soon as it can be and
  // memory stays bounded however long the input is (`yes | attnc translate`). Every line gets
  // an output line (empty when it cannot be encoded), so outputs stay aligned with inputs;
  // the reason goes to stderr with the line number.
  bool withScores = o.scores || s.decode.nbest > 1;
  std::vector<std::string> plotLines; // with --plots: every source and its best output
  std::vector<attn::task::Encoded> plotSources;
  std::vector<std::vector<attn::decode::Hypothesis>> plotDecoded;
  std::vector<attn::task::Encoded> sources;
  std::vector<std::string> lines;
  std::vector<int64_t> index; // per line of the batch: its 0-based input line, -1 first if bad
  std::vector<bool> ok;
  int failures = 0;
  int64_t n = 0;
  auto flush = [&] {
    std::vector<std::vector<attn::decode::Hypothesis>> decoded = decoder.decode(sources);
    size_t next = 0;
    for (size_t i = 0; i < ok.size(); ++i) {
      if (!ok[i]) {
        std::cout << (withScores ? std::to_string(index[i]) + " ||| ||| log_prob=-inf score=-inf"
                                 : "")
                  << "\n";
        continue;
      }
      const std::vector<attn::decode::Hypothesis> &hyps = decoded[next++];
      if (!withScores) {
        std::cout << decoder.text(hyps[0]) << "\n";
        continue;
      }
      for (const attn::decode::Hypothesis &h : hyps) // Marian's n-best format
        std::cout << index[i] << " ||| " << decoder.text(h) << " ||| log_prob="
                  << std::setprecision(8) << h.logProb << " score=" << h.score << "\n";
    }
    std::cout.flush();
    if (!o.plots.empty()) {
      plotLines.insert(plotLines.end(), lines.begin(), lines.end());
      plotSources.insert(plotSources.end(), sources.begin(), sources.end());
      plotDecoded.insert(plotDecoded.end(), decoded.begin(), decoded.end());
    }
    sources.clear(), lines.clear(), index.clear(), ok.clear();
  };
  std::string line;
  while (input.next(line)) {
    index.push_back(n++);
    try {
      sources.push_back(decoder.encode(line));
      lines.push_back(line);
      ok.push_back(true);
    } catch (const std::exception &e) {
      std::cerr << "attnc: error: stdin:" << n << ": " << e.what() << "\n";
      ok.push_back(false);
      ++failures;
    }
    if ((int64_t)ok.size() >= decoder.batchRows() || !input.waiting())
      flush();
  }
  if (!ok.empty())
    flush();
  if (input.failed()) {
    std::cerr << "attnc: error: cannot read stdin: " << input.error() << "\n";
    return 1;
  }
  if (!o.plots.empty())
    if (int rc = plotAlignments(decoder, o.plots, plotLines, plotSources, plotDecoded))
      return rc;
  std::cout.flush();
  return failures ? 1 : 0;
}

} // namespace attnc
