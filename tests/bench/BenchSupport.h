// What the train-step benchmarks share: the compiled @train_step driven as the trainer drives
// it, timing statistics, the command-line and setup chores, the FLOP counts of compiled entry
// points and the GEMM calibration they are measured against, the PyTorch side (a Python child
// process driven line by line over two pipes; tests/bench/bench_io.py speaks the protocol), run
// with glibc's malloc and with tcmalloc and taken at its best, and the rows of
// bench-results/table.md.
#pragma once

#include "compiler/Driver/Measure.h"
#include "compiler/Driver/Session.h"

#include "attn/Cpu.h"
#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/Random.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/kernels.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bench {

// The benchmark's executable name, for error messages; main() sets it first.
inline const char *programName = "attn-bench";

// Prints "<program>: error: <what>" and exits 1.
[[noreturn]] inline void die(const std::string &what) {
  std::fprintf(stderr, "%s: error: %s\n", programName, what.c_str());
  std::exit(1);
}

// Whether this CPU runs `rows`, which need `feature` (asked as attnc asks before it compiles
// them: attn::cpuHas, which honours ATTN_MAX_CPU). Where it does not, says which rows are
// skipped and why: every benchmark runs the rows its CPU can run.
inline bool cpuRuns(const std::string &rows, const char *feature, const char *isa) {
  if (::attn::cpuHas(feature).value_or(false))
    return true;
  std::printf("skipped: %s: this CPU has no %s instructions (%s)\n", rows.c_str(), isa, feature);
  return false;
}
inline bool runsBf16(const std::string &rows) { return cpuRuns(rows, "avx512bf16", "AVX512_BF16"); }
inline bool runsInt8(const std::string &rows) { return cpuRuns(rows, "avx512vnni", "AVX512_VNNI"); }

using ::attn::driver::seconds;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "(min A, max B over N reps)" of times in seconds, shown times `scale` (1e3: ms, 1e6: us)
// with `decimals` digits.
inline std::string spread(std::vector<double> v, double scale, int decimals) {
  std::sort(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof buf, "(min %.*f, max %.*f over %zu reps)", decimals,
                v.front() * scale, decimals, v.back() * scale, v.size());
  return buf;
}

inline attn::Tensor scalar(float v) { return attn::Tensor::f32({}, {v}); }

// Seconds per call of `iters` calls of `step`.
template <class Step> double perStep(int iters, Step &&step) {
  double start = seconds();
  for (int i = 0; i < iters; ++i)
    step();
  return (seconds() - start) / iters;
}

// Between timing one side and the other: lets the OpenMP worker threads of the side that just
// ran stop spinning (libgomp spins for a while after each parallel region).
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// OMP_NUM_THREADS if set, else the hardware thread count: what both sides run with.
inline int threadCount() {
  const char *omp = std::getenv("OMP_NUM_THREADS");
  return omp && std::atoi(omp) > 0 ? std::atoi(omp)
                                   : (int)std::max(1u, std::thread::hardware_concurrency());
}

// "threads: N (OMP_NUM_THREADS=..., hardware threads: M)"
inline std::string threadsNote() {
  const char *omp = std::getenv("OMP_NUM_THREADS");
  char buf[128];
  std::snprintf(buf, sizeof buf, "threads: %d (OMP_NUM_THREADS=%s, hardware threads: %u)",
                threadCount(), omp ? omp : "unset", std::thread::hardware_concurrency());
  return buf;
}

// The interpreter of the PyTorch side: $ATTN_BENCH_PYTHON, else Debian's (python3-torch).
inline std::string benchPython() {
  const char *env = std::getenv("ATTN_BENCH_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

// A per-process temporary file for handing weights and batches to the PyTorch side.
inline std::string tempDataFile(const std::string &stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "-" + std::to_string(getpid()) + ".safetensors"))
      .string();
}

// Walks argv for a benchmark's main(): flags, each with at most one value; a missing value
// calls `usage` (which exits).
class Args {
public:
  Args(int argc, char **argv, void (*usage)()) : argc(argc), argv(argv), usage(usage) {}
  // Advances to the next flag; false after the last.
  bool next() {
    if (++i >= argc)
      return false;
    flag = argv[i];
    return true;
  }
  std::string value() {
    if (i + 1 >= argc)
      usage();
    return argv[++i];
  }
  std::string flag;

private:
  int argc, i = 0;
  char **argv;
  void (*usage)();
};

