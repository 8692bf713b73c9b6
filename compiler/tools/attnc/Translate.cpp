// attnc translate: a trained seq2seq model decodes lines read from stdin. The decoding here is
// shared with `train` / `eval` (exact match on the validation pairs) and `run` (examples).
#include "Data.h"
#include "Translate.h"
#include "Verbs.h"


#include "attn/Init.h"
#include "attn/decode/Beam.h"
#include "attn/decode/Seq2Seq.h"
#include "attn/train/Plot.h"
#include "attn/train/Trainer.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace attnc {

using attn::decode::Hypothesis;

Seq2SeqDecoder::Seq2SeqDecoder(const attn::Program &program, const std::vector<attn::Tensor> &params,
                               const attn::yaml::Spec &spec, const PairData &data)
    : program(program), params(params), spec(spec), data(data) {
  const attn_entry_info &encode = program.entry("encode");
  rows = encode.inputs[0].shape[0];
  sourceLength = encode.inputs[0].shape[1];
}

Encoded Seq2SeqDecoder::encode(const std::string &line) const {
  Encoded e;
  e.ids = attn::data::encodeSource(line, data.source, data.tokenize, sourceLength,
                                   spec.model.seq2seq.reverseSource, e.mask);
  return e;
}

std::vector<std::vector<Hypothesis>>
Seq2SeqDecoder::decode(const std::vector<Encoded> &sources) const {
  attn::decode::BeamOptions beam;
  beam.beam = spec.decode.beam;
  beam.lengthPenalty = spec.decode.lengthPenalty;
  beam.maxLength = spec.decode.maxLength ? spec.decode.maxLength : data.targetLength;
  beam.nbest = spec.decode.nbest;
  beam.bos = attn::data::Vocab::kBos;
  beam.eos = attn::data::Vocab::kEos;

  std::vector<std::vector<Hypothesis>> out;
  if (spec.decode.beam > 1) {
    for (size_t i = 0; i < sources.size(); ++i) {
      attn::Tensor src, mask;
      batchOf(sources, i, 1, src, mask);
      out.push_back(attn::decode::beamSearch(*stepModel(src, mask), beam));
    }
    return out;
  }
  attn::decode::SamplingOptions sampling;
  sampling.temperature = spec.decode.temperature;
  sampling.topK = spec.decode.topK;
  sampling.seed = spec.decode.seed;
  sampling.maxLength = beam.maxLength;
  sampling.bos = beam.bos;
  sampling.eos = beam.eos;
  forEachBatch(sources, [&](size_t first, size_t count, const attn::Tensor &src,
                            const attn::Tensor &mask) {
    std::unique_ptr<attn::decode::StepModel> model = stepModel(src, mask);
    // Source i draws from stream i, whatever the batch it falls in.
    sampling.firstRow = first;
    std::vector<Hypothesis> best =
        spec.decode.sample ? attn::decode::sampled(*model, sampling)
                           : attn::decode::greedy(*model, beam.maxLength, beam.bos, beam.eos);
    for (size_t r = 0; r < count; ++r)
      out.push_back({best[r]});
  });
  return out;
}

std::unique_ptr<attn::decode::StepModel>
Seq2SeqDecoder::stepModel(const attn::Tensor &src, const attn::Tensor &mask) const {
  if (program.findEntry("decode_full"))
    return std::make_unique<attn::decode::ProgramPrefixModel>(program, params, src, mask);
  return std::make_unique<attn::decode::ProgramStepModel>(program, params, src, mask);
}

void Seq2SeqDecoder::forEachBatch(const std::vector<Encoded> &sources,
                                  const BatchBody &body) const {
  for (size_t first = 0; first < sources.size(); first += rows) {
    size_t count = std::min(sources.size() - first, (size_t)rows);
    attn::Tensor src, mask;
    batchOf(sources, first, count, src, mask);
    body(first, count, src, mask);
  }
}

