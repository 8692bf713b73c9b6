// The C API (attn/capi.h) over the bundled model (attn/app/Bundle.h) and the runtime's task
// library. Every entry point catches everything: no exception crosses into C.
#include "attn/capi.h"

#include "attn/Init.h"
#include "attn/app/Bundle.h"
#include "attn/decode/Sample.h"
#include "attn/task/Labelling.h"
#include "attn/task/Metadata.h"
#include "attn/task/Seq2SeqDecoder.h"
#include "attn/task/StreamedPairs.h"
#include "attn/train/Trainer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>

struct attnc_model {
  attn::app::ModelConfig config;
  attn::app::Loaded loaded;
  std::optional<attn::task::PairData> data;
  std::string task;
  // A seq2seq model's decoder, built on the first translate and again after training (its
  // length buckets hold copies of the parameters).
  std::unique_ptr<attn::task::Seq2SeqDecoder> decoder;
  // Training through the handle: the training split (built on the first call) and the step.
  std::optional<attn::task::PairData> trainingData;
  std::optional<attn::train::Split> split;
  std::unique_ptr<attn::train::BatchSource> batches; // split's rows, or a streamed corpus's
  int64_t step = 0;
};

namespace {

std::mutex lock; // serialises every call (attn/capi.h)
thread_local std::string lastError;

// An error of a kind, with its message.
struct Failure : std::runtime_error {
  Failure(attnc_status status, const std::string &what)
      : std::runtime_error(what), status(status) {}
  attnc_status status;
};

// Keeps `message` as this thread's last error (a message too long to copy is cut short rather
// than thrown across the C boundary) and returns `status`.
attnc_status report(attnc_status status, const char *message) noexcept {
  try {
    lastError = message;
  } catch (...) {
    lastError.clear();
  }
  return status;
}

// Runs `body` under the lock; its exceptions become a status and lastError.
template <typename Body> attnc_status guarded(attnc_status otherwise, Body body) {
  std::lock_guard<std::mutex> hold(lock);
  lastError.clear();
  try {
    body();
    return ATTNC_OK;
  } catch (const Failure &e) {
    return report(e.status, e.what());
  } catch (const std::bad_alloc &) {
    return report(ATTNC_ERROR_RUNTIME, "out of memory");
  } catch (const std::exception &e) {
    return report(otherwise, e.what());
  } catch (...) {
    return report(ATTNC_ERROR_RUNTIME, "unknown error");
  }
}

void require(bool ok, const std::string &what) {
  if (!ok)
    throw Failure(ATTNC_ERROR_ARGUMENT, what);
}

// The step at which the run that wrote `ckpt` stopped, when it holds every optimizer state of
// `info` (the parameters whose names hold a '/') and records its step; nullopt otherwise.
std::optional<int64_t> runStep(const attn::checkpoint::Checkpoint &ckpt,
                               const attn_program_info &info) {
  auto step = ckpt.metadata.find(attn::task::kStepKey);
  if (step == ckpt.metadata.end())
    return std::nullopt;
  for (int i = 0; i < info.num_params; ++i)
    if (std::strchr(info.params[i].name, '/') && !ckpt.find(info.params[i].name))
      return std::nullopt;
  try {
    int64_t s = std::stoll(step->second);
    return s >= 0 ? std::optional<int64_t>(s) : std::nullopt;
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

char *copy(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (!out)
    throw std::bad_alloc();
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

} // namespace

extern "C" {

int attnc_abi_version(void) { return ATTNC_ABI_VERSION; }

const char *attnc_last_error(void) { return lastError.c_str(); }

attnc_status attnc_open(const char *checkpoint, attnc_model **model) {
  if (model)
    *model = nullptr;
  return guarded(ATTNC_ERROR_FILE, [&] {
    require(model != nullptr, "attnc_open: model is NULL");
    auto m = std::make_unique<attnc_model>();
    m->config = attn::app::bundledConfig();
    attn::app::Weights w = checkpoint ? attn::app::checkpointWeights(checkpoint, m->config)
                                      : attn::app::bundledWeights(".");
    m->loaded = attn::app::load(&w, m->config.train.seed);
    // Weights with their optimizer state and step continue their run (attn/capi.h); others
    // start one, since moments belong to the step count they were made at.
    if (std::optional<int64_t> step = runStep(w.ckpt, m->loaded.program->info()))
      m->step = *step;
    else
      attn::app::restartOptimizer(m->loaded, m->config.train.seed);
    if (attn::task::hasVocabularies(m->config.data))
      m->data = attn::app::pairData(m->config, w);
    m->task = attn::task::taskName(m->config.data.task);
    *model = m.release();
  });
}

void attnc_close(attnc_model *model) {
  std::lock_guard<std::mutex> hold(lock);
  delete model;
}

const char *attnc_model_name(const attnc_model *model) {
  return model ? model->config.name.c_str() : "";
}

const char *attnc_model_task(const attnc_model *model) { return model ? model->task.c_str() : ""; }

int64_t attnc_model_step(const attnc_model *model) { return model ? model->step : 0; }

attnc_status attnc_translate(attnc_model *model, const char *const *lines, size_t count,
                             char **outputs) {
  return guarded(ATTNC_ERROR_RUNTIME, [&] {
    require(model && (lines || !count) && (outputs || !count),
            "attnc_translate: model, lines or outputs is NULL");
    attn::task::Task task = model->config.data.task;
    require(model->data.has_value() && task != attn::task::Task::Lm,
            "attnc_translate: " + model->config.name + " is a " + model->task +
                " model; translate takes seq2seq, tag and classify models");
    for (size_t i = 0; i < count; ++i)
      require(lines[i] != nullptr, "attnc_translate: line " + std::to_string(i + 1) + " is NULL");
    const attn::app::Loaded &l = model->loaded;
    std::vector<std::string> texts;
    auto encodeAll = [&](auto encode) {
      std::vector<attn::task::Encoded> sources;
      for (size_t i = 0; i < count; ++i) {
        try {
          sources.push_back(encode(lines[i]));
        } catch (const std::exception &e) {
          throw Failure(ATTNC_ERROR_INPUT, "line " + std::to_string(i + 1) + ": " + e.what());
        }
      }
      return sources;
    };
    if (task == attn::task::Task::Seq2Seq) {
      if (!model->decoder) {
        model->decoder = std::make_unique<attn::task::Seq2SeqDecoder>(
            *l.program, l.params, *model->data, model->config.decode);
        for (const auto &bucket : l.buckets) // decode.buckets
          model->decoder->addBucket(*bucket);
      }
      const attn::task::Seq2SeqDecoder &decoder = *model->decoder;
      auto decoded = decoder.decode(encodeAll([&](const char *s) { return decoder.encode(s); }));
      for (const auto &hyps : decoded)
        texts.push_back(decoder.text(hyps[0]));
    } else {
      attn::task::Labeller labeller(*l.program, l.params, *model->data);
      texts = labeller.label(encodeAll([&](const char *s) { return labeller.encode(s); }));
    }
    // All or nothing: outputs are set only once every copy is made.
    std::vector<char *> made;
    try {
      for (const std::string &t : texts)
        made.push_back(copy(t));
    } catch (...) {
      for (char *p : made)
        std::free(p);
      throw;
    }
    std::copy(made.begin(), made.end(), outputs);
  });
}

attnc_status attnc_generate(attnc_model *model, const char *prime, int64_t length,
                            double temperature, uint64_t seed, char **output) {
  return guarded(ATTNC_ERROR_RUNTIME, [&] {
    require(model && prime && output, "attnc_generate: model, prime or output is NULL");
    require(model->config.data.task == attn::task::Task::Lm,
            "attnc_generate: " + model->config.name + " is a " + model->task +
                " model; generate takes language models (task: lm)");
    require(length >= 1 && length <= 1000000, "attnc_generate: length must be in [1, 1000000]");
    require(temperature >= 0 && temperature <= 1e6,
            "attnc_generate: temperature must be in [0, 1e6]");
    require(*prime != '\0', "attnc_generate: the prime is empty");
    attn::decode::SampleOptions so = model->config.sample.options;
    so.length = length;
    so.temperature = temperature;
    so.seed = seed;
    const attn::app::Loaded &l = model->loaded;
    std::string text;
    try {
      text = attn::app::generateText(*l.program, l.params, model->data ? &*model->data : nullptr,
                                     prime, so);
    } catch (const std::runtime_error &e) {
      throw Failure(ATTNC_ERROR_INPUT, std::string("the prime: ") + e.what());
    }
    *output = copy(text);
  });
}

attnc_status attnc_train_steps(attnc_model *model, int64_t steps, double *loss) {
  return guarded(ATTNC_ERROR_RUNTIME, [&] {
    require(model != nullptr, "attnc_train_steps: model is NULL");
    require(steps >= 1 && steps <= 1000000000, "attnc_train_steps: steps must be >= 1");
    const attn::app::ModelConfig &c = model->config;
    if (!model->batches) {
      if (attn::task::hasVocabularies(c.data)) {
        model->trainingData = attn::task::buildPairs(c.data, &*model->data);
        // The program's shapes are the compiled vocabularies': the data must give them.
        attn::app::checkVocabularies(c, *model->trainingData, *model->data);
      }
      if (model->trainingData && model->trainingData->stream) {
        model->batches = std::make_unique<attn::task::StreamedPairs>(
            c.data.task, *model->trainingData, c.data.streamBuffer, c.train.seed);
      } else {
        model->split =
            attn::task::trainSplit(c.data, model->trainingData ? &*model->trainingData : nullptr);
        model->batches = attn::train::splitBatches(*model->split, c.train.seed);
      }
    }
    attn::app::Loaded &l = model->loaded;
    model->decoder.reset(); // its buckets' copies of the parameters go stale
    attn::train::StepRunner runner(*l.program, l.params, *model->batches,
                                   attn::task::perStepInputs(c.stepInputs));
    double last = 0;
    for (int64_t i = 0; i < steps; ++i) {
      int64_t step = model->step + 1;
      attn::train::StepRunner::Result r =
          runner.step(step, attn::train::learningRate(c.train.schedule, step));
      if (!std::isfinite(r.loss)) // the parameters are left as they were; so is the count
        throw Failure(ATTNC_ERROR_RUNTIME, "step " + std::to_string(step) +
                                               ": the loss is not finite; the parameters are "
                                               "those of the step before");
      model->step = step;
      last = r.loss;
    }
    if (loss)
      *loss = last;
  });
}

attnc_status attnc_save(attnc_model *model, const char *path) {
  return guarded(ATTNC_ERROR_FILE, [&] {
    require(model && path, "attnc_save: model or path is NULL");
    require(*path != '\0', "attnc_save: the path is empty");
    attn::task::Metadata metadata = attn::app::checkpointMetadata(model->config);
    if (model->data)
      for (auto &[key, value] : attn::task::pairMetadata(*model->data))
        metadata[key] = value;
    metadata[attn::task::kStepKey] = std::to_string(model->step);
    const attn::app::Loaded &l = model->loaded;
    attn::train::saveCheckpoint(path, l.program->info(), l.params, metadata);
  });
}

void attnc_free(char *text) { std::free(text); }

} // extern "C"