// The flags every benchmark takes, and their validation.
struct Timing {
  int warmup, reps, iters;

  // Reads the value of `args`' flag if it is --warmup, --reps or --iters; false otherwise.
  bool parse(Args &args) {
    int *target = args.flag == "--warmup" ? &warmup
                  : args.flag == "--reps" ? &reps
                  : args.flag == "--iters" ? &iters
                                           : nullptr;
    if (target)
      *target = std::atoi(args.value().c_str());
    return target;
  }
  bool valid() const { return warmup >= 1 && reps >= 1 && iters >= 1; }
  std::string describe() const {
    char buf[128];
    std::snprintf(buf, sizeof buf,
                  "timing: %d warm-up steps, %d interleaved repetitions x %d steps, median per "
                  "step",
                  warmup, reps, iters);
    return buf;
  }
};

// attnc's step-1 loss against PyTorch's: prints ", PyTorch L (rel diff R, ok|MISMATCH ...)"
// and returns whether they agree to 1e-4 relative (the check every benchmark makes before
// timing means anything).
inline bool printLossAgreement(double attnLoss, double torchLoss) {
  double rel = std::fabs(attnLoss - torchLoss) / std::max(std::fabs(torchLoss), 1e-6);
  bool ok = rel < 1e-4;
  std::printf(", PyTorch %.7g (rel diff %.2g, %s)", torchLoss, rel,
              ok ? "ok, < 1e-4" : "MISMATCH, >= 1e-4");
  return ok;
}

// `count` random full-length teacher-forced seq2seq batches {src, src_mask, tgt_in, tgt_out}:
// ids in [4, V) (0-3 are pad, bos, eos, unk), src_mask all ones, tgt_in = bos y1 .. y(T-1),
// tgt_out = y1 .. yT.
inline std::vector<std::vector<attn::Tensor>> seq2seqBatches(int count, int64_t batch,
                                                             int64_t srcLen, int64_t tgtLen,
                                                             int64_t srcVocab, int64_t tgtVocab) {
  constexpr int32_t kBos = 1;
  attn::Rng rng(42);
  auto id = [&](int64_t v) { return (int32_t)(4 + (int64_t)(rng.nextDouble() * (v - 4))); };
  std::vector<std::vector<attn::Tensor>> batches;
  for (int k = 0; k < count; ++k) {
    attn::Tensor src(ATTN_I32, {batch, srcLen}), mask(ATTN_F32, {batch, srcLen});
    attn::Tensor tin(ATTN_I32, {batch, tgtLen}), tout(ATTN_I32, {batch, tgtLen});
    for (int64_t i = 0; i < src.numel(); ++i) {
      src.data<int32_t>()[i] = id(srcVocab);
      mask.data<float>()[i] = 1.0f;
    }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < tgtLen; ++t) {
        tout.data<int32_t>()[b * tgtLen + t] = id(tgtVocab);
        tin.data<int32_t>()[b * tgtLen + t] = t == 0 ? kBos : tout.data<int32_t>()[b * tgtLen + t - 1];
      }
    batches.push_back({std::move(src), std::move(mask), std::move(tin), std::move(tout)});
  }
  return batches;
}

// i32 ids as f32, for the data files the PyTorch sides read (safetensors through numpy).
inline attn::Tensor idsAsF32(const attn::Tensor &ids) {
  attn::Tensor t(ATTN_F32, ids.shape());
  for (int64_t i = 0; i < ids.numel(); ++i)
    t.data<float>()[i] = (float)ids.data<int32_t>()[i];
  return t;
}

// Writes `weights` and the seq2seqBatches to `path` for a PyTorch side: batch k as src<k>,
// src_mask<k>, tgt_in<k>, tgt_out<k>, ids as f32 (bench_io.seq2seq_batches reads them back).
inline void writeSeq2SeqData(const std::string &path, attn::checkpoint::Checkpoint weights,
                             const std::vector<std::vector<attn::Tensor>> &batches) {
  auto asF32 = idsAsF32;
  for (size_t k = 0; k < batches.size(); ++k) {
    std::string n = std::to_string(k);
    weights.tensors.push_back({"src" + n, asF32(batches[k][0])});
    weights.tensors.push_back({"src_mask" + n, batches[k][1]});
    weights.tensors.push_back({"tgt_in" + n, asF32(batches[k][2])});
    weights.tensors.push_back({"tgt_out" + n, asF32(batches[k][3])});
  }
  attn::checkpoint::save(path, weights);
}

