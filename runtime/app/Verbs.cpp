#include "attn/app/Verbs.h"

#include "attn/File.h"

#include "attn/data/Sine.h"
#include "attn/data/TextFile.h"
#include "attn/decode/Sample.h"
#include "attn/task/Bleu.h"
#include "attn/task/Labelling.h"
#include "attn/task/LineReader.h"
#include "attn/task/Metadata.h"
#include "attn/task/Regression.h"
#include "attn/task/StreamedPairs.h"
#include "attn/task/TokenBatches.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace attn::app {
namespace {

std::vector<data::Pair> firstValid(const task::PairData &data, int64_t count) {
  return std::vector<data::Pair>(data.valid.begin(),
                                 data.valid.begin() +
                                     std::min<int64_t>(count, (int64_t)data.valid.size()));
}

int64_t countWeights(const attn_program_info &info) {
  int64_t n = 0;
  for (int i = 0; i < info.num_params; ++i)
    if (!std::strchr(info.params[i].name, '/')) // optimizer state is not a weight
      n += shapeNumel(infoShape(info.params[i]));
  return n;
}

// "N training (D longer than data.max_len = M dropped) and ... validation pairs, ..."
void reportPairs(const ModelConfig &c, const task::PairData &data, int64_t train,
                 int64_t trainDropped, const train::Split &valid) {
  auto dropped = [&](int64_t d) {
    return d > 0 ? " (" + std::to_string(d) +
                       " longer than data.max_len = " + std::to_string(c.data.maxLen) + " dropped)"
                 : std::string();
  };
  int64_t keptValid = valid[0].shape()[0];
  std::cout << c.name << ": " << train << " training" << dropped(trainDropped) << " and "
            << keptValid << " validation pairs" << dropped((int64_t)data.valid.size() - keptValid)
            << ", vocabularies of " << data.source.size() << " and " << data.target.size()
            << " tokens";
  if (data::isSubwords(data.sourceTokens.kind()))
    std::cout << " (" << data::tokenizeName(data.sourceTokens.kind()) << " subwords"
              << (data.sourceTokens == data.targetTokens ? ", one model for both sides" : "")
              << ")";
  std::cout << std::endl;
  if (data.stream)
    std::cout << c.name << ": streaming " << data.stream->path() << " in blocks of "
              << c.data.streamBuffer << " pairs (index " << (data.stream->reused() ? "reused" : "built")
              << ")" << std::endl;
}

// What a language model learns from its own text: its windows and its vocabulary.
void reportText(const ModelConfig &c, const task::PairData &data, const train::Split &train,
                const train::Split &valid) {
  std::cout << c.name << ": " << train[0].shape()[0] << " training and " << valid[0].shape()[0]
            << " validation windows of " << data.sourceLength << " tokens from " << c.data.path
            << ", a vocabulary of " << data.source.size() << " "
            << data::tokenizeName(data.sourceTokens.kind()) << " tokens" << std::endl;
}

// A run's subword models beside its checkpoints, as SentencePiece .model files (spm_encode
// and spm_decode read them; data.tokens: sentencepiece takes one back): spm.model when both
// sides share one, else source.spm.model and target.spm.model. Returns the names written.
std::vector<std::string> writeSubwordModels(const task::PairData &data, const std::string &dir) {
  std::vector<std::string> names;
  bool source = data::isSubwords(data.sourceTokens.kind());
  bool target = data::isSubwords(data.targetTokens.kind());
  if (source && target && data.sourceTokens == data.targetTokens) {
    names.push_back("spm.model");
    writeFileAtomically(dir + "/spm.model", data.sourceTokens.model());
    return names;
  }
  if (source) {
    names.push_back("source.spm.model");
    writeFileAtomically(dir + "/source.spm.model", data.sourceTokens.model());
  }
  if (target) {
    names.push_back("target.spm.model");
    writeFileAtomically(dir + "/target.spm.model", data.targetTokens.model());
  }
  return names;
}

} // namespace

