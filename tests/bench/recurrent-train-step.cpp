// Benchmark: one training step of a 1-layer LSTM and a 1-layer GRU sequence model (batch 32,
// length 50, input 64, hidden 256, a dense head on the last hidden state, MSE, Adam): attnc's
// JIT-compiled @train_step with the recurrence fused (attn-fuse-recurrence: oneDNN's LSTM and
// linear-before-reset GRU primitives, forward and backward) and unfused (generic scans, with
// and without attn-hoist-scan-projections taking the input projection out of the loop), against
// PyTorch's eager nn.LSTM / nn.GRU + nn.Linear + torch.optim.Adam with the same thread count, in
// one run. Not a test; not run by ctest.
//
//   ninja -C build attn-bench-recurrent-train-step
//   OMP_NUM_THREADS=1 build/bin/attn-bench-recurrent-train-step
//   OMP_NUM_THREADS=2 build/bin/attn-bench-recurrent-train-step
//   ... [--cell lstm|gru|both] [--batch N] [--length N] [--input N] [--hidden N]
//       [--warmup N] [--reps N] [--iters N] [--no-unfused] [--no-bf16]
//
// The model is built here as attn IR (the YAML frontend's regression task reads one value per
// step): @loss(x [B, T, I], y [B, 1]) = mse(dense(h_T), y) over a scan of lstm_cell / gru_cell
// (PyTorch's form) whose weights are attn.params initialised like PyTorch's (U(+-1/sqrt(H))),
// then attn-fuse-recurrence (fused variant only), attn-hoist-scan-projections (not in the plain
// unfused variant), attn-autodiff, attn-train-step (adam), JIT,
// exactly as `attnc train` compiles a spec. Both sides start from the same weights and cycle
// through the same NB random batches; the step-1 loss must agree to 1e-4 relative. A ceiling
// line times oneDNN's two recurrent primitives alone, as the fused program calls them, in the
// same repetitions: how close the fused step is to what its kernels allow. Timing:
// warm-up, then repetitions of ITERS steps alternating the attnc variants and PyTorch;
// medians per step. The PyTorch side is tests/bench/recurrent-train-step.py (/usr/bin/python3,
// or $ATTN_BENCH_PYTHON), driven over a pipe. Then the fused step in bf16 (train.precision:
// bf16: oneDNN's bf16 RNN primitives, bf16 head) in turns with the f32 one, against PyTorch's
// step under torch.autocast('cpu', dtype=torch.bfloat16) and the bf16 GEMM peak of the run.

#include "BenchSupport.h"

#include "attn/Cpu.h"
#include "attn/Random.h"
#include "attn/Tensor.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/cpu/Recurrent.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "oneapi/dnnl/dnnl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr int NB = 8; // fixed batches, cycled

using bench::die;
using bench::median;
using bench::PyTorchBaseline;
using bench::seconds;
using bench::TrainStepProgram;

std::string spread(const std::vector<double> &v) { return bench::spread(v, 1e3, 2); }

struct Sizes {
  int64_t batch = 32, length = 50, input = 64, hidden = 256;
};