// The FLOPs of every entry point (attn::driver::entryFlops); dies when they cannot be counted.
inline std::map<std::string, double> entryFlops(mlir::ModuleOp module) {
  std::map<std::string, double> flops = ::attn::driver::entryFlops(module);
  if (flops.empty())
    die("attn-decompose failed while counting FLOPs");
  return flops;
}

inline double onednnGemmGflops() { return ::attn::driver::gemmGflops(); }

// The machine's GEMM peak as this run measured it: oneDNN's and PyTorch's f32 GEMM at the
// benchmark's thread count (PyTorch's from its child process), and the faster of the two,
// which every "fraction of peak" divides by.
struct Calibration {
  double onednn = 0, torch = 0; // GFLOP/s; torch 0 when there is no PyTorch side
  std::string torchBlas;        // e.g. "OpenBLAS 0.3.21 core SkylakeX"
  double peak() const { return std::max(onednn, torch); }
  // "calibration: f32 GEMM 1024^3, N thread(s): oneDNN X GFLOP/s, PyTorch Y GFLOP/s (BLAS);
  // peak Z GFLOP/s"
  void print(int threads) const {
    std::printf("calibration: f32 GEMM 1024^3, %d thread%s: oneDNN (attnc's matmul) %.1f GFLOP/s",
                threads, threads == 1 ? "" : "s", onednn);
    if (torch > 0)
      std::printf(", PyTorch %.1f GFLOP/s (%s)", torch, torchBlas.c_str());
    std::printf("; peak %.1f GFLOP/s\n", peak());
  }
  // "G GFLOP/s = P% of peak" for `flops` done in `seconds`.
  std::string rate(double flops, double seconds) const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.1f GFLOP/s = %.1f%% of peak", flops / seconds / 1e9,
                  100.0 * flops / seconds / 1e9 / peak());
    return buf;
  }
  // "  FLOPs per <what>: F GFLOP (matmuls of the compiled program); attnc R; PyTorch R" for
  // median times in seconds (torchSeconds 0: no PyTorch side).
  void printRates(const char *what, double flops, double attnSeconds,
                  double torchSeconds) const {
    std::printf("  FLOPs per %s: %.3f GFLOP (the compiled program's matmuls); attnc %s", what,
                flops / 1e9, rate(flops, attnSeconds).c_str());
    if (torchSeconds > 0)
      std::printf("; PyTorch %s", rate(flops, torchSeconds).c_str());
    std::printf("\n");
  }
};

// A session for a benchmark's program (its diagnostics on stderr).
inline std::unique_ptr<::attn::driver::Session> newSession(bool fuse = true, bool hoist = true,
                                                           bool fuseRecurrence = true,
                                                           const std::string &precision = "f32") {
  ::attn::driver::SessionOptions o;
  o.fuse = fuse;
  o.hoist = hoist;
  o.fuseRecurrence = fuseRecurrence;
  o.precision = precision;
  return std::make_unique<::attn::driver::Session>(o);
}

// A model's @train_step compiled as `attnc train` compiles it (the session's spec's
// optimizer, or Adam at its defaults for a bare attn module; the learning rate is an input of
// the step) and called the way the trainer calls it: Program::call, then the
// `update:<name>` outputs (new weights and optimizer state) moved into the parameters they
// update.
class TrainStepProgram {
public:
  // `session` holds the spec (imported on the way) or the attn module; `startedAt` is when
  // compilation began (seconds()), for compileSeconds to include making the module (0: now).
  explicit TrainStepProgram(std::unique_ptr<::attn::driver::Session> session,
                            uint64_t seed = 1, double startedAt = 0)
      : session(std::move(session)) {
    double t0 = startedAt ? startedAt : seconds();
    if (!this->session->runTo(::attn::driver::Stage::Grad))
      die("the training pipeline failed");
    flops = entryFlops(this->session->module());
    model = this->session->loadModel(seed);
    if (!model)
      die("the train step does not compile");
    program = model->program.get();
    compileSeconds = seconds() - t0;

    const attn_program_info &info = program->info();
    const attn_entry_info &entry = program->entry("train_step");
    // Outputs 0 and 1 are the loss and the gradient norm; the rest are "update:<param>".
    updateTarget.assign(entry.num_outputs, -1);
    for (int out = 2; out < entry.num_outputs; ++out) {
      std::string name = std::string(entry.outputs[out].name).substr(strlen("update:"));
      for (int p = 0; p < info.num_params; ++p)
        if (name == info.params[p].name)
          updateTarget[out] = p;
      if (updateTarget[out] < 0)
        die("no parameter for output " + std::string(entry.outputs[out].name));
    }
  }