namespace {

// What a line-by-line verb does with a batch of lines: their output text (each ending in a
// newline; n-best gives several lines per input) and the text for a line that cannot be read.
struct LineTask {
  int64_t rows;
  std::function<task::Encoded(const std::string &)> encode;
  std::function<std::vector<std::string>(const std::vector<std::string> &lines,
                                         const std::vector<task::Encoded> &sources,
                                         const std::vector<int64_t> &index)>
      answer;
  std::function<std::string(int64_t index)> failed;
};

int streamLines(const std::string &tool, const LineTask &t) {
  task::LineReader input;
  // Input streams through in batches of the compiled rows: a batch is answered when it is
  // full or when no more input is waiting, so each line is answered as soon as it can be and
  // memory stays bounded however long the input is (`yes | attnc translate`). Every line gets
  // output (an empty line when it cannot be encoded), so outputs stay aligned with inputs;
  // the reason goes to stderr with the line number.
  std::vector<task::Encoded> sources;
  std::vector<std::string> lines;
  std::vector<int64_t> index, goodIndex; // per line of the batch: its 0-based input line
  std::vector<bool> ok;
  int failures = 0;
  int64_t n = 0;
  auto flush = [&] {
    std::vector<std::string> answers = t.answer(lines, sources, goodIndex);
    size_t next = 0;
    for (size_t i = 0; i < ok.size(); ++i)
      std::cout << (ok[i] ? answers[next++] : t.failed(index[i]));
    // Output nobody receives (a full disk, a closed pipe) ends the loop: `yes | ...` would
    // otherwise run forever.
    if (!std::cout.flush())
      throw std::runtime_error("cannot write the output to stdout");
    sources.clear(), lines.clear(), index.clear(), goodIndex.clear(), ok.clear();
  };
  std::string line;
  while (input.next(line)) {
    index.push_back(n++);
    try {
      sources.push_back(t.encode(line));
      // Answered, as the model reads it; but a token it has never seen is said.
      if (const std::vector<std::string> &unknown = sources.back().unknown; !unknown.empty()) {
        std::cerr << tool << ": warning: stdin:" << n << ": read as <unk> (not in the "
                  << "model's vocabulary):";
        for (size_t k = 0; k < unknown.size() && k < 8; ++k)
          std::cerr << (k ? ", '" : " '") << unknown[k] << "'";
        std::cerr << (unknown.size() > 8 ? ", ..." : "") << "\n";
      }
      lines.push_back(line);
      goodIndex.push_back(n - 1);
      ok.push_back(true);
    } catch (const std::exception &e) {
      std::cerr << tool << ": error: stdin:" << n << ": " << e.what() << "\n";
      ok.push_back(false);
      ++failures;
    }
    if ((int64_t)ok.size() >= t.rows || !input.waiting())
      flush();
  }
  if (!ok.empty())
    flush();
  if (input.overlong()) {
    std::cerr << tool << ": error: stdin:" << n + 1 << ": the line is longer than "
              << input.maxLine() << " bytes (or has no end): reading stops here; lines of "
              << "text end with a newline\n";
    return 1;
  }
  if (input.failed()) {
    std::cerr << tool << ": error: cannot read stdin: " << input.error() << "\n";
    return 1;
  }
  std::cout.flush();
  return failures ? 1 : 0;
}

} // namespace

int translate(const std::string &tool, const task::Seq2SeqDecoder &decoder, bool scores,
              const DecodedBatch &observe) {
  bool withScores = scores || decoder.config().nbest > 1;
  LineTask t;
  // With length buckets, a few batches per bucket are read ahead (when input is waiting), so
  // that lines of each length fill their own batches. (Batch buckets change no chunk: a
  // sampled line draws from the stream of its place in its chunk.)
  size_t lengths = decoder.lengthBucketCount();
  t.rows = decoder.batchRows() * (lengths ? 4 * (lengths + 1) : 1);
  t.encode = [&](const std::string &line) { return decoder.encode(line); };
  t.answer = [&](const std::vector<std::string> &lines, const std::vector<task::Encoded> &sources,
                 const std::vector<int64_t> &index) {
    std::vector<std::vector<decode::Hypothesis>> decoded = decoder.decode(sources);
    std::vector<std::string> out;
    for (size_t i = 0; i < decoded.size(); ++i) {
      if (!withScores) {
        out.push_back(decoder.text(decoded[i][0]) + "\n");
        continue;
      }
      std::ostringstream os; // Marian's n-best format
      for (const decode::Hypothesis &h : decoded[i])
        os << index[i] << " ||| " << decoder.text(h) << " ||| log_prob=" << std::setprecision(8)
           << h.logProb << " score=" << h.score << "\n";
      out.push_back(os.str());
    }
    if (observe)
      observe(lines, sources, decoded);
    return out;
  };
  t.failed = [&](int64_t index) {
    return (withScores ? std::to_string(index) + " ||| ||| log_prob=-inf score=-inf" : "") + "\n";
  };
  return streamLines(tool, t);
}