void Seq2SeqDecoder::batchOf(const std::vector<Encoded> &sources, size_t first, size_t count,
                             attn::Tensor &src, attn::Tensor &mask) const {
  src = attn::Tensor(ATTN_I32, {rows, sourceLength});
  mask = attn::Tensor(ATTN_F32, {rows, sourceLength});
  for (int64_t r = 0; r < rows; ++r) {
    const Encoded &e = sources[first + ((size_t)r < count ? (size_t)r : 0)];
    std::copy(e.ids.begin(), e.ids.end(), src.data<int32_t>() + r * sourceLength);
    std::copy(e.mask.begin(), e.mask.end(), mask.data<float>() + r * sourceLength);
  }
}

bool Seq2SeqDecoder::hasAttention() const {
  const attn_entry_info &step = program.entry("decode_step");
  for (int32_t i = 0; i < step.num_outputs; ++i)
    if (step.outputs[i].name && std::string(step.outputs[i].name) == "attention")
      return true;
  return false;
}

std::vector<std::vector<std::vector<float>>>
Seq2SeqDecoder::alignments(const std::vector<Encoded> &sources,
                           const std::vector<Hypothesis> &outputs) const {
  std::vector<std::vector<std::vector<float>>> out(sources.size());
  if (!hasAttention())
    return out;
  // A Transformer's decode_step holds maxLength positions: no step past them (an output that
  // long ended without eos, and gets no eos row).
  size_t maxLength = spec.decode.maxLength ? spec.decode.maxLength : data.targetLength;
  forEachBatch(sources, [&](size_t first, size_t count, const attn::Tensor &src,
                            const attn::Tensor &mask) {
    attn::decode::ProgramStepModel model(program, params, src, mask);
    size_t longest = 0;
    for (size_t r = 0; r < count; ++r)
      longest = std::max(longest, std::min(outputs[first + r].tokens.size(), maxLength - 1));
    // Step t feeds the token before output t (bos first) and reads where output t looked.
    std::vector<int32_t> tokens(rows, attn::data::Vocab::kBos);
    std::vector<float> logProbs;
    for (size_t t = 0; t <= longest; ++t) {
      model.step(tokens, logProbs);
      const attn::Tensor *weights = model.result("attention");
      for (size_t r = 0; r < count; ++r) {
        const Encoded &e = sources[first + r];
        const std::vector<int32_t> &hyp = outputs[first + r].tokens;
        if (t <= hyp.size()) {
          // Only the real source tokens, in the order they were written.
          const float *row = weights->data<float>() + r * sourceLength;
          int64_t n = (int64_t)std::count(e.mask.begin(), e.mask.end(), 1.0f);
          std::vector<float> w(row, row + n);
          if (spec.model.seq2seq.reverseSource)
            std::reverse(w.begin(), w.end());
          out[first + r].push_back(std::move(w));
        }
        tokens[r] = t < hyp.size() ? hyp[t] : attn::data::Vocab::kEos;
      }
    }
  });
  return out;
}

void Seq2SeqDecoder::writeAlignmentPlots(const std::string &dir,
                                         const std::vector<std::string> &lines,
                                         const std::vector<Encoded> &sources,
                                         const std::vector<Hypothesis> &outputs) const {
  std::vector<std::vector<std::vector<float>>> weights = alignments(sources, outputs);
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < sources.size(); ++i) {
    std::vector<std::string> columns = attn::data::tokenize(lines[i], data.tokenize);
    std::vector<std::string> rowLabels = data.target.decode(outputs[i].tokens);
    rowLabels.push_back("<eos>");
    rowLabels.resize(weights[i].size()); // an output that ended at the length limit: no eos
    std::string path = dir + "/attention-" + std::to_string(i) + ".png";
    attn::train::writeHeatmapPng(path, weights[i], columns, rowLabels,
                                 "\"" + lines[i] + "\" -> \"" + text(outputs[i]) + "\"");
    std::cout << "wrote " << path << "\n";
  }
}