  // One training step on `batch` (the @train_step inputs before the learning rate and the
  // 1-based step count, which are appended here); returns its outputs, the updates moved out.
  std::vector<::attn::Tensor> step(std::vector<::attn::Tensor> batch, float lr) {
    ++steps;
    batch.push_back(scalar(lr));
    batch.push_back(scalar((float)steps));
    std::vector<::attn::Tensor> outputs = program->call("train_step", params(), batch);
    losses.push_back(outputs[0].data<float>()[0]);
    for (size_t out = 2; out < outputs.size(); ++out)
      params()[updateTarget[out]] = std::move(outputs[out]);
    return outputs;
  }

  // The weights (not the optimizer state, whose names hold a '/') under their names, for the
  // PyTorch side to start from.
  ::attn::checkpoint::Checkpoint weights() const {
    const attn_program_info &info = program->info();
    ::attn::checkpoint::Checkpoint ckpt;
    for (int p = 0; p < info.num_params; ++p)
      if (!std::strchr(info.params[p].name, '/'))
        ckpt.tensors.push_back({info.params[p].name, model->params[p]});
    return ckpt;
  }

  std::vector<::attn::Tensor> &params() { return model->params; }

  std::unique_ptr<::attn::driver::Session> session;
  std::unique_ptr<::attn::driver::Model> model;
  const ::attn::Program *program = nullptr;
  double compileSeconds = 0;
  std::map<std::string, double> flops; // per entry point (entryFlops), e.g. flops["train_step"]
  int64_t steps = 0;           // steps taken
  std::vector<double> losses;  // the loss of each step taken

private:
  std::vector<int> updateTarget; // output index -> parameter index
};

// The allocator a PyTorch side runs with. PyTorch on glibc's malloc pays a fresh mmap, zeroed
// by the kernel page by page, for every tensor above glibc's mmap threshold; PyTorch's CPU
// tuning guides tell its users to preload tcmalloc, so a fair baseline runs both.
enum class Allocator { Glibc, Tcmalloc };

inline const char *allocatorName(Allocator a) {
  return a == Allocator::Glibc ? "glibc malloc" : "tcmalloc";
}

// The tcmalloc the PyTorch side preloads: $ATTN_BENCH_TCMALLOC, else Debian's
// libtcmalloc-minimal4 (scripts/bench.sh installs it).
inline std::string tcmallocPath() {
  const char *env = std::getenv("ATTN_BENCH_TCMALLOC");
  return env && *env ? env : "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4";
}