int label(const std::string &tool, const task::Labeller &labeller) {
  LineTask t;
  t.rows = labeller.batchRows();
  t.encode = [&](const std::string &line) { return labeller.encode(line); };
  t.answer = [&](const std::vector<std::string> &, const std::vector<task::Encoded> &sources,
                 const std::vector<int64_t> &) {
    std::vector<std::string> out = labeller.label(sources);
    for (std::string &line : out)
      line += "\n";
    return out;
  };
  t.failed = [](int64_t) { return std::string("\n"); };
  return streamLines(tool, t);
}

int runSeq2Seq(const ModelConfig &c, const Model &m, const task::Seq2SeqDecoder &decoder,
               const task::PairData &data, int64_t count, const DecodedBatch &observe) {
  std::vector<data::Pair> pairs = firstValid(data, count);
  std::vector<std::string> lines;
  std::vector<task::Encoded> sources;
  for (const auto &p : pairs) {
    lines.push_back(p.source);
    sources.push_back(decoder.encode(p.source));
  }
  std::vector<std::vector<decode::Hypothesis>> decoded = decoder.decode(sources);
  std::cout << c.name << ": " << pairs.size() << " validation pairs, "
            << (c.decode.beam > 1 ? "beam " + std::to_string(c.decode.beam)
                : c.decode.sample ? "sampled"
                                  : "greedy")
            << " decoding, parameters " << m.origin << "\n";
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::string out = decoder.text(decoded[i][0]);
    std::cout << "  " << pairs[i].source << "  ->  " << out
              << (out == pairs[i].target ? "   (right)" : "   (expected " + pairs[i].target + ")")
              << "\n";
  }
  std::cout.flush();
  if (observe)
    observe(lines, sources, decoded);
  return 0;
}

int runLabeller(const ModelConfig &c, const Model &m, const task::PairData &data, int64_t count) {
  std::vector<data::Pair> pairs = firstValid(data, count);
  train::Split split = task::pairSplit(c.data.task, data, pairs);
  std::cout << c.name << ": " << split[0].shape()[0] << " validation examples, parameters "
            << m.origin << "\n";
  // Each example as the model saw it: its tokens (unknown ones as <unk>), the predicted
  // tags or label, and whether they match the reference.
  bool tagged = c.data.task == task::Task::Tag;
  int64_t steps = split[0].shape()[1];
  auto words = [&](const std::vector<int32_t> &ids) {
    return data::detokenize(data.target.decode(ids), data::Tokenize::Word);
  };
  task::forEachPrediction(
      m.program, m.params, split, split[0].shape()[0],
      [&](int64_t row, const Tensor &scores, int64_t r) {
        const int32_t *src = split[0].data<int32_t>() + row * steps;
        std::vector<int32_t> tokens(src, src + steps), got, want;
        int64_t n = tagged ? (int64_t)data.source.decode(tokens).size() : 1;
        for (int64_t k = 0; k < n; ++k) {
          got.push_back(task::argmaxAt(scores, tagged ? r * steps + k : r));
          want.push_back(split[2].data<int32_t>()[tagged ? row * steps + k : row]);
        }
        std::cout << "  " << data::detokenize(data.source.decode(tokens), data.sourceTokens) << "  ->  "
                  << words(got)
                  << (got == want ? "   (right)" : "   (expected " + words(want) + ")") << "\n";
      });
  std::cout.flush();
  return 0;
}

std::string generateText(const Program &program, const std::vector<Tensor> &params,
                         const task::PairData *text, const std::string &prime,
                         const decode::SampleOptions &so) {
  if (!text)
    return prime + task::textVocab().decode(
                       decode::sample(program, params, task::textVocab().encode(prime), so));
  // The prime's lines as the text's tokens: each but the last ends with its end of line.
  std::vector<std::string> tokens;
  for (size_t at = 0;;) {
    size_t eol = prime.find('\n', at);
    std::string line = prime.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
    std::vector<std::string> t = eol == std::string::npos
                                     ? text->sourceTokens.tokenize(line)
                                     : task::textTokens(line, text->sourceTokens);
    tokens.insert(tokens.end(), t.begin(), t.end());
    if (eol == std::string::npos)
      break;
    at = eol + 1;
  }
  if (tokens.empty())
    throw std::runtime_error("the prime holds no token");
  std::vector<std::string> sampled =
      text->source.decode(decode::sample(program, params, text->source.encode(tokens), so));
  tokens.insert(tokens.end(), sampled.begin(), sampled.end());
  return task::textOf(tokens, text->sourceTokens);
}