std::string Seq2SeqDecoder::text(const Hypothesis &h) const {
  return attn::data::detokenize(data.target.decode(h.tokens), data.tokenize);
}

Accuracy Seq2SeqDecoder::accuracy(const std::vector<attn::data::Pair> &pairs) const {
  std::vector<Encoded> sources;
  std::vector<std::vector<int32_t>> references;
  for (const attn::data::Pair &p : pairs) {
    std::vector<std::string> target = attn::data::tokenize(p.target, data.tokenize);
    if ((int64_t)target.size() >= data.targetLength)
      continue; // not a pair the model was trained for (dropped from the split too)
    try {
      sources.push_back(encode(p.source));
    } catch (const std::exception &) {
      continue; // too long a source
    }
    references.push_back(data.target.encode(target));
  }
  Accuracy a;
  a.count = (int64_t)sources.size();
  if (!a.count)
    return a;
  std::vector<std::vector<Hypothesis>> decoded = decode(sources);
  int64_t exact = 0, tokens = 0, right = 0;
  for (size_t i = 0; i < decoded.size(); ++i) {
    const std::vector<int32_t> &got = decoded[i][0].tokens, &want = references[i];
    exact += got == want;
    tokens += (int64_t)want.size();
    for (size_t t = 0; t < want.size() && t < got.size(); ++t)
      right += got[t] == want[t];
  }
  a.exactMatch = (double)exact / (double)a.count;
  a.tokenAccuracy = tokens ? (double)right / (double)tokens : 1.0;
  return a;
}