// The PyTorch side: a child process driven line by line over two pipes.
class PyTorchSide {
public:
  // Runs `python script args... --serve` (with `allocator`) and waits for its "blas GFLOPS
  // DESCRIPTION" line (its GEMM calibration) and then "ready TORCH_VERSION FIRST_LOSS
  // LAST_WARMUP_LOSS" after its warm-up; otherwise (no interpreter, no torch, no tcmalloc, a
  // crash) `note` says why and the benchmark goes on without this side.
  bool launch(const std::string &python, const std::string &script, std::vector<std::string> args,
              Allocator allocator = Allocator::Glibc) {
    this->allocator = allocator;
    if (access(python.c_str(), X_OK) != 0) {
      note = python + " not found";
      return false;
    }
    if (allocator == Allocator::Tcmalloc && access(tcmallocPath().c_str(), R_OK) != 0) {
      note = tcmallocPath() + " not found (apt-get install libtcmalloc-minimal4)";
      return false;
    }
    args.insert(args.begin(), {python, script});
    args.push_back("--serve");
    // A child that dies must show as a failed read, not end this process by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    if (!start(args)) {
      note = "cannot start " + python;
      return false;
    }
    std::string line = readLine();
    char blas[256];
    if (std::sscanf(line.c_str(), "blas %lf %255[^\n]", &gemmGflops, blas) == 2) {
      this->blas = blas;
      line = readLine();
    }
    char v[64];
    if (std::sscanf(line.c_str(), "ready %63s %lf %lf", v, &firstLoss, &warmLoss) == 3) {
      ready = true;
      version = v;
    } else {
      note = line.empty() ? python + " " + script + " exited without answering" : line;
      finish();
    }
    return ready;
  }
  // One timed repetition on the PyTorch side: its seconds per step (wall clock); its user and
  // system CPU seconds per step go to `userTimes` and `systemTimes`.
  double rep() {
    send("rep");
    std::string line = readLine();
    double v[3];
    const char *p = line.c_str();
    for (double &x : v) {
      char *end = nullptr;
      x = std::strtod(p, &end);
      if (end == p)
        die("unexpected answer from the PyTorch side (" + std::string(allocatorName(allocator)) +
            "): '" + line + "'");
      p = end;
    }
    userTimes.push_back(v[1]);
    systemTimes.push_back(v[2]);
    return v[0];
  }
  // Ends the child (its last line, its own median, is dropped); returns its exit status.
  int quit() {
    if (pid < 0) // not running (never started, or ended already)
      return 0;
    send("quit");
    readLine();
    return finish();
  }

  bool ready = false;            // launch() succeeded
  std::string version, note;     // torch's version; why there is no PyTorch side
  double firstLoss = 0, warmLoss = 0;
  double gemmGflops = 0; // PyTorch's f32 GEMM 1024^3 at the benchmark's threads
  std::string blas;      // its BLAS library and core, e.g. "OpenBLAS 0.3.21 core SkylakeX"
  Allocator allocator = Allocator::Glibc;
  std::vector<double> userTimes, systemTimes; // CPU seconds per step, one per rep()

private:
  bool start(const std::vector<std::string> &argv) {
    int toChild[2], fromChild[2];
    if (pipe(toChild) || pipe(fromChild))
      return false;
    pid = fork();
    if (pid < 0)
      return false;
    if (pid == 0) {
      // PyTorch at its best: these machines set OPENBLAS_CORETYPE=Haswell (and an L2 size)
      // for old OpenBLAS builds, which makes OpenBLAS run AVX2 GEMM kernels at about half
      // speed on AVX-512 CPUs. The child reports the core it then chose ("blas" line).
      unsetenv("OPENBLAS_CORETYPE");
      unsetenv("OPENBLAS_L2_SIZE");
      if (allocator == Allocator::Tcmalloc)
        setenv("LD_PRELOAD", tcmallocPath().c_str(), 1);
      dup2(toChild[0], 0);
      dup2(fromChild[1], 1);
      close(toChild[0]), close(toChild[1]), close(fromChild[0]), close(fromChild[1]);
      std::vector<char *> args;
      for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      std::printf("error: cannot run %s: %s\n", args[0], std::strerror(errno));
      std::fflush(stdout);
      _exit(127);
    }
    close(toChild[0]), close(fromChild[1]);
    in = fdopen(toChild[1], "w");
    out = fdopen(fromChild[0], "r");
    return in && out;
  }
  // One line of the child's stdout, without the newline; "" at end of file.
  std::string readLine() {
    char *line = nullptr;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, out);
    std::string s = n > 0 ? std::string(line, n) : std::string();
    std::free(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
      s.pop_back();
    return s;
  }
  void send(const char *command) {
    std::fprintf(in, "%s\n", command);
    std::fflush(in);
  }
  int finish() {
    if (in)
      std::fclose(in);
    if (out)
      std::fclose(out);
    in = out = nullptr;
    int status = 0;
    if (pid > 0)
      waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

  pid_t pid = -1;
  std::FILE *in = nullptr, *out = nullptr;
};

