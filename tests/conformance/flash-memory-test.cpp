// Flash attention's memory: a training step's @loss_grad over scaled dot-product attention at
// T = S = 8192 (B = H = 1, D = 64), fused by attn-fuse-attention before attn-autodiff as
// `attnc train` compiles, never holds a buffer of T S elements (256 MiB): the runtime
// allocator's peak of large blocks stays below 16 times q + k + v + output (8 MiB together).
// Unfused, the scores, weights and their gradients alone would be over 1 GiB.
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

constexpr int64_t kLength = 8192, kWidth = 64;

const char *kModule = R"mlir(
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

TEST(FlashAttentionMemory, TrainingNeverHoldsTheScores) {
  attn::driver::Session session;
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &session.context());
  ASSERT_TRUE(module);
  mlir::PassManager pm(&session.context());
  attn::pipelines::buildFusion(pm);
  pm.addPass(mlir::attn::createAttnAutodiff());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  bool fused = false;
  module->walk([&](mlir::Operation *op) {
    fused = fused || op->getName().getStringRef() == "attn.flash_attention_grad";
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
  size_t operands = 4 * kLength * kWidth * sizeof(float); // q, k, v, output
  size_t scores = kLength * kLength * sizeof(float);
  std::printf("peak of large blocks during @loss_grad: %.1f MiB (q + k + v + output: %.1f MiB, "
              "one [T, S] buffer: %.1f MiB)\n",
              peak / 1048576.0, operands / 1048576.0, scores / 1048576.0);
  EXPECT_LT(peak, 16 * operands) << "peak " << peak << " bytes";
  EXPECT_LT(peak, scores / 4);
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(std::isfinite(out[0].data<float>()[0]));
}

} // namespace
