// attn::countFlops and the ops' FlopCountOpInterface: the counts of a hand-written module
// against the products it spells out.
#include "dialect/AttnDialect.h"
#include "dialect/FlopCount.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace {

mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &context, const char *text) {
  context.loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect>();
  return mlir::parseSourceString<mlir::ModuleOp>(text, &context);
}

double flopsOf(mlir::ModuleOp module, llvm::StringRef name) {
  return mlir::attn::countFlops(module.lookupSymbol<mlir::func::FuncOp>(name));
}

TEST(FlopCount, MatmulDenseScanAndCalls) {
  mlir::MLIRContext context;
  auto module = parse(context, R"mlir(
func.func @mm(%a: tensor<4x10x16xf32>, %b: tensor<4x12x16xf32>) -> tensor<4x10x12xf32> {
  %y = attn.matmul %a, %b {transpose_rhs = true} : tensor<4x10x16xf32>, tensor<4x12x16xf32>
  return %y : tensor<4x10x12xf32>
}
func.func @dense(%x: tensor<8x3x16xf32>, %w: tensor<16x5xf32>) -> tensor<8x3x5xf32> {
  %y = attn.dense %x, %w : tensor<8x3x16xf32>, tensor<16x5xf32>
  return %y : tensor<8x3x5xf32>
}
func.func @scan(%h0: tensor<4x8xf32>, %x: tensor<4x7x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %h, %hs = attn.scan inits(%h0) over(%x) {axis = 1 : i64}
      : (tensor<4x8xf32>, tensor<4x7x8xf32>) -> (tensor<4x8xf32>, tensor<4x7x8xf32>) {
  ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x8xf32>):
    %p = attn.matmul %hp, %w : tensor<4x8xf32>, tensor<8x8xf32>
    %n = attn.add %p, %xt : tensor<4x8xf32>, tensor<4x8xf32>
    attn.yield %n, %n : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}
func.func @caller(%a: tensor<4x10x16xf32>, %b: tensor<4x12x16xf32>) -> tensor<4x10x12xf32> {
  %y = func.call @mm(%a, %b) : (tensor<4x10x16xf32>, tensor<4x12x16xf32>) -> tensor<4x10x12xf32>
  %z = func.call @mm(%a, %b) : (tensor<4x10x16xf32>, tensor<4x12x16xf32>) -> tensor<4x10x12xf32>
  return %z : tensor<4x10x12xf32>
}
func.func @lstm(%x: tensor<4x16x2xf32>, %h0: tensor<4x8xf32>, %wi: tensor<2x32xf32>, %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<4x8xf32> {
  %hs, %h, %c = attn.lstm %x, %h0, %h0, %wi, %wh, %b
      : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
  return %h : tensor<4x8xf32>
}
)mlir");
  ASSERT_TRUE(module);
  EXPECT_EQ(flopsOf(*module, "mm"), 2.0 * 4 * 10 * 12 * 16);
  EXPECT_EQ(flopsOf(*module, "dense"), 2.0 * 8 * 3 * 5 * 16);
  // The body's [4, 8] x [8, 8] once per step, 7 steps; the add is not a product.
  EXPECT_EQ(flopsOf(*module, "scan"), 7 * 2.0 * 4 * 8 * 8);
  EXPECT_EQ(flopsOf(*module, "caller"), 2 * flopsOf(*module, "mm"));
  // Per step and row: x_t [2] x w_ih [2, 32] and h [8] x w_hh [8, 32].
  EXPECT_EQ(flopsOf(*module, "lstm"), 2.0 * 4 * 16 * (2 * 32 + 8 * 32));
}

} // namespace
