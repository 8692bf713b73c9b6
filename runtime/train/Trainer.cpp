#include "attn/train/Trainer.h"
#include "attn/File.h"
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
#include <optional>
#include <stdexcept>

namespace attn::train {
namespace {

const char *kLast = "last.safetensors";
const char *kBest = "best.safetensors";

int64_t numExamples(const Split &split) { return split.empty() ? 0 : split[0].shape()[0]; }

int paramIndex(const attn_program_info &info, const std::string &name) {
  for (int i = 0; i < info.num_params; ++i)
    if (name == info.params[i].name)
      return i;
  return -1;
}

// Which part of every global batch this process takes: rows [rank * b, (rank + 1) * b) of
// count * b, b the batch the program is compiled for.
struct Shard {
  int rank = 0, count = 1;
};

Shard shardOf(const dist::Communicator *comm) {
  return comm ? Shard{comm->rank(), comm->size()} : Shard{};
}

} // namespace

std::vector<Tensor> gatherRows(const Split &split, const std::vector<int64_t> &rows,
                               const attn_entry_info &entry) {
  std::vector<Tensor> batch;
  for (size_t i = 0; i < split.size(); ++i) {
    Tensor t = makeTensor(entry.inputs[i]);
    // A row of the input's size (whatever its shape: [N, 16] feeds [B, 16, 1]), or, cut along
    // dimension 1, a prefix of the full row (row-major).
    const std::vector<int64_t> &from = split[i].shape(), &to = t.shape();
    size_t fromBytes = split[i].nbytes() / (size_t)from[0];
    size_t rowBytes = rows.empty() ? 0 : t.nbytes() / rows.size();
    bool cut = from.size() == to.size() && from.size() >= 2 && to[1] < from[1] &&
               std::equal(from.begin() + 2, from.end(), to.begin() + 2);
    bool fits = rowBytes == fromBytes || cut;
    if (!fits || rowBytes * rows.size() != t.nbytes() || to[0] != (int64_t)rows.size())
      throw std::runtime_error(std::string("attn: batch input '") + entry.inputs[i].name + "' is " +
                               shapeToString(to) + ", which does not hold " +
                               std::to_string(rows.size()) + " examples of the data " +
                               shapeToString(from));
    auto *dst = static_cast<char *>(t.raw());
    auto *src = static_cast<const char *>(split[i].raw());
    for (size_t r = 0; r < rows.size(); ++r)
      std::memcpy(dst + r * rowBytes, src + rows[r] * fromBytes, rowBytes);
    batch.push_back(std::move(t));
  }
  return batch;
}

namespace {

// Appends the entry's per-step inputs (see BatchHook) after the data's in `batch`, made by
// `hook` for `step` (0: validation), as `shard`'s part of the global batch's.
void addStepInputs(std::vector<Tensor> &batch, const attn_entry_info &entry, int numInputs,
                   const BatchHook &hook, int64_t step, Shard shard) {
  if ((int)batch.size() < numInputs && !hook)
    throw std::runtime_error(std::string("attn: entry input '") + entry.inputs[batch.size()].name +
                             "' is neither in the data nor made per step");
  for (int i = (int)batch.size(); i < numInputs; ++i) {
    Tensor t = makeTensor(entry.inputs[i]);
    if (shard.count == 1) {
      hook(step, entry.inputs[i].name, t);
    } else {
      // Drawn for the global batch, then cut: an example's coins and masks are the same on
      // any number of ranks.
      std::vector<int64_t> shape = t.shape();
      shape[0] *= shard.count;
      Tensor whole(t.dtype(), shape);
      hook(step, entry.inputs[i].name, whole);
      std::memcpy(t.raw(), static_cast<const char *>(whole.raw()) + shard.rank * t.nbytes(),
                  t.nbytes());
    }
    batch.push_back(std::move(t));
  }
}

// gatherRows, then addStepInputs.
std::vector<Tensor> gather(const Split &split, const std::vector<int64_t> &rows,
                           const attn_entry_info &entry, int numInputs, const BatchHook &hook,
                           int64_t step, Shard shard = {}) {
  std::vector<Tensor> batch = gatherRows(split, rows, entry);
  addStepInputs(batch, entry, numInputs, hook, step, shard);
  return batch;
}

// This shard's rows of the global batch `rows`.
std::vector<int64_t> shardRows(const std::vector<int64_t> &rows, Shard shard) {
  size_t b = rows.size() / (size_t)shard.count;
  return std::vector<int64_t>(rows.begin() + (ptrdiff_t)(b * shard.rank),
                              rows.begin() + (ptrdiff_t)(b * (shard.rank + 1)));
}

// Output index -> the parameter an `update:<name>` output of `entry` replaces (-1: none).
std::vector<int> updateTargets(const Program &program, const attn_entry_info &entry) {
  std::vector<int> target(entry.num_outputs, -1);
  size_t prefix = std::strlen(names::kUpdatePrefix);
  for (int i = 0; i < entry.num_outputs; ++i)
    if (std::strncmp(entry.outputs[i].name, names::kUpdatePrefix, prefix) == 0)
      target[i] = paramIndex(program.info(), entry.outputs[i].name + prefix);
  return target;
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

// splitBatches' source.
class SplitSource : public BatchSource {
public:
  SplitSource(const Split &split, uint64_t seed) : split(split), seed(seed) {}
  int64_t examples() const override { return numExamples(split); }
  std::vector<Tensor> batch(int64_t step, int64_t global, const attn_entry_info &entry, int rank,
                            int ranks) override {
    if (!order)
      order.emplace(numExamples(split), global, seed);
    return gatherRows(split, shardRows(order->rows(step), Shard{rank, ranks}), entry);
  }

private:
  const Split &split;
  uint64_t seed;
  std::optional<Batches> order;
};

Tensor scalar(float v) { return Tensor::f32({}, {v}); }

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
  writeFileAtomically(path, text);
}

} // namespace

std::unique_ptr<BatchSource> splitBatches(const Split &split, uint64_t seed) {
  return std::make_unique<SplitSource>(split, seed);
}

int64_t evaluatedExamples(const Program &program, const Split &split) {
  int64_t batch = program.entry("loss").inputs[0].shape[0];
  return numExamples(split) / batch * batch;
}

double evaluate(const Program &program, const std::vector<Tensor> &params, const Split &split,
                const BatchHook &hook, dist::Communicator *comm) {
  const attn_entry_info &entry = program.entry("loss");
  Shard shard = shardOf(comm);
  int64_t batch = entry.inputs[0].shape[0], global = batch * shard.count;
  int64_t batches = numExamples(split) / global;
  if (batches == 0)
    return std::nan("");
  // Sharded: per global batch, sum_r w_r loss_r and sum_r w_r (see Impl::shardedStep).
  std::vector<float> sums(shard.count > 1 ? 2 * batches : 0);
  double total = 0;
  for (int64_t k = 0; k < batches; ++k) {
    std::vector<int64_t> rows(batch);
    std::iota(rows.begin(), rows.end(), k * global + shard.rank * batch);
    std::vector<Tensor> inputs = gather(split, rows, entry, entry.num_inputs, hook, 0, shard);
    float loss = program.call("loss", params, inputs)[0].data<float>()[0];
    if (shard.count == 1) {
      total += loss;
      continue;
    }
    float w = program.call("loss_weight", params, inputs)[0].data<float>()[0];
    sums[2 * k] = w * loss;
    sums[2 * k + 1] = w;
  }
  if (shard.count > 1) {
    comm->allReduceSum(sums.data(), sums.size(), "the validation losses");
    for (int64_t k = 0; k < batches; ++k)
      total += sums[2 * k + 1] > 0 ? sums[2 * k] / sums[2 * k + 1] : 0.0;
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
  return loadParams(checkpoint::load(path), path, info, params, statesOptional);
}

std::map<std::string, std::string> loadParams(const checkpoint::Checkpoint &ckpt,
                                              const std::string &path,
                                              const attn_program_info &info,
                                              std::vector<Tensor> &params, bool statesOptional) {
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
  // One program the steps run: the program itself, or one bucket's (BatchSource::bucket).
  struct Shape {
    const Program *program;
    int64_t global;                // examples per step, over all ranks
    std::vector<int> updateTarget; // train_step's (or apply_update's) output -> its parameter
  };
  std::vector<Tensor> &params;
  std::unique_ptr<BatchSource> owned; // splitBatches' when built from a Split
  BatchSource &source;
  BatchHook hook;
  dist::Communicator *comm;
  Shard shard;
  std::vector<Shape> shapes;         // the program's, or one per bucket
  std::vector<float> reduced;        // the all-reduce's buffer
  std::vector<double> reduceSeconds; // per step

  static std::unique_ptr<Impl> make(const Program &program, std::vector<Tensor> &params,
                                    std::unique_ptr<BatchSource> owned, BatchSource *source,
                                    BatchHook hook, dist::Communicator *comm,
                                    const std::vector<const Program *> &buckets);
  Shape shapeOf(const Program &program, const Program &main) const;
  Result step(int64_t s, double lr);
  Result shardedStep(int64_t s, double lr);
  // The data of step s, this rank's part, then its per-step inputs.
  std::vector<Tensor> inputs(int64_t s, const Shape &shape, const attn_entry_info &entry,
                             int numInputs) {
    std::vector<Tensor> batch = source.batch(s, shape.global, entry, shard.rank, shard.count);
    addStepInputs(batch, entry, numInputs, hook, s, shard);
    return batch;
  }
  const Shape &shapeOfStep(int64_t s) {
    size_t k = source.bucket(s);
    if (k >= shapes.size())
      throw std::runtime_error("attn: step " + std::to_string(s) + " is batched in shape " +
                               std::to_string(k) + ", but the runner has " +
                               std::to_string(shapes.size()) + " compiled");
    return shapes[k];
  }
  void applyUpdates(const Shape &shape, std::vector<Tensor> &outputs) {
    for (size_t i = 0; i < outputs.size(); ++i)
      if (shape.updateTarget[i] >= 0)
        params[shape.updateTarget[i]] = std::move(outputs[i]);
  }
};

StepRunner::StepRunner(const Program &program, std::vector<Tensor> &params, const Split &split,
                       uint64_t seed, BatchHook perStepInput, dist::Communicator *comm)
    : impl(Impl::make(program, params, splitBatches(split, seed), nullptr, std::move(perStepInput),
                      comm, {})) {}

StepRunner::StepRunner(const Program &program, std::vector<Tensor> &params, BatchSource &source,
                       BatchHook perStepInput, dist::Communicator *comm,
                       std::vector<const Program *> buckets)
    : impl(Impl::make(program, params, nullptr, &source, std::move(perStepInput), comm, buckets)) {}

StepRunner::Impl::Shape StepRunner::Impl::shapeOf(const Program &p, const Program &main) const {
  // A bucket's step writes the program's parameters: they must be the same list.
  const attn_program_info &a = p.info(), &b = main.info();
  for (int i = 0; i < std::max(a.num_params, b.num_params); ++i)
    if (i >= a.num_params || i >= b.num_params || std::strcmp(a.params[i].name, b.params[i].name) ||
        infoShape(a.params[i]) != infoShape(b.params[i]))
      throw std::runtime_error(std::string("attn: the bucket program '") + a.name +
                               "' does not have the parameters of '" + b.name + "' (parameter " +
                               std::to_string(i) + ": " +
                               (i < a.num_params ? a.params[i].name : "none") + " against " +
                               (i < b.num_params ? b.params[i].name : "none") + ")");
  if (shard.count > 1)
    for (const char *entry : {"apply_update", "loss_weight"})
      if (!p.findEntry(entry))
        throw std::runtime_error(std::string("attn: data-parallel training needs @") + entry +
                                 ", which this program lacks (compile it for data parallelism)");
  const attn_entry_info &step = p.entry(shard.count > 1 ? "loss_grad" : "train_step");
  return Shape{&p, step.inputs[0].shape[0] * shard.count,
               updateTargets(p, shard.count > 1 ? p.entry("apply_update") : step)};
}

std::unique_ptr<StepRunner::Impl>
StepRunner::Impl::make(const Program &program, std::vector<Tensor> &params,
                       std::unique_ptr<BatchSource> owned, BatchSource *source, BatchHook hook,
                       dist::Communicator *comm, const std::vector<const Program *> &buckets) {
  if (!source)
    source = owned.get();
  // An inference program (an executable or library compiled with decode.precision int8, say)
  // has the model's parameters but no step to change them.
  if (!program.findEntry("train_step") && !program.findEntry("loss_grad"))
    throw std::runtime_error("attn: the program '" + program.name() +
                             "' was compiled for inference only (it has no @train_step): it "
                             "decodes but does not train; compile the model with its "
                             "decode.precision equal to its train.precision to train it");
  std::unique_ptr<Impl> impl(new Impl{
      params, std::move(owned), *source, std::move(hook), comm, shardOf(comm), {}, {}, {}});
  for (const Program *p : buckets)
    impl->shapes.push_back(impl->shapeOf(*p, program));
  if (buckets.empty())
    impl->shapes.push_back(impl->shapeOf(program, program));
  // The smallest batch must be filled (a token-count source has made its own check).
  int64_t batch = impl->shapes[0].global;
  for (const Shape &shape : impl->shapes)
    batch = std::min(batch, shape.global);
  if (source->examples() < batch)
    throw std::runtime_error("attn: " + std::to_string(source->examples()) +
                             " training examples do not fill one batch of " +
                             std::to_string(batch));
  return impl;
}

StepRunner::~StepRunner() = default;

double StepRunner::allReduceSeconds() const {
  // The median: the first step's all-reduce also waits out the ranks' compile times.
  std::vector<double> t = impl->reduceSeconds;
  if (t.empty())
    return 0;
  std::nth_element(t.begin(), t.begin() + (ptrdiff_t)(t.size() / 2), t.end());
  return t[t.size() / 2];
}

StepRunner::Result StepRunner::step(int64_t s, double lr) {
  return impl->shard.count > 1 ? impl->shardedStep(s, lr) : impl->step(s, lr);
}

StepRunner::Result StepRunner::Impl::step(int64_t s, double lr) {
  const Shape &shape = shapeOfStep(s);
  const Program &program = *shape.program;
  const attn_entry_info &entry = program.entry("train_step");
  // train_step's inputs: the loss's, then lr and step.
  std::vector<Tensor> inputs = this->inputs(s, shape, entry, entry.num_inputs - 2);
  inputs.push_back(scalar((float)lr));
  inputs.push_back(scalar((float)s));
  std::vector<Tensor> outputs = program.call("train_step", params, inputs);
  Result r{outputs[0].data<float>()[0], outputs[1].data<float>()[0]};
  if (std::isfinite(r.loss))
    applyUpdates(shape, outputs);
  return r;
}

// One rank's part of a data-parallel step. Each rank's @loss_grad gives its shard's mean loss
// and gradients; weighted by w_r (@loss_weight: the terms the mean is over) and summed over
// the ranks, sum_r w_r x_r / sum_r w_r is the mean over the whole batch, what one process
// would compute. One all-reduce of [w loss, w grads..., w]; then every rank applies the
// same @apply_update, so the parameters stay identical without being sent.
StepRunner::Result StepRunner::Impl::shardedStep(int64_t s, double lr) {
  const Shape &shape = shapeOfStep(s);
  const Program &program = *shape.program;
  const attn_entry_info &entry = program.entry("loss_grad");
  std::vector<Tensor> inputs = this->inputs(s, shape, entry, entry.num_inputs);
  float w = program.call("loss_weight", params, inputs)[0].data<float>()[0];
  std::vector<Tensor> grads = program.call("loss_grad", params, inputs);
  size_t n = 2;
  for (size_t i = 1; i < grads.size(); ++i)
    n += (size_t)grads[i].numel();
  reduced.resize(n);
  reduced[0] = w * grads[0].data<float>()[0];
  size_t at = 1;
  for (size_t i = 1; i < grads.size(); ++i) {
    const float *g = grads[i].data<float>();
    for (int64_t k = 0; k < grads[i].numel(); ++k)
      reduced[at++] = w * g[k];
  }
  reduced[at] = w;
  double start = now();
  comm->allReduceSum(reduced.data(), n, "the gradients of step " + std::to_string(s));
  reduceSeconds.push_back(now() - start);
  // No contributing term in the whole batch: the loss and gradients are 0, as in one process.
  float total = reduced[n - 1], scale = total > 0 ? 1.0f / total : 0.0f;
  at = 1;
  for (size_t i = 1; i < grads.size(); ++i) {
    float *g = grads[i].data<float>();
    for (int64_t k = 0; k < grads[i].numel(); ++k)
      g[k] = reduced[at++] * scale;
  }
  std::vector<Tensor> update(std::make_move_iterator(grads.begin() + 1),
                             std::make_move_iterator(grads.end()));
  update.push_back(scalar((float)lr));
  update.push_back(scalar((float)s));
  std::vector<Tensor> outputs = program.call("apply_update", params, update);
  Result r{reduced[0] * scale, outputs[0].data<float>()[0]};
  if (std::isfinite(r.loss))
    applyUpdates(shape, outputs);
  return r;
}

TrainResult train(const Program &program, std::vector<Tensor> &params, const Split &trainSplit,
                  const Split &valid, const TrainOptions &o) {
  std::unique_ptr<BatchSource> source = splitBatches(trainSplit, o.seed);
  return train(program, params, *source, valid, o);
}

TrainResult train(const Program &program, std::vector<Tensor> &params, BatchSource &trainData,
                  const Split &valid, const TrainOptions &o) {
  const attn_program_info &info = program.info();
  StepRunner runner(program, params, trainData, o.perStepInput, o.comm, o.buckets);
  // Of a data-parallel run's ranks, rank 0 alone writes the run directory and prints; the
  // others read it only to resume.
  bool writer = !o.comm || o.comm->rank() == 0;

  std::optional<RunLock> lock;
  if (writer) {
    std::filesystem::create_directories(o.dir);
    lock.emplace(o.dir);
    removeStaleTemporaries(o.dir);
  }
  std::string last = o.dir + "/" + kLast, best = o.dir + "/" + kBest;
  std::string metricsPath = o.dir + "/metrics.jsonl";
  TrainResult result;
  result.bestValid = std::nan("");
  EarlyStopping early(std::max<int64_t>(1, o.patience), o.minDelta);
  bool haveRun = std::filesystem::exists(last);
  if (o.resume && !haveRun)
    throw std::runtime_error(o.dir + ": nothing to resume: there is no " + kLast +
                             " (train without --resume to start a run)");
  if (!o.resume && haveRun && !o.overwrite)
    throw std::runtime_error(o.dir + " already holds a run (" + kLast +
                             "); --resume continues it, --overwrite starts it again, or train "
                             "into another --out");
  if (!o.resume && writer) // a new run: nothing of an earlier one may be taken for this one's
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
    if (writer)
      std::fprintf(o.out, "resuming from %s at step %lld\n", last.c_str(),
                   (long long)result.firstStep);
  }
  result.lastStep = result.firstStep - 1;
  result.wroteBest = o.resume && std::filesystem::exists(best);
  if (result.firstStep > o.steps || result.stoppedEarly) {
    result.nothingToDo = true;
    return result;
  }
  int64_t validBatch = program.entry("loss").inputs[0].shape[0] * shardOf(o.comm).count;
  if (numExamples(valid) < validBatch && writer)
    std::fprintf(o.out,
                 "note: the %lld validation examples do not fill one batch of %lld: there is no "
                 "validation loss, no early stopping and no best.safetensors\n",
                 (long long)numExamples(valid), (long long)validBatch);
  std::optional<MetricsLog> log;
  std::optional<Progress> progress;
  if (writer) {
    if (o.resume)
      keepMetricsBefore(metricsPath, result.firstStep);
    log.emplace(metricsPath, /*truncate=*/!o.resume);
    ProgressOptions progressOptions;
    progressOptions.every = o.logEvery;
    progressOptions.startStep = result.firstStep - 1;
    progress.emplace(o.out, o.steps, progressOptions);
  }
  auto save = [&](const std::string &path, const std::map<std::string, std::string> &m) {
    if (writer)
      saveCheckpoint(path, info, params, m);
  };
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
      if (progress)
        progress->finish();
      result.error = "the loss became " + std::to_string(loss) + " at step " + std::to_string(s) +
                     (std::filesystem::exists(last)
                          ? "; the last good checkpoint is " + last
                          : "; no checkpoint had been written yet (train.checkpoint.every is " +
                                std::to_string(o.checkpointEvery) + ")");
      return result;
    }
    result.lastStep = s;
    result.lastLoss = loss;
    if (progress)
      progress->update(s, loss);

    std::vector<std::pair<std::string, double>> extra;
    bool stop = false;
    if (o.evalEvery > 0 && (s % o.evalEvery == 0 || s == o.steps)) {
      double v = evaluate(program, params, valid, o.perStepInput, o.comm);
      extra.push_back({"valid_loss", v});
      if (o.validMetrics && writer)
        for (auto &metric : o.validMetrics(params))
          extra.push_back(std::move(metric));
      if (!std::isnan(v) && early.update(v)) {
        result.bestValid = v;
        save(best, metadata(s));
        result.wroteBest = true;
      }
      stop = o.patience > 0 && early.shouldStop();
    }
    if (log)
      log->write(s, loss, lr, norm, now() - start, extra);
    if (s % o.checkpointEvery == 0 || s == o.steps || stop)
      save(last, metadata(s, stop));
    if (stop) {
      result.stoppedEarly = true;
      break;
    }
  }
  result.allReduceSeconds = runner.allReduceSeconds();
  if (!writer)
    return result;
  progress->finish();
  if (o.plotLoss)
    o.plotLoss(o.dir, info.name);
  return result;
}

} // namespace attn::train
