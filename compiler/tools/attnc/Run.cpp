// attnc run / compile: the forward pass in-process, or the model ahead of time.
#include "Data.h"
#include "Verbs.h"

#include "compiler/Target/Object.h"

#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/decode/Sample.h"
#include "attn/data/Sine.h"
#include "attn/data/TextFile.h"
#include "attn/train/Trainer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>

namespace attnc {

// The forward pass over `x` [n, window] in batches of the compiled batch size, or, for a
// language model, sampling.
int run(Compiler &c, const Options &o) {
  if (c.spec().task == "seq2seq")
    return runSeq2Seq(c, o);
  if (c.spec().task == "tag" || c.spec().task == "classify")
    return runLabeller(c, o);
  const auto &s = c.spec();
  // The checkpoint is checked against the spec before anything is compiled.
  std::string file = o.ckpt.empty() ? "" : checkpointFile(o.ckpt);
  if (!file.empty())
    checkModelMatches(s, attn::train::readCheckpointMetadata(file), file);
  if (!c.import() || !c.lower() || !c.lowerToLLVM())
    return 1;
  auto jit = c.jit();
  if (!jit)
    return 1;
  attn::Program program(jit->info());
  uint64_t seed = o.seed.value_or(s.train.seed);
  auto params = attn::initParams(program.info(), seed);
  std::string origin = "initialised from seed " + std::to_string(seed);
  if (!file.empty()) {
    auto meta = attn::train::loadCheckpoint(file, program.info(), params, /*statesOptional=*/true);
    origin = "from " + file + " (step " + (meta.count("step") ? meta.at("step") : "?") + ")";
  }
  if (s.task == "lm") {
    // A language model generates: feed the prime, then sample one character at a time.
    attn::decode::SampleOptions so;
    so.length = o.count.value_or(s.sample.length);
    so.temperature = o.temperature.value_or(s.sample.temperature);
    so.topK = s.sample.topK;
    so.seed = o.sampleSeed.value_or(s.sample.seed);
    std::string prime = o.prime.value_or(s.sample.prime);
    auto ids = attn::decode::sample(program, params, textVocab().encode(prime), so);
    std::cout << s.name << ": " << so.length << " characters at temperature " << so.temperature
              << ", parameters " << origin << "\n"
              << prime << textVocab().decode(ids) << std::endl;
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

int compile(Compiler &c, const Options &o) {
  if (o.output.empty())
    return usageError("compile needs -o MODEL.o");
  if (!c.import() || !c.lower() || !c.lowerToLLVM())
    return 1;
  std::string error = attn::target::writeObject(c.module(), o.output, o.cpu);
  if (!error.empty())
    return std::cerr << "attnc: error: " << error << "\n", 1;
  std::string header = o.header;
  if (header.empty()) {
    header = o.output;
    auto dot = header.rfind('.');
    header = (dot == std::string::npos ? header : header.substr(0, dot)) + ".h";
  }
  if (int rc = writeText(header, attn::target::renderHeader(c.manifest(), c.spec().file)))
    return rc;
  std::cout << "wrote " << o.output << " and " << header << "\n";
  return 0;
}

} // namespace attnc
