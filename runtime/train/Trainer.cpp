#include "attn/train/Trainer.h"
#include "attn/Names.h"

#include "attn/Numbers.h"
#include "attn/Random.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/train/EarlyStopping.h"
#include "attn/train/MetricsLog.h"
#include "attn/train/Progress.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>

namespace attn::train {
namespace {

const char *kLast = "last.safetensors";
const char *kBest = "best.safetensors";

int64_t numExamples(const Split &split) { return split.empty() ? 0 : split[0].shape()[0]; }

// Rows `rows` of every tensor of `split`, shaped like the entry's inputs, then the entry's
// per-step inputs (see BatchHook) made by `hook` for `step` (0: validation).
std::vector<Tensor> gather(const Split &split, const std::vector<int64_t> &rows,
                           const attn_entry_info &entry, int numInputs, const BatchHook &hook,
                           int64_t step) {
  std::vector<Tensor> batch;
  for (size_t i = 0; i < split.size(); ++i) {
    Tensor t = makeTensor(entry.inputs[i]);
    size_t rowBytes = split[i].nbytes() / split[i].shape()[0];
    if (rowBytes * rows.size() != t.nbytes())
      throw std::runtime_error(std::string("attn: batch input '") + entry.inputs[i].name + "' is " +
                               shapeToString(t.shape()) + ", which does not hold " +
                               std::to_string(rows.size()) + " examples of the data");
    auto *dst = static_cast<char *>(t.raw());
    auto *src = static_cast<const char *>(split[i].raw());
    for (size_t r = 0; r < rows.size(); ++r)
      std::memcpy(dst + r * rowBytes, src + rows[r] * rowBytes, rowBytes);
    batch.push_back(std::move(t));
  }
  if ((int)split.size() < numInputs && !hook)
    throw std::runtime_error(std::string("attn: entry input '") + entry.inputs[split.size()].name +
                             "' is neither in the data nor made per step");
  for (int i = (int)split.size(); i < numInputs; ++i) {
    Tensor t = makeTensor(entry.inputs[i]);
    hook(step, entry.inputs[i].name, t);
    batch.push_back(std::move(t));
  }
  return batch;
}

// The examples of batch `step` (1-based): epoch e = (step - 1) / batchesPerEpoch shuffles
// with Rng(seed + e); a partial last batch of an epoch is dropped. The epoch's order is drawn
// once and kept until the epoch changes.
class Batches {
public:
  Batches(int64_t examples, int64_t batch, uint64_t seed)
      : examples(examples), batch(batch), seed(seed) {}

