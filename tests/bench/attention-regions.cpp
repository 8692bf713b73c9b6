// Benchmark: a researcher's attention on the flash kernels. Causal self-attention with score and
// mask regions written in attn IR (ALiBi with a learned slope, one for all heads or one per
// head, softcapping, a sliding window as a mask region), compiled as `attnc train` compiles them
// (attn-autodiff, attn-to-onednn's _regions kernels with the regions as tile functions, the JIT),
// against the plain scaled dot product compiled the same way (the FlashAttention-2 kernels). Not a
// test; not run by ctest.
//
//   ninja -C build attn-bench-attention-regions
//   OMP_NUM_THREADS=1 build/bin/attn-bench-attention-regions [--small] [--only NAME]
//                                                            [--warmup N] [--reps N]
//
// Shapes (f32, causal, D = Dv = 64): B8 H8 T=S=512 and B1 H8 T=S=4096 (--small: the first);
// --only: the variants whose name starts so (dot, alibi, alibi_heads, softcap, window, t5), with
// the plain kernel's turns.
// @loss = sum(out * g) is the forward, @loss_grad forward and backward. The goals: every
// region at >= 85% of the plain kernel's speed, forward and forward + backward, and the window
// of 256 at S = 4096 >= 6x faster than full causal attention. FLOPs are the useful ones, over
// the (query, key) pairs each variant allows: 4 D per pair forward, 8 D more backward; the
// fraction of peak divides by oneDNN's f32 GEMM measured in this run. Timing: warm-up, then
// repetitions alternating the variant and the plain kernel; medians. There is no PyTorch side:
// PyTorch 1.13 has no fused attention with score modifications on the CPU (FlexAttention came
// with 2.5), and its composite (the [T, S] scores in memory) is what attention-kernels already
// compares the plain kernel against.

#include "BenchSupport.h"

#include "compiler/Transforms/Passes.h"

#include "attn/Random.h"
#include "attn/Tensor.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t B, H, S, D;
};

// A score region's body after `%dot` (the product sum(q * k)) as `%e`, its captures, and an
// optional mask region's body yielding `%in`.
struct Variant {
  const char *name;
  const char *score; // reads %dot, %i, %j and the captures; defines %e
  enum Slope { kNone, kOne, kPerHead } slope; // captures a learned %s: one, or one per head
  int64_t window; // > 0: the mask region keeps keys at most window - 1 back
  // > 0: also a learned table "rel" [H, columns] (T5's relative bias), captured as its
  // columns %t0, %t1, ... (one per head each), as the expressions' rel[h, index] is
  int64_t columns = 0;
};

// T5's bias over 17 distances (i - j clipped at 16: the attention is causal), read as the
// importer builds rel[h, min(i - j, 16)] (ScoreExpr.cpp): column 0 plus each step up to
// column c where the index passes c - 1/2, the terms summed as a tree.
std::string tableScore(int64_t columns) {
  std::ostringstream s;
  s << "    %sc = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n"
    << "    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
    << "    %top = attn.constant dense<" << columns - 1 << ".0> : tensor<f32>\n"
    << "    %nij = attn.neg %ij : tensor<f32>\n"
    << "    %ntop = attn.neg %top : tensor<f32>\n"
    << "    %nidx = attn.maximum %nij, %ntop : tensor<f32>, tensor<f32>\n"
    << "    %idx = attn.neg %nidx : tensor<f32>\n";
  std::vector<std::string> terms = {"%t0"};
  for (int64_t c = 1; c < columns; ++c) {
    std::string n = std::to_string(c), previous = "%t" + std::to_string(c - 1);
    s << "    %th" << n << " = attn.constant dense<" << c - 0.5 << "> : tensor<f32>\n"
      << "    %d" << n << " = attn.sub %idx, %th" << n << " : tensor<f32>, tensor<f32>\n"
      << "    %p" << n << " = attn.step %d" << n << " : tensor<f32>\n"
      << "    %g" << n << " = attn.sub %t" << n << ", " << previous
      << " : tensor<f32>, tensor<f32>\n"
      << "    %m" << n << " = attn.mul %p" << n << ", %g" << n << " : tensor<f32>, tensor<f32>\n";
    terms.push_back("%m" + n);
  }
  for (int level = 0; terms.size() > 1; ++level) {
    std::vector<std::string> sums;
    for (size_t k = 0; k + 1 < terms.size(); k += 2) {
      std::string sum = "%s" + std::to_string(level) + "_" + std::to_string(k);
      s << "    " << sum << " = attn.add " << terms[k] << ", " << terms[k + 1]
        << " : tensor<f32>, tensor<f32>\n";
      sums.push_back(sum);
    }
    if (terms.size() % 2)
      sums.push_back(terms.back());
    terms = sums;
  }
  s << "    %e = attn.add %sc, " << terms.front() << " : tensor<f32>, tensor<f32>\n";
  return s.str();
}
const std::string kTableScore = tableScore(17);

