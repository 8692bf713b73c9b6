// Fused attention's memory: a training step's @loss_grad over scaled dot-product attention at
// T = S = 8192 (B = H = 1, D = 64), fused by attn-fuse-attention before attn-autodiff as
// `attnc train` compiles, never holds a buffer of T S elements (256 MiB): the runtime
// allocator's peak of large blocks stays below 16 times q + k + v + output (8 MiB together).
// Unfused, the scores, weights and their gradients alone would be over 1 GiB. The same for a
// score the generated kernels compute (ALiBi, T = S = 4096, D = 16).
#include "compiler/Driver/Session.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"

#include "attn/Alloc.h"
#include "attn/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

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

// A score the lowering does not recognise (dot product less a learned ALiBi slope times the
// distance) at T = S = 4096, D = 16: the generated kernels, whose scratch is one row of S.
const char *kAlibiModule = R"mlir(
func.func @loss() -> (tensor<f32> {attn.name = "loss"}) {
  %q = attn.param "q" {scale = 1.0 : f32} : tensor<1x1x4096x16xf32>
  %k = attn.param "k" {scale = 1.0 : f32} : tensor<1x1x4096x16xf32>
  %v = attn.param "v" {scale = 1.0 : f32} : tensor<1x1x4096x16xf32>
  %slope = attn.param "slope" {scale = 0.1 : f32} : tensor<f32>
  %m = attn.constant dense<1.0> : tensor<1x4096xf32>
  %o, %lse = attn.fused_attention %q, %k, %v, %m captures(%slope : tensor<f32>) {causal = true}
      : tensor<1x1x4096x16xf32>, tensor<1x1x4096x16xf32>, tensor<1x1x4096x16xf32>,
        tensor<1x4096xf32> -> tensor<1x1x4096x16xf32>, tensor<1x1x4096xf32> {
  ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>, %s: tensor<f32>):
    %p = attn.mul %qi, %kj : tensor<16xf32>, tensor<16xf32>
    %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<16xf32>
    %dist = attn.sub %i, %j : tensor<f32>, tensor<f32>
    %bias = attn.mul %dist, %s : tensor<f32>, tensor<f32>
    %e = attn.sub %d, %bias : tensor<f32>, tensor<f32>
    attn.yield %e : tensor<f32>
  }
  %sq = attn.mul %o, %o : tensor<1x1x4096x16xf32>, tensor<1x1x4096x16xf32>
  %l = attn.reduce_sum %sq {axes = array<i64: 0, 1, 2, 3>} : tensor<1x1x4096x16xf32>
  return %l : tensor<f32>
}
)mlir";

// Compiles `text` as `attnc train` does (fusion, then autodiff), runs @loss_grad once and checks
// the allocator's peak of large blocks against q + k + v + output and one [T, S] buffer.
void expectNoScoreBuffer(const char *text, int64_t length, int64_t width) {
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
  expectNoScoreBuffer(kDotModule, 8192, 64);
}

TEST(FlashAttentionMemory, GeneratedKernelsNeverHoldTheScores) {
  expectNoScoreBuffer(kAlibiModule, 4096, 16);
}

} // namespace