int generate(const ModelConfig &c, const Model &m, const task::PairData *text) {
  // A language model generates: feed the prime, then sample one token at a time.
  const decode::SampleOptions &so = c.sample.options;
  std::string out = generateText(m.program, m.params, text, c.sample.prime, so);
  std::cout << c.name << ": " << so.length << " "
            << (text ? data::tokenizeName(text->sourceTokens.kind()) + std::string(" tokens")
                     : std::string("characters"))
            << " at temperature " << so.temperature << ", parameters " << m.origin << "\n"
            << out << std::endl;
  return 0;
}

int runRegressor(const ModelConfig &c, const Model &m, const std::string &input,
                 const std::string &output, std::optional<int64_t> count) {
  const attn_entry_info &forward = m.program.entry("forward");
  std::vector<int64_t> xShape(forward.inputs[0].shape,
                              forward.inputs[0].shape + forward.inputs[0].rank);
  // The width of one example's input: data.window (sine, sines, a series) or the vector's
  // (wave, a file of vectors).
  int64_t batch = xShape[0], window = xShape[1];
  int64_t outWidth = forward.outputs[0].shape[1];

  Tensor x, target;
  std::string source;
  if (!input.empty()) {
    x = data::readNumbers(input, window);
    source = input;
  } else {
    // The validation split of the builtin data: a seed apart from the training split.
    // Builtin data: `count` validation examples (the generators are prefix-stable); a series
    // file: its first `count` validation windows.
    data::Examples examples =
        c.data.path.empty() ? task::seriesExamples(c.data, count.value_or(batch), c.data.seed + 1)
                            : task::seriesSplit(c.data, /*training=*/false);
    int64_t rows = std::min(count.value_or(batch), examples.x.shape()[0]);
    auto firstRows = [rows](const Tensor &t) {
      Tensor out(ATTN_F32, {rows, t.shape()[1]});
      std::copy(t.data<float>(), t.data<float>() + out.numel(), out.data<float>());
      return out;
    };
    x = firstRows(examples.x);
    target = firstRows(examples.y);
    source = (c.data.path.empty()        ? "builtin " + c.data.builtin
              : c.data.validPath.empty() ? c.data.path
                                         : c.data.validPath) +
             " (validation split)";
  }
  int64_t n = x.shape()[0];
  std::cout << c.name << ": forward on " << n << " examples of " << source << ", parameters "
            << m.origin << "\n";
  int64_t targetWidth = target.numel() ? target.shape()[1] : 0;
  auto header = [](const char *what, int64_t width) {
    std::string h;
    for (int64_t j = 0; j < width; ++j) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "  %10s",
                    width == 1 ? what
                               : (what + std::string("[") + std::to_string(j) + "]").c_str());
      h += cell;
    }
    return h;
  };
  std::cout << "      #" << header("target", targetWidth) << header("output", outWidth) << "\n";

  std::ofstream raw;
  if (!output.empty()) {
    raw.open(output);
    if (!raw) // a missing directory, say: before any work, not silently after it
      throw std::runtime_error(output + ": cannot open the --output file: " + std::strerror(errno));
  }
  for (int64_t start = 0; start < n; start += batch) {
    Tensor xb(ATTN_F32, xShape); // zero-padded past the last example
    int64_t rows = std::min(batch, n - start);
    std::copy(x.data<float>() + start * window, x.data<float>() + (start + rows) * window,
              xb.data<float>());
    auto outputs = m.program.call("forward", m.params, {xb});
    const float *y = outputs[0].data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%7lld", (long long)(start + r));
      std::string line = cell;
      for (int64_t j = 0; j < targetWidth; ++j) {
        std::snprintf(cell, sizeof cell, "  %10.6f",
                      target.data<float>()[(start + r) * targetWidth + j]);
        line += cell;
      }
      for (int64_t j = 0; j < outWidth; ++j) {
        float v = y[r * outWidth + j];
        std::snprintf(cell, sizeof cell, "  %10.6f", v);
        line += cell;
        if (raw.is_open())
          raw << (j ? " " : "") << std::setprecision(9) << v;
      }
      std::cout << line << "\n";
      if (raw.is_open())
        raw << "\n";
    }
  }
  if (raw.is_open() && !raw.flush()) // /dev/full: the data was not written
    throw std::runtime_error(output + ": cannot write the --output file: " + std::strerror(errno));
  return 0;
}