std::string shape(std::initializer_list<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

// @loss of the model as attn IR: a scan over one cell (what the importer emits for a layer).
std::string lossModule(const std::string &cell, const Sizes &z) {
  int64_t B = z.batch, T = z.length, I = z.input, H = z.hidden, G = cell == "lstm" ? 4 : 3;
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", 1.0 / std::sqrt((double)H));
  auto param = [&](const std::string &name, const std::string &type) {
    return "  %" + name + " = attn.param \"rnn.layer0." + name +
           "\" {init = #attn.init<uniform>, scale = " + scale + " : f32} : " + type + "\n";
  };
  std::string x = shape({B, T, I}), h = shape({B, H}), xt = shape({B, I});
  std::string wi = shape({I, G * H}), wh = shape({H, G * H}), b = shape({G * H});
  std::string s = "func.func @loss(%x: " + x + " {attn.name = \"x\"}, %y: " + shape({B, 1}) +
                  " {attn.name = \"target\"}) -> (tensor<f32> {attn.name = \"loss\"}) {\n";
  s += "  %zero = attn.constant dense<0.0> : " + h + "\n";
  s += param("w_ih", wi) + param("w_hh", wh);
  if (cell == "lstm") {
    s += param("b", b);
    s += "  %h, %c = attn.scan inits(%zero, %zero) over(%x) : (" + h + ", " + h + ", " + x +
         ") -> (" + h + ", " + h + ") {\n";
    s += "  ^bb0(%hp: " + h + ", %cp: " + h + ", %xt: " + xt + "):\n";
    s += "    %ht, %ct = attn.lstm_cell %xt, %hp, %cp, %w_ih, %w_hh, %b : " + xt + ", " + h +
         ", " + h + ", " + wi + ", " + wh + ", " + b + "\n";
    s += "    attn.yield %ht, %ct : " + h + ", " + h + "\n  }\n";
  } else {
    s += param("b_ih", b) + param("b_hh", b);
    s += "  %h = attn.scan inits(%zero) over(%x) : (" + h + ", " + x + ") -> (" + h + ") {\n";
    s += "  ^bb0(%hp: " + h + ", %xt: " + xt + "):\n";
    s += "    %ht = attn.gru_cell %xt, %hp, %w_ih, %w_hh, %b_ih, %b_hh : " + xt + ", " + h + ", " +
         wi + ", " + wh + ", " + b + ", " + b + "\n";
    s += "    attn.yield %ht : " + h + "\n  }\n";
  }
  s += "  %wo = attn.param \"output.weight\" {init = #attn.init<uniform>, scale = " +
       std::string(scale) + " : f32} : " + shape({H, 1}) + "\n";
  s += "  %bo = attn.param \"output.bias\" {init = #attn.init<uniform>, scale = " +
       std::string(scale) + " : f32} : tensor<1xf32>\n";
  s += "  %p = attn.dense %h, %wo, %bo : " + h + ", " + shape({H, 1}) + ", tensor<1xf32>\n";
  s += "  %l = attn.mse %p, %y : " + shape({B, 1}) + ", " + shape({B, 1}) + "\n";
  s += "  return %l : tensor<f32>\n}\n";
  return s;
}

//===- the ceiling: oneDNN's recurrent primitives alone -------------------------------===//

// What the fused step would take if nothing around oneDNN's two recurrent primitives cost
// anything: the primitives attn-fuse-recurrence lowers to (forward training, then backward),
// on the same sizes and batch-major `ntc` layout, weights reordered once into their formats,
// buffers oneDNN's own, timed alone (no head, loss, Adam, weight reorders or the runtime's
// copies), in the same repetitions as the steps (these VMs' speed drifts within a run). The
// fused step's share of time in them says how much is left to take outside them. With
// `bf16`, the bf16 primitives the bf16 step calls (bf16 data and weights, f32 gradients).
struct Primitives {
  std::function<void()> forward, backward; // one call each
  double flops = 0;                        // per forward + backward: 3x the forward's matmuls
};

// A layer's descriptors: the data the primitives read and write, and the gradients (f32).
struct LayerDescs {
  dnnl::memory::desc src, state, wl, wi, bias, dst, dsrc, dstate, dwl, dwi, ddst;
};

template <typename Fwd, typename Bwd, typename MakeFwd, typename MakeBwd>
Primitives makePrimitives(const Sizes &z, int64_t gates, int64_t biasGates, bool lstm, bool bf16,
                          MakeFwd makeFwd, MakeBwd makeBwd) {
  using md = dnnl::memory::desc;
  using tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  const auto data = bf16 ? dnnl::memory::data_type::bf16 : f32;
  int64_t B = z.batch, T = z.length, I = z.input, H = z.hidden;
  struct State {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{eng};
    std::unordered_map<int, dnnl::memory> fargs, bargs;
    Fwd fwd;
    Bwd bwd;
  };
  auto st = std::make_shared<State>();
  LayerDescs d{md({T, B, I}, data, tag::ntc),
               md({1, 1, B, H}, data, tag::ldnc),
               md({1, 1, I, gates, H}, data, tag::any),
               md({1, 1, H, gates, H}, data, tag::any),
               md({1, 1, biasGates, H}, f32, tag::ldgo),
               md({T, B, H}, data, tag::ntc),
               md({T, B, I}, f32, tag::ntc),
               md({1, 1, B, H}, f32, tag::ldnc),
               md({1, 1, I, gates, H}, f32, tag::any),
               md({1, 1, H, gates, H}, f32, tag::any),
               md({T, B, H}, f32, tag::ntc)};
  md cState({1, 1, B, H}, f32, tag::ldnc); // the LSTM's c: f32 in either
  typename Fwd::primitive_desc fpd(makeFwd(d), st->eng);
  typename Bwd::primitive_desc bpd(makeBwd(d), st->eng, fpd);
  // Small values, so that nothing saturates or underflows into denormals; bf16 memories get
  // the same values rounded (their upper halves).
  auto mem = [&](const md &m) {
    dnnl::memory out(m, st->eng);
    bool half = m.data_type() == dnnl::memory::data_type::bf16;
    for (size_t i = 0, n = m.get_size() / (half ? 2 : 4); i < n; ++i) {
      float v = 0.01f * (float)((i * 7) % 13) - 0.06f;
      if (half) {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        static_cast<uint16_t *>(out.get_data_handle())[i] = (uint16_t)(u >> 16);
      } else {
        static_cast<float *>(out.get_data_handle())[i] = v;
      }
    }
    return out;
  };
  const md &src = d.src, &state = d.state, &bias = d.bias, &dst = d.dst;
  dnnl::memory x = mem(src), h0 = mem(state), c0 = mem(cState), b = mem(bias), y = mem(dst),
               hn = mem(state), cn = mem(cState), ws = mem(fpd.workspace_desc());
  st->fargs = {{DNNL_ARG_SRC_LAYER, x},
               {DNNL_ARG_SRC_ITER, h0},
               {DNNL_ARG_WEIGHTS_LAYER, mem(fpd.weights_layer_desc())},
               {DNNL_ARG_WEIGHTS_ITER, mem(fpd.weights_iter_desc())},
               {DNNL_ARG_BIAS, b},
               {DNNL_ARG_DST_LAYER, y},
               {DNNL_ARG_DST_ITER, hn},
               {DNNL_ARG_WORKSPACE, ws}};
  if (lstm)
    st->fargs.insert({{DNNL_ARG_SRC_ITER_C, c0}, {DNNL_ARG_DST_ITER_C, cn}});
  // The backward reads what the forward read and wrote, its weights in its own formats, and
  // writes the gradients.
  st->bargs = st->fargs;
  st->bargs[DNNL_ARG_WEIGHTS_LAYER] = mem(bpd.weights_layer_desc());
  st->bargs[DNNL_ARG_WEIGHTS_ITER] = mem(bpd.weights_iter_desc());
  st->bargs.insert({{DNNL_ARG_DIFF_SRC_LAYER, mem(d.dsrc)},
                    {DNNL_ARG_DIFF_SRC_ITER, mem(d.dstate)},
                    {DNNL_ARG_DIFF_WEIGHTS_LAYER, mem(bpd.diff_weights_layer_desc())},
                    {DNNL_ARG_DIFF_WEIGHTS_ITER, mem(bpd.diff_weights_iter_desc())},
                    {DNNL_ARG_DIFF_BIAS, mem(bias)},
                    {DNNL_ARG_DIFF_DST_LAYER, mem(d.ddst)},
                    {DNNL_ARG_DIFF_DST_ITER, mem(d.dstate)}});
  if (lstm)
    st->bargs.insert(
        {{DNNL_ARG_DIFF_SRC_ITER_C, mem(cState)}, {DNNL_ARG_DIFF_DST_ITER_C, mem(cState)}});
  st->fwd = Fwd(fpd);
  st->bwd = Bwd(bpd);
  return {[st] {
            st->fwd.execute(st->stream, st->fargs);
            st->stream.wait();
          },
          [st] {
            st->bwd.execute(st->stream, st->bargs);
            st->stream.wait();
          },
          3.0 * 2 * B * T * (I + H) * gates * H};
}

Primitives makePrimitives(const std::string &cell, const Sizes &z, bool bf16) {
  const auto training = dnnl::prop_kind::forward_training;
  const auto backward = dnnl::prop_kind::backward;
  const auto dir = dnnl::rnn_direction::unidirectional_left2right;
  using md = dnnl::memory::desc;
  if (cell == "lstm") {
    // The cell state: f32 in either precision.
    md c({1, 1, z.batch, z.hidden}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ldnc);
    return makePrimitives<dnnl::lstm_forward, dnnl::lstm_backward>(
        z, 4, 4, /*lstm=*/true, bf16,
        [&](const LayerDescs &d) {
          return dnnl::lstm_forward::desc(training, dir, d.src, d.state, c, d.wl, d.wi, d.bias,
                                          d.dst, d.state, c);
        },
        [&](const LayerDescs &d) {
          return dnnl::lstm_backward::desc(backward, dir, d.src, d.state, c, d.wl, d.wi, d.bias,
                                           d.dst, d.state, c, d.dsrc, d.dstate, c, d.dwl, d.dwi,
                                           d.bias, d.ddst, d.dstate, c);
        });
  }
  return makePrimitives<dnnl::lbr_gru_forward, dnnl::lbr_gru_backward>(
      z, 3, 4, /*lstm=*/false, bf16,
      [&](const LayerDescs &d) {
        return dnnl::lbr_gru_forward::desc(training, dir, d.src, d.state, d.wl, d.wi, d.bias, d.dst,
                                           d.state);
      },
      [&](const LayerDescs &d) {
        return dnnl::lbr_gru_backward::desc(backward, dir, d.src, d.state, d.wl, d.wi, d.bias,
                                            d.dst, d.state, d.dsrc, d.dstate, d.dwl, d.dwi, d.bias,
                                            d.ddst, d.dstate);
      });
}

constexpr float kLr = 1e-3f;

// One compiled variant of a cell's train step, with its own parameters and step count.
struct Variant {
  std::string label;
  TrainStepProgram train;
  std::vector<double> times;
};

// `recurrence`: attn-fuse-recurrence (oneDNN's sequence ops); `hoist`: the input projection
// taken out of a generic scan (attn-hoist-scan-projections).
TrainStepProgram compileVariant(const std::string &text, bool recurrence, bool hoist,
                                const std::string &name, const std::string &precision = "f32") {
  double t0 = seconds();
  auto session = bench::newSession(/*fuse=*/true, hoist, recurrence, precision);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &session->context());
  if (!module || mlir::failed(mlir::verify(*module)))
    die("the benchmark's module does not parse");
  session->setModule(std::move(module), name);
  return TrainStepProgram(std::move(session), /*seed=*/1, t0);
}

