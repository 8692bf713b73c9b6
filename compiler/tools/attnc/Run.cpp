// attnc run: the forward pass in-process (a regressor's outputs, a language model's samples;
// seq2seq and labelling models in Translate.cpp and Labelling.cpp).
#include "Verbs.h"

#include "attn/Program.h"
#include "attn/data/Sine.h"
#include "attn/data/TextFile.h"
#include "attn/decode/Sample.h"
#include "attn/task/Data.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>

namespace attnc {

// The forward pass over `x` [n, window] in batches of the compiled batch size, or, for a
// language model, sampling.
int run(attn::driver::Session &session, const Common &c, const RunOptions &o) {
  // The checkpoint is checked against the spec before anything is compiled.
  if (!o.ckpt.empty() && !session.openCheckpoint(o.ckpt, c.overrides))
    return 1;
  const auto &s = session.spec();
  if (s.task == attn::yaml::Task::Seq2seq)
    return runSeq2Seq(session, o);
  if (s.task == attn::yaml::Task::Tag || s.task == attn::yaml::Task::Classify)
    return runLabeller(session, o);
  std::unique_ptr<attn::driver::Model> model = session.loadModel(o.seed);
  if (!model)
    return 1;
  const attn::Program &program = *model->program;
  const std::vector<attn::Tensor> &params = model->params;
  const std::string &origin = model->origin;
  if (s.task == attn::yaml::Task::Lm) {
    // A language model generates: feed the prime, then sample one character at a time.
    attn::decode::SampleOptions so;
    so.length = o.count.value_or(s.sample.length);
    so.temperature = o.temperature.value_or(s.sample.temperature);
    so.topK = s.sample.topK;
    so.seed = o.sampleSeed.value_or(s.sample.seed);
    std::string prime = o.prime.value_or(s.sample.prime);
    auto ids = attn::decode::sample(program, params, attn::task::textVocab().encode(prime), so);
    std::cout << s.name << ": " << so.length << " characters at temperature " << so.temperature
              << ", parameters " << origin << "\n"
              << prime << attn::task::textVocab().decode(ids) << std::endl;
    return 0;
  }
  const attn_entry_info &forward = program.entry("forward");
  std::vector<int64_t> xShape(forward.inputs[0].shape,
                              forward.inputs[0].shape + forward.inputs[0].rank);
  int64_t batch = xShape[0], window = s.data.window;
  int64_t outWidth = forward.outputs[0].shape[1];

  attn::Tensor x, target;
  std::string source;
  if (!o.input.empty()) {
    x = attn::data::readNumbers(o.input, window);
    source = o.input;
  } else {
    // The validation split of the builtin data: a seed apart from the training split.
    auto examples = attn::data::makeSine(window, o.count.value_or(batch), s.data.seed + 1);
    x = std::move(examples.x);
    target = std::move(examples.y);
    source = "builtin " + s.data.builtin + " (validation split)";
  }
  int64_t n = x.shape()[0];
  std::cout << s.name << ": forward on " << n << " examples of " << source << ", parameters "
            << origin << "\n";
  std::cout << "      #" << (target.numel() ? "      target" : "") << "      output\n";

  std::ofstream raw;
  if (!o.output.empty()) {
    raw.open(o.output);
    if (!raw) // a missing directory, say: before any work, not silently after it
      throw std::runtime_error(o.output + ": cannot open the --output file: " +
                               std::strerror(errno));
  }
  for (int64_t start = 0; start < n; start += batch) {
    attn::Tensor xb(ATTN_F32, xShape); // zero-padded past the last example
    int64_t rows = std::min(batch, n - start);
    std::copy(x.data<float>() + start * window, x.data<float>() + (start + rows) * window,
              xb.data<float>());
    auto outputs = program.call("forward", params, {xb});
    const float *y = outputs[0].data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%7lld", (long long)(start + r));
      std::string line = cell;
      if (target.numel()) {
        std::snprintf(cell, sizeof cell, "  %10.6f", target.data<float>()[start + r]);
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
    throw std::runtime_error(o.output + ": cannot write the --output file: " +
                             std::strerror(errno));
  return 0;
}

} // namespace attnc