  std::vector<int64_t> rows(int64_t step) {
    int64_t perEpoch = examples / batch;
    int64_t e = (step - 1) / perEpoch, index = (step - 1) % perEpoch;
    if (e != epoch) {
      epoch = e;
      order.resize(examples);
      std::iota(order.begin(), order.end(), 0);
      Rng rng(seed + (uint64_t)e);
      for (int64_t i = examples - 1; i > 0; --i)
        std::swap(order[i], order[(int64_t)(rng.next() % (uint64_t)(i + 1))]);
    }
    return std::vector<int64_t>(order.begin() + index * batch, order.begin() + (index + 1) * batch);
  }

private:
  int64_t examples, batch;
  uint64_t seed;
  int64_t epoch = -1;
  std::vector<int64_t> order;
};

Tensor scalar(float v) { return Tensor::f32({}, {v}); }

int paramIndex(const attn_program_info &info, const std::string &name) {
  for (int i = 0; i < info.num_params; ++i)
    if (name == info.params[i].name)
      return i;
  return -1;
}

double now() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// A save killed midway leaves `<name>.tmp-<pid>` behind (checkpoint::save's temporary). Those
// of processes that no longer exist are removed; a live writer's are left alone.
void removeStaleTemporaries(const std::string &dir) {
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    auto at = name.find(".safetensors.tmp-");
    if (at == std::string::npos)
      continue;
    pid_t pid = (pid_t)std::atol(name.c_str() + at + strlen(".safetensors.tmp-"));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
      std::filesystem::remove(entry.path());
  }
}

// One trainer per run directory: a second `attnc train` into the same directory interleaved
// its metrics lines with the first's and raced it for the checkpoints. The lock is an flock
// on DIR/.lock, released by the kernel however the holder ends.
class RunLock {
public:
  explicit RunLock(const std::string &dir) {
    std::string path = dir + "/.lock";
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
      throw std::runtime_error(path + ": cannot create the run's lock file: " +
                               std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char holder[32] = {0};
      ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
      ::close(fd);
      throw std::runtime_error(dir + ": another attnc train is writing this run directory" +
                               (n > 0 ? " (pid " + std::string(holder, (size_t)n) + ")" : "") +
                               "; wait for it, or train into another --out");
    }
    // The pid only serves the message above; the lock holds without it.
    std::string pid = std::to_string(::getpid());
    if (::ftruncate(fd, 0) == 0)
      (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  }
  ~RunLock() { ::close(fd); }
  RunLock(const RunLock &) = delete;
  RunLock &operator=(const RunLock &) = delete;

private:
  int fd = -1;
};

// A resumed run's log continues from its checkpoint: the lines past it (written by the run
// that was killed after its last save) and a line torn by a crash are dropped, so the log
// reads as one uninterrupted run. Rewritten atomically.
void keepMetricsBefore(const std::string &path, int64_t firstStep) {
  if (!std::filesystem::exists(path))
    return;
  std::string text;
  for (const Record &r : readMetrics(path))
    if (r.step < firstStep)
      text += formatRecord(r) + "\n";
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out)
      throw std::runtime_error(tmp + ": cannot write the metrics log");
  }
  std::filesystem::rename(tmp, path);
}

} // namespace

double evaluate(const Program &program, const std::vector<Tensor> &params, const Split &split,
                const BatchHook &hook) {
  const attn_entry_info &entry = program.entry("loss");
  int64_t batch = entry.inputs[0].shape[0];
  int64_t batches = numExamples(split) / batch;
  if (batches == 0)
    return std::nan("");
  double total = 0;
  for (int64_t k = 0; k < batches; ++k) {
    std::vector<int64_t> rows(batch);
    std::iota(rows.begin(), rows.end(), k * batch);
    total += program.call("loss", params, gather(split, rows, entry, entry.num_inputs, hook, 0))[0]
                 .data<float>()[0];
  }
  return total / (double)batches;
}

void saveCheckpoint(const std::string &path, const attn_program_info &info,
                    const std::vector<Tensor> &params,
                    const std::map<std::string, std::string> &metadata) {
  checkpoint::Checkpoint ckpt;
  for (int i = 0; i < info.num_params; ++i)
    ckpt.tensors.emplace_back(info.params[i].name, params[i]);
  ckpt.metadata = metadata;
  checkpoint::save(path, ckpt);
}

std::map<std::string, std::string> loadCheckpoint(const std::string &path,
                                                  const attn_program_info &info,
                                                  std::vector<Tensor> &params,
                                                  bool statesOptional) {
  checkpoint::Checkpoint ckpt = checkpoint::load(path);
  for (int i = 0; i < info.num_params; ++i) {
    const attn_tensor_info &p = info.params[i];
    const Tensor *t = ckpt.find(p.name);
    if (!t) {
      if (statesOptional && std::strchr(p.name, '/'))
        continue;
      throw std::runtime_error(path + ": no tensor '" + p.name + "' (the model has it)");
    }
    if (t->shape() != infoShape(p) || t->dtype() != p.dtype)
      throw std::runtime_error(path + ": '" + p.name + "' is " + dtypeName(t->dtype()) +
                               shapeToString(t->shape()) + ", the model expects " +
                               dtypeName(p.dtype) + shapeToString(infoShape(p)));
    // Training never saves a non-finite weight (it stops at a NaN loss first): one here means
    // a damaged or foreign file, and would only give NaN outputs.
    if (t->dtype() == ATTN_F32) {
      const float *v = t->data<float>();
      for (int64_t k = 0; k < t->numel(); ++k)
        if (!std::isfinite(v[k]))
          throw std::runtime_error(path + ": '" + p.name + "' holds a NaN or infinite value (at " +
                                   std::to_string(k) + "); the checkpoint is damaged");
    }
    params[i] = *t;
  }
  return ckpt.metadata;
}

