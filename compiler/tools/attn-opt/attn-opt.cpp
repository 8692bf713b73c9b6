// attn-opt: mlir-opt with the attn dialect, attnc's passes and the upstream dialects attnc
// uses. It drives the lit tests (tests/lit).
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  attn::pipelines::registerDialects(registry);
  attn::pipelines::registerPassesAndPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
}