// PyTorch at its best: the same PyTorch side in two child processes, one on glibc's malloc and
// one with tcmalloc preloaded, timed in the same interleaved repetitions; the faster of the two
// is the baseline every ratio and share of the peak uses, and both are printed with their CPU
// time, so that a side that spends its time in page faults shows itself. Its members mirror a
// single side's, taken from the first side that is ready.
class PyTorchBaseline {
public:
  // Launches both sides with the same arguments; true when at least one is ready.
  bool launch(const std::string &python, const std::string &script,
              const std::vector<std::string> &args) {
    for (PyTorchSide &side : sides) {
      side.launch(python, script, args, &side == &sides[0] ? Allocator::Glibc
                                                            : Allocator::Tcmalloc);
      if (side.ready && !ready) {
        ready = true;
        version = side.version;
        firstLoss = side.firstLoss;
        warmLoss = side.warmLoss;
      }
    }
    if (!ready)
      note = sides[0].note;
    return ready;
  }

  // One timed repetition of each ready side (their threads settled before each), kept in
  // `times`.
  void rep() {
    for (size_t s = 0; s < 2; ++s)
      if (sides[s].ready) {
        settle();
        times[s].push_back(sides[s].rep());
      }
  }

  // The side whose median time is the lower (nullptr when none is ready or none was timed).
  const PyTorchSide *best() const {
    const PyTorchSide *b = nullptr;
    for (size_t s = 0; s < 2; ++s)
      if (sides[s].ready && !times[s].empty() &&
          (!b || median(times[s]) < median(times[b == &sides[0] ? 0 : 1])))
        b = &sides[s];
    return b;
  }
  // The best side's seconds per step of each repetition (empty when there is none).
  std::vector<double> bestTimes() const {
    const PyTorchSide *b = best();
    return b ? times[b == &sides[0] ? 0 : 1] : std::vector<double>();
  }
  double bestSeconds() const {
    std::vector<double> t = bestTimes();
    return t.empty() ? 0 : median(t);
  }
  const char *bestAllocator() const { return best() ? allocatorName(best()->allocator) : "-"; }
  // The median seconds per step with `allocator` (0 when that side did not run).
  double secondsWith(Allocator allocator) const {
    size_t s = allocator == Allocator::Glibc ? 0 : 1;
    return sides[s].ready && !times[s].empty() ? median(times[s]) : 0;
  }

  // Both sides' lines: "<indent>PyTorch, glibc malloc: T <unit>/step (min, max); CPU per
  // step: user U, system S", times shown times `scale` (1e3: ms, 1e6: us), then which one is
  // the baseline; a side that did not run says why.
  void printAllocators(const char *indent, double scale, const char *unit) const {
    for (size_t s = 0; s < 2; ++s) {
      const PyTorchSide &side = sides[s];
      std::printf("%sPyTorch, %-12s: ", indent, allocatorName(side.allocator));
      if (!side.ready || times[s].empty()) {
        std::printf("did not run: %s\n", side.note.c_str());
        continue;
      }
      double t = median(times[s]) * scale;
      int digits = t < 10 ? 2 : t < 1000 ? 1 : 0; // three or four significant digits
      std::printf("%9.*f %s/step  %s; CPU per step: user %.*f, system %.*f %s\n", digits, t,
                  unit, spread(times[s], scale, digits).c_str(), digits,
                  median(side.userTimes) * scale, digits, median(side.systemTimes) * scale,
                  unit);
    }
    if (const PyTorchSide *b = best())
      std::printf("%sPyTorch at its best: with %s\n", indent, allocatorName(b->allocator));
  }

  // Ends both children; returns the first non-zero exit status.
  int quit() {
    int rc = 0;
    for (PyTorchSide &side : sides)
      if (side.ready) {
        int code = side.quit();
        rc = rc ? rc : code;
      }
    return rc;
  }

  bool ready = false;        // at least one side launched
  std::string version, note; // torch's version; why there is no PyTorch side at all
  double firstLoss = 0, warmLoss = 0;
  PyTorchSide sides[2];             // glibc malloc, tcmalloc
  std::vector<double> times[2];     // seconds per step of each repetition, per side
};

// This run's calibration: oneDNN's GEMM measured here, PyTorch's as `torch` reported it (the
// faster of its sides; the allocator does not touch a GEMM's time).
inline Calibration calibrate(const PyTorchBaseline &torch) {
  Calibration c;
  c.onednn = onednnGemmGflops();
  for (const PyTorchSide &side : torch.sides)
    if (side.ready && side.gemmGflops > c.torch) {
      c.torch = side.gemmGflops;
      c.torchBlas = side.blas;
    }
  return c;
}