void reportSeries(const ModelConfig &c, const Model &m) {
  task::HorizonErrors e =
      task::horizonErrors(m.program, m.params, task::seriesSplit(c.data, /*training=*/false));
  if (e.count == 0) {
    std::cout << c.name << ": no validation examples to score (data.valid is 0)" << std::endl;
    return;
  }
  // A wave is generated from a vector, not continued from a window: its baseline is 0.
  bool wave = c.data.builtin == "wave" || c.data.features > 0;
  const std::vector<double> &naive = wave ? e.zero : e.lastValue;
  std::ostringstream line;
  line << std::setprecision(3);
  double mean = 0, baseline = 0;
  for (size_t k = 0; k < e.mse.size(); ++k) {
    mean += e.mse[k] / (double)e.mse.size();
    baseline += naive[k] / (double)e.mse.size();
  }
  line << c.name << ": " << (wave ? "generating from " : "forecasting ") << e.count
       << (wave ? " validation vectors" : " validation windows") << ": MSE " << mean
       << (wave ? " (predicting 0: " : " (repeating the last value: ") << baseline << ")";
  if (e.mse.size() > 1) {
    line << "; per step:";
    for (size_t k = 0; k < e.mse.size(); ++k)
      line << " " << k + 1 << ": " << e.mse[k];
  }
  std::cout << line.str() << std::endl;
}

// The accuracy of the model's decoding of `pairs` (with its length buckets), as the spec's
// decode: section sets it.
static task::Accuracy decodedAccuracy(const ModelConfig &c, const Model &m,
                                      const std::vector<Tensor> &params,
                                      const task::PairData &data,
                                      const std::vector<data::Pair> &pairs) {
  task::Seq2SeqDecoder decoder(m.program, params, data, c.decode);
  for (const Program *bucket : m.buckets)
    decoder.addBucket(*bucket);
  return decoder.accuracy(pairs);
}

void reportQuality(const ModelConfig &c, const Model &m, const task::PairData &data) {
  if (c.data.task == task::Task::Lm) // a language model's quality is its validation loss
    return;
  if (c.data.task != task::Task::Seq2Seq) {
    double accuracy =
        task::labelAccuracy(m.program, m.params, task::pairSplit(c.data.task, data, data.valid));
    std::cout << c.name << ": validation accuracy " << std::setprecision(4) << 100.0 * accuracy
              << "% (" << (c.data.task == task::Task::Tag ? "tokens" : "sequences") << ")"
              << std::endl;
    return;
  }
  task::Accuracy a = decodedAccuracy(c, m, m.params, data, data.valid);
  std::cout << c.name << ": "
            << (c.decode.beam > 1 ? "beam " + std::to_string(c.decode.beam) : std::string("greedy"))
            << " decoding of " << a.count << " validation pairs: exact match "
            << std::setprecision(4) << 100.0 * a.exactMatch << "%, token accuracy "
            << 100.0 * a.tokenAccuracy << "%, length mismatch " << 100.0 * a.lengthMismatch
            << "%" << std::endl;
  if (a.count)
    std::cout << c.name << ": " << a.bleu.str() << ", chrF2 = " << std::fixed
              << std::setprecision(2) << a.chrf << std::defaultfloat << std::endl;
}