const Variant kVariants[] = {
    {"dot", "    %e = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n", Variant::kNone, 0},
    {"alibi",
     "    %sc = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n"
     "    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
     "    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>\n"
     "    %e = attn.sub %sc, %bias : tensor<f32>, tensor<f32>\n",
     Variant::kOne, 0},
    {"alibi_heads",
     "    %sc = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n"
     "    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
     "    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>\n"
     "    %e = attn.sub %sc, %bias : tensor<f32>, tensor<f32>\n",
     Variant::kPerHead, 0},
    {"softcap 30",
     "    %sc = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n"
     "    %inv = attn.constant dense<0.0333333351> : tensor<f32>\n"
     "    %x = attn.mul %sc, %inv : tensor<f32>, tensor<f32>\n"
     "    %t = attn.tanh %x : tensor<f32>\n"
     "    %cap = attn.constant dense<30.0> : tensor<f32>\n"
     "    %e = attn.mul %t, %cap : tensor<f32>, tensor<f32>\n",
     Variant::kNone, 0},
    {"window 256", "    %e = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n", Variant::kNone, 256},
    // ALiBi per head in the window: the mask reads no per-head capture, so its tile verdicts
    // are taken once for all heads.
    {"window 256 + alibi_heads",
     "    %sc = attn.mul %dot, %c : tensor<f32>, tensor<f32>\n"
     "    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
     "    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>\n"
     "    %e = attn.sub %sc, %bias : tensor<f32>, tensor<f32>\n",
     Variant::kPerHead, 256},
    {"t5 table 17", kTableScore.c_str(), Variant::kNone, 0, 17},
};

