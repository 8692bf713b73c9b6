// Fused attention's memory: a training step's @loss_grad over scaled dot-product attention at
// T = S = 8192 (B = H = 1, D = 64), fused by attn-fuse-attention before attn-autodiff as
// `attnc train` compiles, never holds a buffer of T S elements (256 MiB): the runtime
// allocator's peak of large blocks stays below 16 times q + k + v + output (8 MiB together).
// Unfused, the scores, weights and their gradients alone would be over 1 GiB. The same at
// T = S = 4096, D = 16 for scores and masks on the flash kernels' _regions form (ALiBi,
// softcapping, a sliding window, T5's relative bias) and for a score the generated kernels
// compute.
#include "compiler/Conversion/Passes.h"
#include "compiler/Driver/Session.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"

#include "attn/Alloc.h"
#include "attn/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace {

// Scaled dot-product attention at T = S = 8192, D = 64: the FlashAttention-2 kernels.
const char *kDotModule = R"mlir(
func.func @loss() -> (tensor<f32> {attn.name = "loss"}) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<1x1x8192x64xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<1x1x8192x64xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<1x1x8192x64xf32>
  %o, %w = attn.scaled_dot_product_attention %q, %k, %v {causal = true}
      : tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>
  %sq = attn.mul %o, %o : tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>
  %l = attn.reduce_sum %sq {axes = array<i64: 0, 1, 2, 3>} : tensor<1x1x8192x64xf32>
  return %l : tensor<f32>
}
)mlir";

// The captures a module's regions take: none, a learned scalar %s, a learned row %wr, or a
// learned table of kColumns distances %t0, %t1, ... (T5's relative bias, one head).
enum class Capture { none, slope, row, table };
constexpr int kColumns = 5;

// Causal fused attention at T = S = 4096, D = 16 with the score region's body `score` (it
// defines %e), the `capture`, and `mask` as the mask region's body over %i, %j (yielding %in)
// when not empty.
std::string regionModule(const std::string &score, Capture capture, const std::string &mask = "") {
  const std::string x = "tensor<1x1x4096x16xf32>";
  std::string param, captures, arg;
  if (capture == Capture::slope) {
    param = "  %slope = attn.param \"slope\" {scale = 0.1 : f32} : tensor<f32>\n";
    captures = "captures(%slope : tensor<f32>) ";
    arg = ", %s: tensor<f32>";
  } else if (capture == Capture::row) {
    param = "  %w = attn.param \"w\" {scale = 1.0 : f32} : tensor<16xf32>\n";
    captures = "captures(%w : tensor<16xf32>) ";
    arg = ", %wr: tensor<16xf32>";
  } else if (capture == Capture::table) {
    std::string names, types;
    for (int n = 0; n < kColumns; ++n) {
      std::string c = std::to_string(n);
      param += "  %rel" + c + " = attn.param \"rel" + c + "\" {scale = 0.5 : f32} : tensor<f32>\n";
      names += (n ? ", %rel" : "%rel") + c;
      types += n ? ", tensor<f32>" : "tensor<f32>";
      arg += ", %t" + c + ": tensor<f32>";
    }
    captures = "captures(" + names + " : " + types + ") ";
  }
  std::string text =
      "func.func @loss() -> (tensor<f32> {attn.name = \"loss\"}) {\n"
      "  %q = attn.param \"q\" {scale = 1.0 : f32} : " +
      x +
      "\n"
      "  %k = attn.param \"k\" {scale = 1.0 : f32} : " +
      x +
      "\n"
      "  %v = attn.param \"v\" {scale = 1.0 : f32} : " +
      x + "\n" + param +
      "  %m = attn.constant dense<1.0> : tensor<1x4096xf32>\n"
      "  %o, %lse = attn.fused_attention %q, %k, %v, %m " +
      captures + "{causal = true} : " + x + ", " + x + ", " + x + ", tensor<1x4096xf32> -> " + x +
      ", tensor<1x1x4096xf32> {\n"
      "  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>" +
      arg + "):\n" + score + "    attn.yield %e : tensor<f32>\n  }";
  if (!mask.empty())
    text += " mask {\n  ^bb0(%i: tensor<f32>, %j: tensor<f32>" + arg + "):\n" + mask +
            "    attn.yield %in : tensor<f32>\n  }";
  return text + "\n  %sq = attn.mul %o, %o : " + x + ", " + x +
         "\n"
         "  %l = attn.reduce_sum %sq {axes = array<i64: 0, 1, 2, 3>} : " +
         x +
         "\n"
         "  return %l : tensor<f32>\n}\n";
}

const char *kDot = "    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>\n"
                   "    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>\n";

// The dot product less a learned ALiBi slope times the distance.
const std::string kAlibi = std::string(kDot) +
                           "    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
                           "    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>\n"
                           "    %e = attn.sub %d, %bias : tensor<f32>, tensor<f32>\n";
// The dot product softcapped at 5 (its derivative reads the product).
const std::string kSoftcap = std::string(kDot) +
                             "    %inv = attn.constant dense<0.2> : tensor<f32>\n"
                             "    %x = attn.mul %d, %inv : tensor<f32>, tensor<f32>\n"
                             "    %t = attn.tanh %x : tensor<f32>\n"
                             "    %cap = attn.constant dense<5.0> : tensor<f32>\n"
                             "    %e = attn.mul %t, %cap : tensor<f32>, tensor<f32>\n";
// Keys at most 255 positions back.
const char *kWindow = "    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>\n"
                      "    %room = attn.constant dense<255.5> : tensor<f32>\n"
                      "    %left = attn.sub %room, %ij : tensor<f32>, tensor<f32>\n"
                      "    %in = attn.step %left : tensor<f32>\n";