// `timing.warmup` calls of `step`, then `timing.reps` repetitions that alternate attnc (seconds
// per call over `timing.iters` calls, into `attn`) and each PyTorch baseline (both of its
// sides), letting the other side's threads settle between them; `torch[b]` receives baseline
// b's best side's times.
template <class Step>
void timeInterleaved(const Timing &timing, Step &&step,
                     const std::vector<PyTorchBaseline *> &baselines, std::vector<double> &attn,
                     std::vector<std::vector<double>> &torch) {
  for (int i = 0; i < timing.warmup; ++i)
    step();
  for (int r = 0; r < timing.reps; ++r) {
    settle();
    attn.push_back(perStep(timing.iters, step));
    for (PyTorchBaseline *b : baselines)
      b->rep();
  }
  torch.clear();
  for (PyTorchBaseline *b : baselines)
    torch.push_back(b->bestTimes());
}

// The same with one PyTorch baseline.
template <class Step>
void timeInterleaved(const Timing &timing, Step &&step, PyTorchBaseline &torchSide,
                     std::vector<double> &attn, std::vector<double> &torch) {
  std::vector<std::vector<double>> times;
  timeInterleaved(timing, step, {&torchSide}, attn, times);
  torch = std::move(times[0]);
}

// A time for the table: "412 µs", "41.0 ms", "1.62 s".
inline std::string shortTime(double seconds) {
  char buf[32];
  if (seconds < 1e-3)
    std::snprintf(buf, sizeof buf, "%.0f µs", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.*f ms", seconds < 0.1 ? 2 : 1, seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  return buf;
}

// A goal of the project for a workload: PyTorch's time over attnc's at least `ratio`, attnc at
// least `peakPercent` of the GEMM peak (0: no such goal).
struct Goal {
  double ratio = 0, peakPercent = 0;
};

// One row of the current table (scripts/bench.sh collects the lines that start with "table: "
// into bench-results/table.md; scripts/bench-table.py adds the header):
//   table: | workload | threads | attnc | PyTorch at its best | PyTorch, glibc malloc |
//            PyTorch / attnc | attnc % of peak | PyTorch % of peak | goal | met |
// `flops` 0: no share of the peak; `torch` null or not ready: no PyTorch columns;
// `torchSameWork` false: PyTorch does other work than `flops` (an uncached decoder), so no
// share of the peak for it. `reference` names another baseline (matmul-softmax: oneDNN called
// directly) with its seconds.
inline void printTableRow(const Calibration &c, const std::string &workload, double flops,
                          double attnSeconds, const PyTorchBaseline *torch, Goal goal = {},
                          bool torchSameWork = true, const std::string &reference = "",
                          double referenceSeconds = 0) {
  auto percent = [&](double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * flops / seconds / 1e9 / c.peak());
    return flops > 0 && seconds > 0 && c.peak() > 0 ? std::string(buf) : std::string("-");
  };
  double torchSeconds = torch && torch->ready ? torch->bestSeconds() : 0;
  std::string best = "-", glibc = "-";
  if (torchSeconds > 0) {
    best = shortTime(torchSeconds) + " (" + torch->bestAllocator() + ")";
    if (double g = torch->secondsWith(Allocator::Glibc))
      glibc = shortTime(g);
  } else if (referenceSeconds > 0) {
    best = shortTime(referenceSeconds) + " (" + reference + ")";
    torchSeconds = referenceSeconds;
  }
  char ratio[32] = "-";
  if (torchSeconds > 0)
    std::snprintf(ratio, sizeof ratio, "%.2f", torchSeconds / attnSeconds);
  std::string goalText = "-", met = "-";
  if (goal.ratio > 0 || goal.peakPercent > 0) {
    char buf[64];
    if (goal.ratio > 0 && goal.peakPercent > 0)
      std::snprintf(buf, sizeof buf, "%gx, %g%%", goal.ratio, goal.peakPercent);
    else if (goal.ratio > 0)
      std::snprintf(buf, sizeof buf, "%gx", goal.ratio);
    else
      std::snprintf(buf, sizeof buf, "%g%%", goal.peakPercent);
    goalText = buf;
    bool ratioMet =
        goal.ratio <= 0 || (torchSeconds > 0 && torchSeconds / attnSeconds >= goal.ratio);
    bool peakMet = goal.peakPercent <= 0 ||
                   (flops > 0 && 100.0 * flops / attnSeconds / 1e9 / c.peak() >= goal.peakPercent);
    bool both = goal.ratio > 0 && goal.peakPercent > 0;
    met = ratioMet && peakMet ? "yes"
          : !both            ? "no"
          : ratioMet         ? "ratio only"
          : peakMet          ? "peak only"
                             : "no";
    if (goal.ratio > 0 && torchSeconds <= 0)
      met = "no PyTorch side";
  }
  std::printf("table: | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", workload.c_str(),
              threadCount(), shortTime(attnSeconds).c_str(), best.c_str(), glibc.c_str(), ratio,
              percent(attnSeconds).c_str(),
              torch && torch->ready && torchSameWork ? percent(torch->bestSeconds()).c_str() : "-",
              goalText.c_str(), met.c_str());
}