std::map<std::string, std::string> readCheckpointMetadata(const std::string &path) {
  return checkpoint::loadMetadata(path);
}

struct StepRunner::Impl {
  const Program &program;
  std::vector<Tensor> &params;
  const Split &split;
  BatchHook hook;
  Batches batches;
  std::vector<int> updateTarget; // train_step output -> the parameter it updates
};

StepRunner::StepRunner(const Program &program, std::vector<Tensor> &params, const Split &split,
                       uint64_t seed, BatchHook perStepInput) {
  const attn_entry_info &step = program.entry("train_step");
  int64_t batch = step.inputs[0].shape[0];
  if (numExamples(split) < batch)
    throw std::runtime_error("attn: " + std::to_string(numExamples(split)) +
                             " training examples do not fill one batch of " +
                             std::to_string(batch));
  impl.reset(new Impl{program, params, split, std::move(perStepInput),
                  Batches(numExamples(split), batch, seed), {}});
  impl->updateTarget.assign(step.num_outputs, -1);
  for (int i = 2; i < step.num_outputs; ++i)
    impl->updateTarget[i] =
        paramIndex(program.info(), std::string(step.outputs[i].name).substr(strlen(names::kUpdatePrefix)));
}

StepRunner::~StepRunner() = default;

StepRunner::Result StepRunner::step(int64_t s, double lr) {
  const attn_entry_info &step = impl->program.entry("train_step");
  // train_step's inputs: the loss's, then lr and step.
  std::vector<Tensor> inputs =
      gather(impl->split, impl->batches.rows(s), step, step.num_inputs - 2, impl->hook, s);
  inputs.push_back(scalar((float)lr));
  inputs.push_back(scalar((float)s));
  std::vector<Tensor> outputs = impl->program.call("train_step", impl->params, inputs);
  Result r{outputs[0].data<float>()[0], outputs[1].data<float>()[0]};
  if (std::isfinite(r.loss))
    for (int i = 2; i < step.num_outputs; ++i)
      impl->params[impl->updateTarget[i]] = std::move(outputs[i]);
  return r;
}

