// The training loop over a compiled program's `train_step` and `loss` entry points.
//
// train_step(params..., inputs..., lr, step) -> (loss, grad_norm, update:<name>...) is one
// compiled call: gradients, clipping and the optimizer update. The loop owns the rest: batches,
// the learning-rate schedule, validation, checkpoints, the metrics log and the progress line.
//
// Batches depend only on (seed, step): batch `step` of epoch `e` takes rows of a permutation
// drawn from Rng(seed + e). A resumed run therefore replays exactly the steps an
// uninterrupted run would have taken.
#ifndef ATTN_TRAIN_TRAINER_H
#define ATTN_TRAIN_TRAINER_H

#include "attn/Program.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/dist/Communicator.h"
#include "attn/train/Schedule.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <map>
#include <string>
#include <vector>

namespace attn::train {

// A data split: one tensor per input of the entry points (excluding lr and step), each with
// the example index as its first dimension and the same number of examples.
using Split = std::vector<Tensor>;

// Where training batches come from: the rows of a Split in memory (splitBatches), or a corpus
// read as it trains (attn::task's streamed pairs). A batch depends only on its step, so that a
// resumed run repeats the batches an uninterrupted one would have taken.
class BatchSource {
public:
  virtual ~BatchSource() = default;
  // The examples one epoch reads (at least one global batch's for training to start).
  virtual int64_t examples() const = 0;
  // Global batch `step` (1-based) of `global` examples, this rank's part: its rows
  // [rank * b, (rank + 1) * b), b = global / ranks, one tensor per data input of `entry`
  // (its first inputs), each shaped as that input.
  virtual std::vector<Tensor> batch(int64_t step, int64_t global, const attn_entry_info &entry,
                                    int rank, int ranks) = 0;
  // Batches of several shapes (token-count batches, attn/task/TokenBatches.h): which of the
  // runner's bucket programs, each compiled for one shape, trains step `step`; batch() is then
  // asked for that program's rows and shapes. 0 for a source of one shape.
  virtual size_t bucket(int64_t /*step*/) { return 0; }
};

// Rows `rows` of every tensor of `split`, as the entry's first inputs: each row cut to the
// input's shape, which may be shorter along dimension 1 (a shorter bucket's; the rest of each
// row must be padding) but not otherwise differ.
std::vector<Tensor> gatherRows(const Split &split, const std::vector<int64_t> &rows,
                               const attn_entry_info &entry);

// The rows of `split` (which must outlive it): batch `step` of epoch e takes rows of a
// permutation drawn from Rng(seed + e); a partial last batch of an epoch is dropped.
std::unique_ptr<BatchSource> splitBatches(const Split &split, uint64_t seed);

// The loss's inputs after the data's are made per step rather than read from a split:
// random masks and coins (dropout, scheduled sampling). hook(step, name, t) fills the
// zero tensor `t` made for the input `name`; step is the 1-based training step, or 0 for a
// validation batch (which must see the model without its training noise). It must depend
// only on its arguments, so that a resumed run repeats it.
using BatchHook = std::function<void(int64_t step, const std::string &name, Tensor &t)>;

struct TrainOptions {
  int64_t steps = 1000;
  ScheduleSpec schedule;
  uint64_t seed = 1;            // shuffling
  int64_t evalEvery = 100;      // validation (and best.safetensors) every N steps
  int64_t logEvery = 50;        // progress lines when not on a terminal
  int64_t checkpointEvery = 500;
  int64_t patience = 0;         // validation passes without improvement; 0: never stop early
  double minDelta = 0.0;
  std::string dir;              // last.safetensors, best.safetensors, metrics.jsonl, loss.png
  bool resume = false;          // continue from dir/last.safetensors (an error if there is none)
  bool overwrite = false;       // replace the run in `dir`; without it (or `resume`) a
                                // directory holding a run is an error
  std::map<std::string, std::string> metadata; // stored in every checkpoint (e.g. the spec)
  std::FILE *out = stdout;
  BatchHook perStepInput;       // for the loss's inputs past the split's (see BatchHook)
  // Further validation figures (name, value), computed from the parameters at every
  // validation pass by the writing rank and logged beside valid_loss (BLEU of a decoder).
  std::function<std::vector<std::pair<std::string, double>>(const std::vector<Tensor> &params)>
      validMetrics;
  // Draws dir/loss.png from dir/metrics.jsonl at the end (attn::plot::writeLossPlot; unset:
  // no plot, so a program without an image library can train).
  std::function<void(const std::string &dir, const std::string &title)> plotLoss;
  // Batches of several shapes (BatchSource::bucket): the program compiled for each, sharing
  // the program's parameters (same names, shapes and order); step s runs
  // buckets[source.bucket(s)]'s train_step. Empty: the program's own.
  std::vector<const Program *> buckets;
  // Data parallelism: this process is one rank of comm's and trains its shard of every
  // batch (the program is compiled for batch / comm->size() examples, with @loss_grad,
  // @apply_update and @loss_weight); rank 0 alone writes `dir` and prints. Null: one process.
  dist::Communicator *comm = nullptr;
};

struct TrainResult {
  int64_t firstStep = 1;        // > 1 when resumed
  int64_t lastStep = 0;         // the last step whose update was applied
  double lastLoss = 0.0;
  double bestValid = 0.0;       // NaN when never validated
  bool stoppedEarly = false;
  bool nothingToDo = false;     // resumed at or past `steps`: nothing trained, nothing written
  bool wroteBest = false;       // best.safetensors holds a checkpoint of this run
  std::string error;            // non-empty when training stopped on a NaN/Inf loss
  double allReduceSeconds = 0;  // data parallelism: a step's median all-reduce time
};

// One step of training as train() takes it: batch `step` (1-based) of `split` (shuffled per
// epoch from Rng(seed + epoch)), the per-step inputs, lr and the step count, one call of
// train_step, and its `update:<name>` outputs moved into `params`, which must outlive it.
// With `comm` (more than one rank): this rank's shard of the batch through @loss_grad, the
// gradients summed over the ranks, then @apply_update (see TrainOptions::comm).
class StepRunner {
public:
  StepRunner(const Program &program, std::vector<Tensor> &params, const Split &split, uint64_t seed,
             BatchHook perStepInput, dist::Communicator *comm = nullptr);
  // Batches from `source` (which must outlive the runner); of several shapes, each trained
  // by its program of `buckets` (see TrainOptions::buckets).
  StepRunner(const Program &program, std::vector<Tensor> &params, BatchSource &source,
             BatchHook perStepInput, dist::Communicator *comm = nullptr,
             std::vector<const Program *> buckets = {});
  ~StepRunner();
  struct Result {
    double loss = 0, gradNorm = 0;
  };
  // A non-finite loss leaves the parameters as they were.
  Result step(int64_t step, double lr);
  // The median seconds a step spent in the gradients' all-reduce (0: none).
  double allReduceSeconds() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

// Trains `params` (in manifest order, updated in place) on `train`, validating on `valid`.
TrainResult train(const Program &program, std::vector<Tensor> &params, const Split &train,
                  const Split &valid, const TrainOptions &options);
// The same with batches from `train` (options.seed is the source's business).
TrainResult train(const Program &program, std::vector<Tensor> &params, BatchSource &train,
                  const Split &valid, const TrainOptions &options);

// The mean of the `loss` entry over the full batches of `split` (`hook` makes the inputs past
// the split's, with step 0); NaN when the split fills no batch (evaluatedExamples says
// whether it does). With `comm`, each rank evaluates its shard of every batch and every rank
// returns the whole batches' mean.
double evaluate(const Program &program, const std::vector<Tensor> &params, const Split &split,
                const BatchHook &hook = {}, dist::Communicator *comm = nullptr);
// How many examples of `split` evaluate() reads: its full batches' (of the `loss` entry's
// batch size); 0 when it fills none.
int64_t evaluatedExamples(const Program &program, const Split &split);

// Checkpoints hold every parameter and optimizer state by name, and `metadata`.
void saveCheckpoint(const std::string &path, const attn_program_info &info,
                    const std::vector<Tensor> &params,
                    const std::map<std::string, std::string> &metadata);
// Loads the tensors named like `info`'s parameters into `params` (shapes must match). A name
// missing from the file is an error, unless `statesOptional` and it is optimizer state (named
// `<param>/<state>` by attn-train-step): evaluation needs no optimizer. Returns the metadata.
std::map<std::string, std::string> loadCheckpoint(const std::string &path,
                                                  const attn_program_info &info,
                                                  std::vector<Tensor> &params,
                                                  bool statesOptional = false);

// The same from a checkpoint already read (`path` names it in messages).
std::map<std::string, std::string>
loadParams(const checkpoint::Checkpoint &ckpt, const std::string &path,
           const attn_program_info &info, std::vector<Tensor> &params, bool statesOptional = false);
// Only the metadata of a checkpoint: its header is validated, its tensors are not read.
std::map<std::string, std::string> readCheckpointMetadata(const std::string &path);

} // namespace attn::train

#endif // ATTN_TRAIN_TRAINER_H