// A bf16 train step (train.precision: bf16, docs/precision.md) against its f32 twin and
// PyTorch's autocast step (`torchBf16`, launched with --precision bf16): warm-up, then
// repetitions alternating the bf16 step, the f32 step and PyTorch's; prints the three times,
// the step-1 losses (bf16 keeps 8 bits: they agree to 1e-2 relative, not 1e-4) and the bf16
// step's share of the bf16 GEMM peak measured here, then its table row. Returns whether the
// losses agree.
template <class Step, class F32Step>
bool compareBf16Step(const std::string &workload, const Timing &timing, TrainStepProgram &bf16,
                     Step &&bf16Step, TrainStepProgram &f32, F32Step &&f32Step,
                     PyTorchBaseline &torchBf16, Goal goal) {
  std::vector<double> tBf16, tF32;
  for (int i = 0; i < timing.warmup; ++i)
    bf16Step();
  for (int r = 0; r < timing.reps; ++r) {
    settle();
    tBf16.push_back(perStep(timing.iters, bf16Step));
    settle();
    tF32.push_back(perStep(timing.iters, f32Step));
    torchBf16.rep();
  }
  double mBf16 = median(tBf16), mF32 = median(tF32), mTorch = 0;
  if (torchBf16.ready) {
    if (int code = torchBf16.quit())
      std::fprintf(stderr, "note: the PyTorch bf16 side exited with %d\n", code);
    mTorch = median(torchBf16.bestTimes());
  }
  double bf16Loss = bf16.losses.front(), f32Loss = f32.losses.front();
  bool close = std::fabs(bf16Loss - f32Loss) <= 1e-2 * std::fabs(f32Loss);
  Calibration peak;
  peak.onednn = ::attn::driver::gemmGflops(1024, 7, /*bf16=*/true);
  double flops = bf16.flops["train_step"];
  std::printf("\nbf16 train step (train.precision: bf16; products in bf16, f32 sums)\n"
              "calibration: bf16 GEMM 1024^3: oneDNN (attnc's matmul_bf16) %.1f GFLOP/s\n"
              "  attnc bf16: %9.1f ms/step  %s; f32 %.1f ms/step: %.2fx (step-1 loss %.7g vs "
              "%.7g, %s)\n",
              peak.onednn, mBf16 * 1e3, spread(tBf16, 1e3, 1).c_str(), mF32 * 1e3, mF32 / mBf16,
              bf16Loss, f32Loss, close ? "ok, < 1e-2" : "MISMATCH, >= 1e-2");
  if (torchBf16.ready) {
    std::printf("  PyTorch autocast bf16: %9.1f ms/step, at its best; ratio %.2f\n",
                mTorch * 1e3, mTorch / mBf16);
    torchBf16.printAllocators("    ", 1e3, "ms");
  } else {
    std::printf("note: no PyTorch bf16 comparison: %s\n", torchBf16.note.c_str());
  }
  peak.printRates("bf16 step", flops, mBf16, mTorch);
  std::printf("  attnc's bf16 step is %.2fx its f32 step (goal 1.7x)\n", mF32 / mBf16);
  printTableRow(peak, workload + ", bf16 vs autocast (% of the bf16 peak)", flops, mBf16,
                &torchBf16, goal);
  return close;
}

} // namespace bench