// The dot product plus T5's bias rel[min(i - j, kColumns - 1)] (the attention is causal), as
// the importer builds a table lookup: column 0 plus each step up to column c where the index
// passes c - 1/2. The lowering tabulates it per tile diagonal.
std::string tableScore() {
  std::string s = std::string(kDot) + "    %ij = attn.sub %i, %j : tensor<f32>, tensor<f32>\n" +
                  "    %e0 = attn.add %d, %t0 : tensor<f32>, tensor<f32>\n";
  for (int n = 1; n < kColumns; ++n) {
    std::string c = std::to_string(n), previous = std::to_string(n - 1);
    s += "    %th" + c + " = attn.constant dense<" + std::to_string(n - 0.5) + "> : tensor<f32>\n" +
         "    %x" + c + " = attn.sub %ij, %th" + c + " : tensor<f32>, tensor<f32>\n" + "    %p" +
         c + " = attn.step %x" + c + " : tensor<f32>\n" + "    %g" + c + " = attn.sub %t" + c +
         ", %t" + previous + " : tensor<f32>, tensor<f32>\n" + "    %m" + c + " = attn.mul %p" + c +
         ", %g" + c + " : tensor<f32>, tensor<f32>\n" + "    %e" + (n + 1 < kColumns ? c : "") +
         " = attn.add %e" + previous + ", %m" + c + " : tensor<f32>, tensor<f32>\n";
  }
  return s;
}
// A product weighted per feature (it reads q and k beyond the dot product): the generated
// kernels, whose scratch is one row of S.
const char *kWeighted = "    %qk = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>\n"
                        "    %p = attn.mul %qk, %wr : tensor<16xf32>, tensor<16xf32>\n"
                        "    %e = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>\n";

// Whether `module`'s training backward, lowered by attn-to-onednn, calls a function whose name
// starts with `kernel`.
bool backwardCalls(mlir::ModuleOp module, llvm::StringRef kernel) {
  mlir::OwningOpRef<mlir::ModuleOp> lowered = module.clone();
  mlir::PassManager pm(module.getContext());
  pm.addPass(mlir::attn::createAttnToOneDNN());
  if (mlir::failed(pm.run(*lowered)))
    return false;
  bool calls = false;
  lowered->walk(
      [&](mlir::func::CallOp call) { calls = calls || call.getCallee().starts_with(kernel); });
  return calls;
}

// Compiles `text` as `attnc train` does (fusion, then autodiff), checks that its backward
// runs `kernel`, runs @loss_grad once and checks the allocator's peak of large blocks against
// q + k + v + output and one [T, S] buffer.
void expectNoScoreBuffer(const std::string &text, int64_t length, int64_t width,
                         llvm::StringRef kernel) {
  attn::driver::Session session;
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &session.context());
  ASSERT_TRUE(module);
  mlir::PassManager pm(&session.context());
  attn::pipelines::buildFusion(pm);
  pm.addPass(mlir::attn::createAttnAutodiff());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  bool fused = false;
  module->walk([&](mlir::Operation *op) {
    fused = fused || op->getName().getStringRef() == "attn.fused_attention_grad";
  });
  ASSERT_TRUE(fused) << "the attention was not fused";
  ASSERT_TRUE(backwardCalls(*module, kernel)) << "the backward does not call " << kernel.str();
  session.setModule(std::move(module), "flash_memory");
  std::unique_ptr<attn::driver::Model> model = session.loadModel(/*seed=*/3);
  ASSERT_TRUE(model);

  attn::bufferTrim();
  attn::resetBufferPeak();
  size_t before = attn::bufferUse().live;
  std::vector<attn::Tensor> out = model->program->call("loss_grad", model->params, {});
  size_t peak = attn::bufferUse().peak - before;
  size_t operands = 4 * length * width * sizeof(float); // q, k, v, output
  size_t scores = length * length * sizeof(float);
  std::printf("peak of large blocks during @loss_grad: %.1f MiB (q + k + v + output: %.1f MiB, "
              "one [T, S] buffer: %.1f MiB)\n",
              peak / 1048576.0, operands / 1048576.0, scores / 1048576.0);
  EXPECT_LT(peak, 16 * operands) << "peak " << peak << " bytes";
  EXPECT_LT(peak, scores / 4);
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(std::isfinite(out[0].data<float>()[0]));
}

TEST(FlashAttentionMemory, TrainingNeverHoldsTheScores) {
  expectNoScoreBuffer(kDotModule, 8192, 64, "attn_rt_flash_attention_backward");
}

// The flash kernels' _regions form: a score region with a learned capture, one whose
// derivative reads the product, a mask region (with and without the score's capture), and a
// learned table of relative biases.
TEST(FlashAttentionMemory, ScoreRegionsNeverHoldTheScores) {
  expectNoScoreBuffer(regionModule(kAlibi, Capture::slope), 4096, 16,
                      "attn_rt_flash_attention_regions_backward");
  expectNoScoreBuffer(regionModule(kSoftcap, Capture::none), 4096, 16,
                      "attn_rt_flash_attention_regions_backward");
  expectNoScoreBuffer(regionModule(kAlibi, Capture::slope, kWindow), 4096, 16,
                      "attn_rt_flash_attention_regions_backward");
  expectNoScoreBuffer(regionModule(tableScore(), Capture::table), 4096, 16,
                      "attn_rt_flash_attention_regions_backward");
}

TEST(FlashAttentionMemory, GeneratedKernelsNeverHoldTheScores) {
  expectNoScoreBuffer(regionModule(kWeighted, Capture::row), 4096, 16,
                      "attn_fused_attention_grad_");
}

} // namespace