void usage() {
  std::fprintf(stderr,
               "usage: attn-bench-recurrent-train-step [--cell lstm|gru|both] [--batch N]\n"
               "         [--length N] [--input N] [--hidden N] [--warmup N] [--reps N]\n"
               "         [--iters N] [--no-unfused] [--no-bf16]\n"
               "threads: OMP_NUM_THREADS (both attnc's oneDNN and torch.set_num_threads)\n");
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-recurrent-train-step";
  std::string script = std::string(ATTN_SOURCE_DIR) + "/tests/bench/recurrent-train-step.py";
  std::vector<std::string> cells = {"lstm", "gru"};
  Sizes z;
  bench::Timing timing{/*warmup=*/5, /*reps=*/7, /*iters=*/10};
  bool unfused = true;
  // bf16 where the CPU has it (oneDNN's bf16 primitives would run as slow emulation elsewhere).
  bool bf16 = bench::runsBf16("the bf16 rows");
  for (bench::Args args(argc, argv, usage); args.next();) {
    if (args.flag == "--cell") {
      std::string c = args.value();
      if (c == "both")
        cells = {"lstm", "gru"};
      else if (c == "lstm" || c == "gru")
        cells = {c};
      else
        usage();
    } else if (args.flag == "--batch")
      z.batch = std::atoll(args.value().c_str());
    else if (args.flag == "--length")
      z.length = std::atoll(args.value().c_str());
    else if (args.flag == "--input")
      z.input = std::atoll(args.value().c_str());
    else if (args.flag == "--hidden")
      z.hidden = std::atoll(args.value().c_str());
    else if (args.flag == "--no-unfused")
      unfused = false;
    else if (args.flag == "--no-bf16")
      bf16 = false;
    else if (!timing.parse(args))
      usage();
  }
  if (!timing.valid() || z.batch < 1 || z.length < 1 || z.input < 1 || z.hidden < 1)
    usage();
  const int warmup = timing.warmup, reps = timing.reps, iters = timing.iters;
  int threads = bench::threadCount();
  std::string python = bench::benchPython();

  std::printf("train step (forward, backward, adam): batch %lld, length %lld, input %lld, "
              "hidden %lld, 1 layer, dense head on the last hidden state, MSE\n",
              (long long)z.batch, (long long)z.length, (long long)z.input, (long long)z.hidden);
  std::printf("%s; %s\n", bench::threadsNote().c_str(), timing.describe().c_str());
  int rc = 0;
  std::optional<bench::Calibration> calibration; // from the first PyTorch side
  for (const std::string &cell : cells) {
    std::string text = lossModule(cell, z);
    std::vector<Variant> sides;
    sides.push_back(
        {"attnc fused",
         compileVariant(text, /*recurrence=*/true, /*hoist=*/true, "bench_" + cell + "_fused"),
         {}});
    if (unfused) {
      sides.push_back(
          {"attnc unfused, hoisted",
           compileVariant(text, /*recurrence=*/false, /*hoist=*/true, "bench_" + cell + "_hoisted"),
           {}});
      sides.push_back({"attnc unfused",
                       compileVariant(text, /*recurrence=*/false, /*hoist=*/false,
                                      "bench_" + cell + "_unfused"),
                       {}});
    }

    // NB random batches: x in [-1, 1], targets in [-1, 1].
    ::attn::Rng rng(42);
    std::vector<::attn::Tensor> xs, ys;
    for (int k = 0; k < NB; ++k) {
      ::attn::Tensor x(ATTN_F32, {z.batch, z.length, z.input}), y(ATTN_F32, {z.batch, 1});
      for (int64_t i = 0; i < x.numel(); ++i)
        x.data<float>()[i] = (float)(2 * rng.nextDouble() - 1);
      for (int64_t i = 0; i < y.numel(); ++i)
        y.data<float>()[i] = (float)(2 * rng.nextDouble() - 1);
      xs.push_back(std::move(x));
      ys.push_back(std::move(y));
    }
    std::string dataFile = bench::tempDataFile("attn-bench-recurrent");
    {
      ::attn::checkpoint::Checkpoint ckpt = sides[0].train.weights();
      for (int k = 0; k < NB; ++k) {
        ckpt.tensors.push_back({"x" + std::to_string(k), xs[k]});
        ckpt.tensors.push_back({"target" + std::to_string(k), ys[k]});
      }
      ::attn::checkpoint::save(dataFile, ckpt);
    }

    std::vector<std::string> torchArgs = {"--cell",    cell,
                                          "--data",    dataFile,
                                          "--threads", std::to_string(threads),
                                          "--batch",   std::to_string(z.batch),
                                          "--length",  std::to_string(z.length),
                                          "--input",   std::to_string(z.input),
                                          "--hidden",  std::to_string(z.hidden),
                                          "--batches", std::to_string(NB),
                                          "--lr",      std::to_string(kLr),
                                          "--warmup",  std::to_string(warmup),
                                          "--iters",   std::to_string(iters)};
    PyTorchBaseline torch;
    torch.launch(python, script, torchArgs);
    bool haveTorch = torch.ready;
    // PyTorch's autocast step, timed after the f32 ones, started while the data file is there.
    PyTorchBaseline torchBf16;
    if (bf16) {
      torchArgs.insert(torchArgs.end(), {"--precision", "bf16"});
      torchBf16.launch(python, script, torchArgs);
    }
    if (!calibration) {
      calibration = bench::calibrate(torch);
      calibration->print(threads);
    }

    size_t hits = ::attn::cpu::recurrentWorkspaceHits(),
           misses = ::attn::cpu::recurrentWorkspaceMisses();
    auto step = [&](TrainStepProgram &train) {
      int k = (int)(train.steps % NB);
      train.step({xs[k], ys[k]}, kLr);
    };
    Primitives prims = makePrimitives(cell, z, /*bf16=*/false);
    for (Variant &side : sides)
      for (int i = 0; i < warmup; ++i)
        step(side.train);
    for (int i = 0; i < warmup; ++i) {
      prims.forward();
      prims.backward();
    }
    std::vector<double> tTorch, tForward, tBackward;
    for (int r = 0; r < reps; ++r) {
      for (Variant &side : sides) {
        side.times.push_back(bench::perStep(iters, [&] { step(side.train); }));
        bench::settle();
      }
      tForward.push_back(bench::perStep(iters, prims.forward));
      tBackward.push_back(bench::perStep(iters, prims.backward));
      bench::settle();
      if (haveTorch) {
        torch.rep();
        bench::settle();
      }
    }
    tTorch = torch.bestTimes();
    if (haveTorch)
      torch.quit();
    std::filesystem::remove(dataFile);

    std::printf("\n%s (compile:", cell.c_str());
    for (const Variant &side : sides)
      std::printf("%s %s %.2f s", &side == &sides[0] ? "" : ",", side.label.c_str(),
                  side.train.compileSeconds);
    double first = sides[0].train.losses.front();
    std::printf(")\nloss at step 1:");
    for (const Variant &side : sides)
      std::printf("%s %s %.7g", &side == &sides[0] ? "" : ",", side.label.c_str(),
                  side.train.losses.front());
    if (haveTorch && !bench::printLossAgreement(first, torch.firstLoss))
      rc = 1;
    std::printf("; at step %d: attnc fused %.7g", warmup, sides[0].train.losses[warmup - 1]);
    if (haveTorch)
      std::printf(", PyTorch %.7g", torch.warmLoss);
    std::printf("\n");
    std::printf("workspace reuse (fused backward): %zu hits, %zu recomputed\n",
                ::attn::cpu::recurrentWorkspaceHits() - hits,
                ::attn::cpu::recurrentWorkspaceMisses() - misses);
    for (const Variant &side : sides)
      std::printf("  %-22s: %9.2f ms/step  %s\n", side.label.c_str(), median(side.times) * 1e3,
                  spread(side.times).c_str());
    double mTorch = haveTorch ? median(tTorch) : 0;
    for (const Variant &side : sides) {
      std::printf("  %s: ", side.label.c_str());
      calibration->printRates("step", side.train.flops.at("train_step"), median(side.times),
                              &side == &sides[0] ? mTorch : 0);
    }
    double primForward = median(tForward), primBackward = median(tBackward);
    double primSeconds = primForward + primBackward;
    std::printf("  ceiling, oneDNN's %s primitives alone (forward training %.2f + backward %.2f "
                "ms, nothing around them): %.2f ms, %s; the fused step spends %.0f%% of its time "
                "in them\n",
                cell.c_str(), primForward * 1e3, primBackward * 1e3, primSeconds * 1e3,
                calibration->rate(prims.flops, primSeconds).c_str(),
                100.0 * primSeconds / median(sides[0].times));
    if (haveTorch) {
      std::printf("  %-22s: %9.2f ms/step  %s, at its best\n", "PyTorch", mTorch * 1e3,
                  spread(tTorch).c_str());
      torch.printAllocators("    ", 1e3, "ms");
      std::printf("  (torch %s, eager nn.%s + nn.Linear, torch.optim.Adam)\n",
                  torch.version.c_str(), cell == "lstm" ? "LSTM" : "GRU");
      std::printf("%s pytorch/attnc-fused time ratio: %.2f\n", cell.c_str(),
                  mTorch / median(sides[0].times));
      // What the 2x target asks of the fused step, against the ceiling above.
      std::printf("  2x PyTorch would be %.2f ms/step: %s\n", mTorch / 2 * 1e3,
                  calibration->rate(sides[0].train.flops.at("train_step"), mTorch / 2).c_str());
    } else {
      std::printf("note: no PyTorch comparison: %s\n", torch.note.c_str());
    }
    std::string workload = (cell == "lstm" ? "LSTM" : "GRU") + std::string(" train step (fused)");
    bench::printTableRow(*calibration, workload, sides[0].train.flops.at("train_step"),
                         median(sides[0].times), &torch, {2, 85});
    if (bf16) { // (docs/precision.md)
      TrainStepProgram bf16Train = compileVariant(text, /*recurrence=*/true, /*hoist=*/true,
                                                  "bench_" + cell + "_bf16", "bf16");
      if (!bench::compareBf16Step(
              workload, timing, bf16Train, [&] { step(bf16Train); }, sides[0].train,
              [&] { step(sides[0].train); }, torchBf16, {2, 0}))
        rc = 1;
      // The bf16 ceiling: oneDNN's bf16 primitives alone, in turns with the f32 ones.
      Primitives prims16 = makePrimitives(cell, z, /*bf16=*/true);
      auto both = [](Primitives &p) {
        return [&p] {
          p.forward();
          p.backward();
        };
      };
      for (int i = 0; i < warmup; ++i)
        both(prims16)();
      std::vector<double> t16, t32;
      for (int r = 0; r < reps; ++r) {
        t16.push_back(bench::perStep(iters, both(prims16)));
        t32.push_back(bench::perStep(iters, both(prims)));
        bench::settle();
      }
      std::printf("  ceiling, oneDNN's bf16 %s primitives alone (forward training + backward): "
                  "%.2f ms against their f32 forms' %.2f ms: %.2fx\n",
                  cell.c_str(), median(t16) * 1e3, median(t32) * 1e3, median(t32) / median(t16));
    }
  }
  return rc;
}