int train(const std::string &tool, const ModelConfig &c, const Model &model,
          const task::PairData *data, const TrainRun &run) {
  train::TrainOptions t = trainOptions(c, runDirectory(c, run.out));
  t.steps = run.steps.value_or(c.train.steps);
  t.resume = run.resume;
  t.overwrite = run.overwrite;
  t.plotLoss = run.plotLoss;
  t.comm = run.comm;
  int ranks = run.comm ? run.comm->size() : 1;
  bool rank0 = !run.comm || run.comm->rank() == 0;
  // The training batches: from a split in memory, or read from a streamed corpus's file.
  train::Split train, valid = task::validSplit(c.data, data);
  std::unique_ptr<train::BatchSource> batches;
  task::TokenPlan plan; // token-count batches' (the source reads it)
  // train.batch_tokens: the plan of the pairs' lengths, then the step compiled per shape.
  bool byTokens = c.train.batchTokens > 0 && run.compileBuckets;
  if (c.train.batchTokens > 0 && !run.compileBuckets)
    std::cout << c.name << ": note: " << tool
              << " trains batches of train.batch_size = " << c.train.batchSize
              << "; the shapes of train.batch_tokens are compiled by "
              << "attnc train" << std::endl;
  auto compileShapes = [&](task::TokenPlan p) {
    plan = std::move(p);
    std::ostringstream line;
    line << c.name << ": batches of at most " << c.train.batchTokens << " tokens in "
         << plan.describe() << "; padding " << std::fixed << std::setprecision(1)
         << 100.0 * plan.padding << "% of the positions (" << 100.0 * plan.fullLengthPadding
         << "% at data.max_len)";
    std::cout << line.str() << std::endl;
    t.buckets = run.compileBuckets(plan.buckets);
    return !t.buckets.empty();
  };
  if (data && data->stream) {
    auto streamed =
        std::make_unique<task::StreamedPairs>(c.data.task, *data, c.data.streamBuffer, t.seed);
    reportPairs(c, *data, streamed->examples(), streamed->dropped(), valid);
    if (byTokens) {
      if (!compileShapes(
              task::planTokenBatches(streamed->lengthCounts(), data->sourceLength,
                                     c.data.task == task::Task::Seq2Seq ? data->targetLength : 0,
                                     c.train.batchTokens, c.train.lengthBuckets, ranks)))
        return 1;
      streamed->batchByTokens(plan);
    }
    batches = std::move(streamed);
  } else {
    train = task::trainSplit(c.data, data);
    if (data && task::usesText(c.data))
      reportText(c, *data, train, valid);
    else if (data)
      reportPairs(c, *data, train[0].shape()[0], (int64_t)data->train.size() - train[0].shape()[0],
                  valid);
    if (byTokens) {
      if (!compileShapes(task::planTokenBatches(c.data.task, train, c.train.batchTokens,
                                                c.train.lengthBuckets, ranks)))
        return 1;
      batches = task::tokenBatches(c.data.task, train, plan, t.seed);
    } else {
      batches = train::splitBatches(train, t.seed);
    }
  }
  if (data)
    for (auto &[key, value] : task::pairMetadata(*data))
      t.metadata[key] = value;
  if (c.train.evalBleu && data) // Consistency: only seq2seq has train.eval_bleu
    t.validMetrics = [&](const std::vector<Tensor> &params) {
      task::Accuracy a = decodedAccuracy(c, model, params, *data, data->valid);
      return std::vector<std::pair<std::string, double>>{{"valid_bleu", a.bleu.score},
                                                         {"valid_chrf", a.chrf}};
    };

  std::cout << c.name << ": training " << countWeights(model.program.info()) << " weights for "
            << t.steps << " steps (" << c.train.optimizer << ", lr " << c.train.schedule.lr << ", "
            << c.train.schedule.type << " schedule, batch "
            << (t.buckets.empty() ? std::to_string(c.train.batchSize)
                                  : "of " + std::to_string(c.train.batchTokens) + " tokens")
            << (ranks > 1 ? " over " + std::to_string(ranks) + " ranks" +
                                (t.buckets.empty()
                                     ? " (" + std::to_string(c.train.batchSize / ranks) + " each)"
                                     : std::string())
                          : std::string())
            << ") into " << t.dir << std::endl;
  auto started = std::chrono::steady_clock::now();
  auto result = train::train(model.program, model.params, *batches, valid, t);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result.error.empty()) {
    std::cerr << tool << ": error: " << result.error << "\n";
    return 1;
  }
  if (result.nothingToDo) {
    std::cout << c.name << ": nothing to train: the run in " << t.dir << " "
              << (result.stoppedEarly ? "stopped early" : "is") << " at step " << result.lastStep
              << (result.stoppedEarly ? ""
                  : (run.steps ? " and --steps is " : " and train.steps is ") +
                        std::to_string(t.steps))
              << "; nothing was written" << std::endl;
    return 0;
  }
  std::cout << "done at step " << result.lastStep << (result.stoppedEarly ? " (early stop)" : "")
            << ": loss " << result.lastLoss;
  if (!std::isnan(result.bestValid))
    std::cout << ", best validation loss " << result.bestValid;
  std::vector<std::string> models;
  if (data && rank0)
    models = writeSubwordModels(*data, t.dir);
  std::cout << "\nwrote " << t.dir << "/"
            << (result.wroteBest ? "{last,best}.safetensors" : "last.safetensors")
            << ", metrics.jsonl" << (t.plotLoss ? ", loss.png" : "");
  for (const std::string &m : models)
    std::cout << ", " << m;
  std::cout << std::endl;
  if (ranks > 1) {
    int64_t steps = result.lastStep - result.firstStep + 1;
    std::cout << c.name << ": " << ranks << " ranks, " << std::setprecision(4)
              << (double)steps / seconds << " steps/s; the gradients' all-reduce took "
              << 1e3 * result.allReduceSeconds << " ms per step (median)" << std::endl;
  }
  bool series = c.data.task == task::Task::Regress;
  if ((data || series) && rank0) {
    // The model as the run leaves it in best.safetensors (early stopping restores it too).
    std::string best = t.dir + "/best.safetensors";
    if (std::filesystem::exists(best))
      train::loadCheckpoint(best, model.program.info(), model.params);
    if (series)
      reportSeries(c, model);
    else
      reportQuality(c, model, *data);
  }
  return 0;
}