std::string tensorType(std::initializer_list<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

// @loss = sum(o * g), the fused causal attention of q, k, v with the variant's regions.
std::string module(const Shape &c, const Variant &v) {
  std::string x = tensorType({c.B, c.H, c.S, c.D}), m = tensorType({c.B, c.S}),
              lse = tensorType({c.B, c.H, c.S}), row = tensorType({c.D});
  std::ostringstream s;
  s << "func.func @loss() -> (tensor<f32> {attn.name = \"loss\"}) {\n";
  for (const char *p : {"q", "k", "v", "g"})
    s << "  %" << p << " = attn.param \"" << p << "\" {scale = 1.0 : f32} : " << x << "\n";
  // The slope's tensor: one for all heads, or one per head (each head reads its element).
  std::string slope = v.slope == Variant::kPerHead ? tensorType({c.H}) : "tensor<f32>";
  if (v.slope)
    s << "  %slope = attn.param \"" << (v.slope == Variant::kPerHead ? "slopes" : "slope")
      << "\" {scale = 1.0 : f32} : " << slope << "\n";
  // A table's columns: slices of "rel" [H, N], each captured per head.
  std::string columns, columnTypes, columnArgs;
  if (v.columns) {
    std::string table = tensorType({c.H, v.columns}), column = tensorType({c.H});
    s << "  %rel = attn.param \"rel\" {scale = 1.0 : f32} : " << table << "\n";
    for (int64_t n = 0; n < v.columns; ++n) {
      s << "  %rs" << n << " = attn.slice %rel {offsets = array<i64: 0, " << n
        << ">, sizes = array<i64: " << c.H << ", 1>} : " << table << "\n"
        << "  %rc" << n << " = attn.reshape %rs" << n << " : " << tensorType({c.H, 1}) << " -> "
        << column << "\n";
      columns += (n ? ", %rc" : "%rc") + std::to_string(n);
      columnTypes += (n ? ", " : "") + column;
      columnArgs += ", %t" + std::to_string(n) + ": tensor<f32>";
    }
  }
  s << "  %m = attn.constant dense<1.0> : " << m << "\n"
    << "  %o, %lse = attn.fused_attention %q, %k, %v, %m "
    << (v.slope ? "captures(%slope : " + slope + ") " : "")
    << (v.columns ? "captures(" + columns + " : " + columnTypes + ") " : "")
    << "{causal = true} : " << x << ", " << x << ", " << x << ", " << m << " -> " << x << ", "
    << lse << " {\n"
    << "  ^bb0(%qi: " << row << ", %kj: " << row << ", %i: tensor<f32>, %j: tensor<f32>"
    << (v.slope ? ", %s: tensor<f32>" : "") << columnArgs << "):\n"
    << "    %pr = attn.mul %qi, %kj : " << row << ", " << row << "\n"
    << "    %dot = attn.reduce_sum %pr {axes = array<i64: 0>} : " << row << "\n"
    << "    %c = attn.constant dense<0.125> : tensor<f32>\n"
    << v.score << "    attn.yield %e : tensor<f32>\n  }";
  if (v.window > 0)
    s << " mask {\n  ^bb0(%i: tensor<f32>, %j: tensor<f32>" << (v.slope ? ", %ms: tensor<f32>" : "")
      << "):\n"
      << "    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
      << "    %room = attn.constant dense<" << v.window - 0.5 << "> : tensor<f32>\n"
      << "    %left = attn.sub %room, %ij : tensor<f32>, tensor<f32>\n"
      << "    %in = attn.step %left : tensor<f32>\n"
      << "    attn.yield %in : tensor<f32>\n  }";
  s << "\n  %og = attn.mul %o, %g : " << x << ", " << x << "\n"
    << "  %l = attn.reduce_sum %og {axes = array<i64: 0, 1, 2, 3>} : " << x << "\n"
    << "  return %l : tensor<f32>\n}\n";
  return s.str();
}

::attn::Tensor random(std::vector<int64_t> shape, ::attn::Rng &rng) {
  ::attn::Tensor t(ATTN_F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = (float)(2 * rng.nextDouble() - 1);
  return t;
}

// One variant compiled, its parameters the same tensors for every variant of a shape.
struct Compiled {
  std::unique_ptr<::attn::driver::Session> session;
  std::unique_ptr<::attn::driver::Model> model;

  Compiled(const Shape &c, const Variant &v, std::map<std::string, ::attn::Tensor> &tensors) {
    session = bench::newSession(/*fuse=*/false);
    auto parsed = mlir::parseSourceString<mlir::ModuleOp>(module(c, v), &session->context());
    if (!parsed)
      bench::die(std::string("cannot parse the module of ") + v.name);
    mlir::PassManager pm(&session->context());
    pm.addPass(mlir::attn::createAttnAutodiff());
    if (mlir::failed(pm.run(*parsed)))
      bench::die(std::string("attn-autodiff failed on ") + v.name);
    session->setModule(std::move(parsed), std::string("attention_regions_") + v.name);
    model = session->loadModel(/*seed=*/1);
    if (!model)
      bench::die(std::string(v.name) + " does not compile");
    const attn_program_info &info = model->program->info();
    for (int i = 0; i < info.num_params; ++i)
      model->params[i] = tensors.at(info.params[i].name);
  }

  double run(bool withBackward) {
    const char *entry = withBackward ? "loss_grad" : "loss";
    std::vector<::attn::Tensor> out = model->program->call(entry, model->params, {});
    const attn_entry_info &info = model->program->entry(entry);
    for (int o = 0; o < info.num_outputs; ++o)
      if (std::string(info.outputs[o].name) == "loss")
        return out[o].data<float>()[0];
    return 0;
  }
};

// The (query, key) pairs a (batch, head) attends: causal, within the window when there is one.
double allowedPairs(int64_t S, int64_t window) {
  double pairs = 0;
  for (int64_t i = 0; i < S; ++i)
    pairs += (double)(window > 0 ? std::min(i + 1, window) : i + 1);
  return pairs;
}

} // namespace

int main(int argc, char **argv) {
  bench::programName = "attn-bench-attention-regions";
  bench::Timing timing{/*warmup=*/1, /*reps=*/3, /*iters=*/1};
  bool small = false;
  std::string only;
  for (bench::Args args(argc, argv, [] {
         std::fprintf(stderr, "usage: attn-bench-attention-regions [--small] [--only NAME] "
                              "[--warmup N] [--reps N]\n");
         std::exit(2);
       });
       args.next();) {
    if (args.flag == "--small")
      small = true;
    else if (args.flag == "--only")
      only = args.value();
    else if (!timing.parse(args))
      bench::die("unknown flag " + args.flag);
  }
  std::vector<Shape> shapes = {{8, 8, 512, 64}};
  if (!small)
    shapes.push_back({1, 8, 4096, 64});
  double peak = bench::onednnGemmGflops();
  int threads = bench::threadCount();
  std::printf("score and mask regions on the flash kernels, f32, causal: each variant against "
              "the plain scaled dot product\n");
  std::printf("%s; %s\ncalibration: oneDNN f32 GEMM 1024^3 %.1f GFLOP/s\n",
              bench::threadsNote().c_str(), timing.describe().c_str(), peak);
  for (const Shape &c : shapes) {
    ::attn::Rng rng(42);
    std::map<std::string, ::attn::Tensor> tensors;
    for (const char *p : {"q", "k", "v", "g"})
      tensors.emplace(p, random({c.B, c.H, c.S, c.D}, rng));
    tensors.emplace("slope", bench::scalar(0.01f));
    ::attn::Tensor slopes(ATTN_F32, {c.H});
    for (int64_t h = 0; h < c.H; ++h)
      slopes.data<float>()[h] = 0.02f / (float)(h + 1);
    tensors.emplace("slopes", slopes);
    ::attn::Tensor rel(ATTN_F32, {c.H, 17});
    for (int64_t n = 0; n < rel.numel(); ++n)
      rel.data<float>()[n] = 0.1f * (float)((n * 7) % 11) - 0.5f;
    tensors.emplace("rel", rel);
    Compiled plain(c, kVariants[0], tensors);
    for (bool withBackward : {false, true}) {
      const char *mode = withBackward ? "forward+backward" : "forward";
      double plainSeconds = 0;
      for (const Variant &v : kVariants) {
        if (!only.empty() && std::string(v.name).rfind(only, 0) != 0)
          continue;
        Compiled variant(c, v, tensors);
        double loss = variant.run(withBackward);
        std::vector<double> mine, base;
        for (int w = 0; w < timing.warmup; ++w) {
          variant.run(withBackward);
          plain.run(withBackward);
        }
        for (int r = 0; r < timing.reps; ++r) {
          bench::settle();
          mine.push_back(bench::perStep(timing.iters, [&] { variant.run(withBackward); }));
          bench::settle();
          base.push_back(bench::perStep(timing.iters, [&] { plain.run(withBackward); }));
        }
        double seconds = bench::median(mine), baseSeconds = bench::median(base);
        if (!plainSeconds)
          plainSeconds = baseSeconds;
        double pairs = allowedPairs(c.S, v.window) * (double)(c.B * c.H);
        double flops = 2 * pairs * (double)(2 * c.D) + (withBackward ? 2 * pairs * 4 * c.D : 0);
        std::printf("B%lld H%lld S%lld D%lld causal, %-10s %s: loss %.7g, %.3f ms, %.1f GFLOP/s "
                    "= %.1f%% of peak; plain kernel %.3f ms in the same turns: ",
                    (long long)c.B, (long long)c.H, (long long)c.S, (long long)c.D, v.name, mode,
                    loss, seconds * 1e3, flops / seconds / 1e9, 100 * flops / seconds / 1e9 / peak,
                    baseSeconds * 1e3);
        if (v.window > 0)
          std::printf("%.2fx faster (goal at S 4096: >= 6x)\n", baseSeconds / seconds);
        else
          std::printf("%.0f%% of its speed (goal >= 85%%)\n", 100 * baseSeconds / seconds);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