TrainResult train(const Program &program, std::vector<Tensor> &params, const Split &trainSplit,
                  const Split &valid, const TrainOptions &o) {
  const attn_program_info &info = program.info();
  StepRunner runner(program, params, trainSplit, o.seed, o.perStepInput);

  std::filesystem::create_directories(o.dir);
  RunLock lock(o.dir);
  std::string last = o.dir + "/" + kLast, best = o.dir + "/" + kBest;
  std::string metricsPath = o.dir + "/metrics.jsonl";
  TrainResult result;
  result.bestValid = std::nan("");
  EarlyStopping early(std::max<int64_t>(1, o.patience), o.minDelta);
  removeStaleTemporaries(o.dir);
  bool haveRun = std::filesystem::exists(last);
  if (o.resume && !haveRun)
    throw std::runtime_error(o.dir + ": nothing to resume: there is no " + kLast +
                             " (train without --resume to start a run)");
  if (!o.resume && haveRun && !o.overwrite)
    throw std::runtime_error(o.dir + " already holds a run (" + kLast +
                             "); --resume continues it, --overwrite starts it again, or train "
                             "into another --out");
  if (!o.resume) // a new run: nothing of an earlier one may be taken for this one's
    for (const std::string &file : {last, best, metricsPath, o.dir + "/loss.png"})
      std::filesystem::remove(file);
  if (o.resume) {
    // Optimizer state a checkpoint lacks (it was trained with another optimizer, a change the
    // caller accepted) starts from its initial value.
    auto meta = loadCheckpoint(last, info, params, /*statesOptional=*/true);
    auto field = [&](const char *key) -> const std::string & {
      auto it = meta.find(key);
      if (it == meta.end())
        throw std::runtime_error(last + ": the checkpoint's metadata has no '" + key + "'");
      return it->second;
    };
    try {
      result.firstStep = parseInt(field("step"), 0, INT64_MAX - 1, "'step'") + 1;
      if (meta.count("best_valid")) {
        result.bestValid = parseFinite(field("best_valid"), -1e300, 1e300, "'best_valid'");
        early.restore(result.bestValid,
                      meta.count("bad_evals")
                          ? parseInt(field("bad_evals"), 0, INT64_MAX, "'bad_evals'")
                          : 0);
      }
    } catch (const std::invalid_argument &e) {
      throw std::runtime_error(last + ": the checkpoint's metadata is damaged: " + e.what());
    }
    result.stoppedEarly = meta.count("stopped_early") != 0;
    std::fprintf(o.out, "resuming from %s at step %lld\n", last.c_str(),
                 (long long)result.firstStep);
  }
  result.lastStep = result.firstStep - 1;
  result.wroteBest = o.resume && std::filesystem::exists(best);
  if (result.firstStep > o.steps || result.stoppedEarly) {
    result.nothingToDo = true;
    return result;
  }
  int64_t validBatch = program.entry("loss").inputs[0].shape[0];
  if (numExamples(valid) < validBatch)
    std::fprintf(o.out,
                 "note: the %lld validation examples do not fill one batch of %lld: there is no "
                 "validation loss, no early stopping and no best.safetensors\n",
                 (long long)numExamples(valid), (long long)validBatch);
  if (o.resume)
    keepMetricsBefore(metricsPath, result.firstStep);

  MetricsLog log(metricsPath, /*truncate=*/!o.resume);
  ProgressOptions progressOptions;
  progressOptions.every = o.logEvery;
  progressOptions.startStep = result.firstStep - 1;
  Progress progress(o.out, o.steps, progressOptions);
  auto metadata = [&](int64_t s, bool stoppedEarly = false) {
    auto m = o.metadata;
    m["step"] = std::to_string(s);
    if (stoppedEarly) // a resume of this run has nothing left to do
      m["stopped_early"] = "1";
    if (!std::isnan(result.bestValid))
      m["best_valid"] = exactText(result.bestValid); // resumes compare it bit for bit
    m["bad_evals"] = std::to_string(early.badEvaluations());
    return m;
  };
  double start = now();
  for (int64_t s = result.firstStep; s <= o.steps; ++s) {
    double lr = learningRate(o.schedule, s);
    StepRunner::Result r = runner.step(s, lr);
    double loss = r.loss, norm = r.gradNorm;
    if (!std::isfinite(loss)) {
      progress.finish();
      result.error = "the loss became " + std::to_string(loss) + " at step " + std::to_string(s) +
                     (std::filesystem::exists(last)
                          ? "; the last good checkpoint is " + last
                          : "; no checkpoint had been written yet (train.checkpoint.every is " +
                                std::to_string(o.checkpointEvery) + ")");
      return result;
    }
    result.lastStep = s;
    result.lastLoss = loss;
    progress.update(s, loss);

    std::vector<std::pair<std::string, double>> extra;
    bool stop = false;
    if (s % o.evalEvery == 0 || s == o.steps) {
      double v = evaluate(program, params, valid, o.perStepInput);
      extra.push_back({"valid_loss", v});
      if (!std::isnan(v) && early.update(v)) {
        result.bestValid = v;
        saveCheckpoint(best, info, params, metadata(s));
        result.wroteBest = true;
      }
      stop = o.patience > 0 && early.shouldStop();
    }
    log.write(s, loss, lr, norm, now() - start, extra);
    if (s % o.checkpointEvery == 0 || s == o.steps || stop)
      saveCheckpoint(last, info, params, metadata(s, stop));
    if (stop) {
      result.stoppedEarly = true;
      break;
    }
  }
  progress.finish();
  if (o.plotLoss)
    o.plotLoss(o.dir, info.name);
  return result;
}

} // namespace attn::train