// BLEU and chrF2 as sacreBLEU prints them, with their signatures.
static void printScores(const task::Bleu &bleu, double chrf) {
  std::cout << "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x = "
            << bleu.str().substr(std::strlen("BLEU = ")) << "\n"
            << "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.x = " << std::fixed
            << std::setprecision(2) << chrf << std::defaultfloat << "\n";
}

int scoreTranslations(const std::string &pairsPath, const std::string &hypothesesPath) {
  std::vector<std::string> references, hypotheses;
  for (const data::Pair &p : data::readTsv(pairsPath))
    references.push_back(p.target);
  std::istringstream in(readRegularFile(hypothesesPath, kMaxDataFileBytes, "translations"));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    hypotheses.push_back(line);
  }
  if (hypotheses.size() != references.size())
    throw std::runtime_error(hypothesesPath + " has " + std::to_string(hypotheses.size()) +
                             " lines and " + pairsPath + " " + std::to_string(references.size()) +
                             " pairs: one translation per pair, in order");
  printScores(task::corpusBleu(hypotheses, references), task::corpusChrf(hypotheses, references));
  std::cout << hypothesesPath << ": " << hypotheses.size() << " translations of " << pairsPath
            << std::endl;
  return 0;
}

int evaluate(const ModelConfig &c, const Model &model, const task::PairData *data,
             const std::string &file, const std::string &step, bool bleuOnly) {
  if (bleuOnly) {
    if (!data || c.data.task != task::Task::Seq2Seq)
      throw std::runtime_error("BLEU is for seq2seq models; " + c.name + " is task '" +
                               task::taskName(c.data.task) + "'");
    task::Accuracy a = decodedAccuracy(c, model, model.params, *data, data->valid);
    printScores(a.bleu, a.chrf);
    std::cout << c.name << ": " << a.count << " pairs (" << file << ", step " << step << ")"
              << std::endl;
    return 0;
  }
  train::Split valid = data && task::usesPairs(c.data.task)
                            ? task::pairSplit(c.data.task, *data, data->valid)
                            : task::validSplit(c.data, data);
  if (train::evaluatedExamples(model.program, valid) == 0) {
    // Not "nan": the loss is taken over whole batches, and there is none.
    int64_t examples = valid.empty() ? 0 : valid[0].shape()[0];
    std::cout << c.name << ": no validation loss: the " << examples
              << " validation examples do not fill one batch of "
              << model.program.entry("loss").inputs[0].shape[0] << " (" << file << ", step " << step
              << ")" << std::endl;
  } else {
    double loss =
        train::evaluate(model.program, model.params, valid, task::perStepInputs(c.stepInputs));
    std::cout << c.name << ": validation loss " << loss << " (" << file << ", step " << step << ")"
              << std::endl;
  }
  if (data && task::usesPairs(c.data.task))
    reportQuality(c, model, *data);
  else if (c.data.task == task::Task::Regress)
    reportSeries(c, model);
  return 0;
}

} // namespace attn::app