namespace {

// --plots on a model without attention is an error, found before any decoding: 0 or the exit
// code.
int checkPlots(const Seq2SeqDecoder &decoder, const Options &o) {
  if (o.plots.empty() || decoder.hasAttention())
    return 0;
  return usageError("--plots draws attention weights, but this model has neither "
                    "model.attention nor model.transformer");
}

// --plots DIR: one heatmap per source (best hypothesis); see checkPlots.
int plotAlignments(const Seq2SeqDecoder &decoder, const std::string &dir,
                   const std::vector<std::string> &lines, const std::vector<Encoded> &sources,
                   const std::vector<std::vector<Hypothesis>> &decoded) {
  std::vector<Hypothesis> best;
  for (const auto &hyps : decoded)
    best.push_back(hyps[0]);
  try {
    decoder.writeAlignmentPlots(dir, lines, sources, best);
  } catch (const std::exception &e) {
    std::cerr << "attnc: error: " << e.what() << "\n";
    return 1;
  }
  std::cout.flush();
  return 0;
}

// Lines of standard input read with read(2), so that whether more input is already waiting
// can be asked (poll) without blocking: std::cin buffers out of sight of poll.
class StdinLines {
public:
  // The next line without its newline; false at the end of input or on a read error.
  bool next(std::string &line) {
    while (true) {
      size_t eol = buffer.find('\n', start);
      if (eol != std::string::npos) {
        line.assign(buffer, start, eol - start);
        start = eol + 1;
        return true;
      }
      if (eof) { // a last line without a newline
        if (start == buffer.size())
          return false;
        line.assign(buffer, start, std::string::npos);
        start = buffer.size();
        return true;
      }
      buffer.erase(0, start);
      start = 0;
      char chunk[65536];
      ssize_t got = ::read(0, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        readErrno = errno;
      if (got <= 0)
        eof = true;
      else
        buffer.append(chunk, (size_t)got);
    }
  }
  // Whether another line can be had without waiting: one is buffered, or input is ready.
  bool waiting() const {
    if (buffer.find('\n', start) != std::string::npos || eof)
      return true;
    struct pollfd fd = {0, POLLIN, 0};
    return ::poll(&fd, 1, 0) > 0;
  }
  bool failed() const { return readErrno != 0; }
  std::string error() const { return std::strerror(readErrno); }

private:
  std::string buffer;
  size_t start = 0;
  bool eof = false;
  int readErrno = 0;
};

std::unique_ptr<attn::target::JitProgram> compileForDecoding(Compiler &c, const PairData &d) {
  c.setImportOptions(pairImportOptions(d));
  if (!c.import() || !c.lower() || !c.lowerToLLVM())
    return nullptr;
  return c.jit();
}

} // namespace

int runSeq2Seq(Compiler &c, const Options &o) {
  const attn::yaml::Spec &s = c.spec();
  std::unique_ptr<PairModel> m = loadPairModel(c, o);
  if (!m)
    return 1;
  const PairData &data = m->data;
  Seq2SeqDecoder decoder(*m->program, m->params, s, data);
  if (int rc = checkPlots(decoder, o))
    return rc;

  std::vector<attn::data::Pair> pairs(
      data.valid.begin(),
      data.valid.begin() + std::min<int64_t>(o.count.value_or(8), (int64_t)data.valid.size()));
  std::vector<Encoded> sources;
  for (const auto &p : pairs)
    sources.push_back(decoder.encode(p.source));
  std::vector<std::vector<Hypothesis>> decoded = decoder.decode(sources);
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

int translate(Compiler &c, const Options &o) {
  if (o.stdinClosed) { // before compiling anything
    std::cerr << "attnc: error: stdin is closed; translate reads one source per line from it\n";
    return 1;
  }
  std::string file;
  std::map<std::string, std::string> meta;
  if (int rc = loadForCheckpoint(c, o, file, meta))
    return rc;
  const attn::yaml::Spec &s = c.spec();
  if (s.task != "seq2seq")
    return usageError("translate needs a seq2seq model; " + s.name + " is task '" + s.task + "'");
  PairData data = pairDataFromMetadata(s, meta, file);
  auto jit = compileForDecoding(c, data);
  if (!jit)
    return 1;
  attn::Program program(jit->info());
  std::vector<attn::Tensor> params = attn::initParams(program.info(), s.train.seed);
  attn::train::loadCheckpoint(file, program.info(), params, /*statesOptional=*/true);
  Seq2SeqDecoder decoder(program, params, s, data);

  if (int rc = checkPlots(decoder, o)) // before reading any input
    return rc;
  StdinLines input;

  // Input streams through in batches of the compiled rows: a batch is decoded when it is full
  // or when no more input is waiting, so each line is answered as soon as it can be and
  // memory stays bounded however long the input is (`yes | attnc translate`). Every line gets
  // an output line (empty when it cannot be encoded), so outputs stay aligned with inputs;
  // the reason goes to stderr with the line number.
  bool withScores = o.scores || s.decode.nbest > 1;
  std::vector<std::string> plotLines; // with --plots: every source and its best output
  std::vector<Encoded> plotSources;
  std::vector<std::vector<Hypothesis>> plotDecoded;
  std::vector<Encoded> sources;
  std::vector<std::string> lines;
  std::vector<int64_t> index; // per line of the batch: its 0-based input line, -1 first if bad
  std::vector<bool> ok;
  int failures = 0;
  int64_t n = 0;
  auto flush = [&] {
    std::vector<std::vector<Hypothesis>> decoded = decoder.decode(sources);
    size_t next = 0;
    for (size_t i = 0; i < ok.size(); ++i) {
      if (!ok[i]) {
        std::cout << (withScores ? std::to_string(index[i]) + " ||| ||| log_prob=-inf score=-inf"
                                 : "")
                  << "\n";
        continue;
      }
      const std::vector<Hypothesis> &hyps = decoded[next++];
      if (!withScores) {
        std::cout << decoder.text(hyps[0]) << "\n";
        continue;
      }
      for (const Hypothesis &h : hyps) // Marian's n-best format
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
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
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
