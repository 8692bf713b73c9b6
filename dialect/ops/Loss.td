//===- Loss.td - training objectives -----------------------------------------------------===//
#ifndef ATTN_OPS_LOSS_TD
#define ATTN_OPS_LOSS_TD

include "dialect/AttnBase.td"

def Attn_MseOp : Attn_Op<"mse", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                                 DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "mean squared error";
  let description = [{
    `result = mean((prediction - target)^2)` over all elements, a rank-0 tensor. Both inputs
    have the same shape.

    ```mlir
    %l = attn.mse %y, %t : tensor<32x1xf32>, tensor<32x1xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$prediction, Attn_FloatTensor:$target);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$prediction `,` $target attr-dict `:` type($prediction) `,` type($target)";
}

def Attn_CrossEntropyOp : Attn_Op<"cross_entropy",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>,
     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "softmax cross-entropy with ignored positions and label smoothing";
  let description = [{
    `logits` is `[..., C]`, `labels` the matching `[...]` of class ids. With
    `p = softmax(logits)` and smoothing `e`, each position contributes
    `-(1 - e) log p[label] - (e / C) sum_c log p[c]`; positions whose label is `ignore_index`
    (or outside `[0, C)`) contribute nothing. The result (rank 0) is the mean over the
    contributing positions, 0 when there are none.

    ```mlir
    %l = attn.cross_entropy %logits, %labels {ignore_index = 0 : i64, label_smoothing = 0.1 : f32}
        : tensor<32x20x100xf32>, tensor<32x20xi32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$logits, Attn_IdTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-1">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` type($logits) `,` type($labels)";
}

def Attn_LabelCountOp : Attn_Op<"label_count",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "how many positions attn.cross_entropy averages over";
  let description = [{
    The number of positions of `labels` (any shape) whose label is in `[0, classes)` and not
    `ignore_index`: the `count` attn.cross_entropy with the same attributes divides by, as a
    rank-0 f32. Data-parallel training weighs each shard's mean loss and gradients by it so
    that the combined step equals one step on the whole batch (attn-loss-weight).

    ```mlir
    %n = attn.label_count %labels {classes = 15 : i64, ignore_index = 0 : i64} : tensor<64x33xi32>
    ```
  }];
  let arguments = (ins Attn_IdTensor:$labels, I64Attr:$classes,
                       DefaultValuedAttr<I64Attr, "-1">:$ignore_index);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` type($labels)";
  let hasVerifier = 1;
}

def Attn_CrossEntropyGradOp : Attn_Op<"cross_entropy_grad",
    [Pure, AllTypesMatch<["logits", "result"]>]> {
  let summary = "the gradient of attn.cross_entropy with respect to its logits";
  let description = [{
    `result = grad * (softmax(logits) - q) * valid / count`, where `q` is the smoothed
    one-hot target of each position, `valid` is 1 for contributing positions and `count`
    their number (see attn.cross_entropy). `grad` is the rank-0 gradient of the loss.

    ```mlir
    %d = attn.cross_entropy_grad %logits, %labels, %g {ignore_index = -1 : i64, label_smoothing = 0.0 : f32}
        : tensor<32x100xf32>, tensor<32xi32>, tensor<f32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$logits, Attn_IdTensor:$labels, Attn_FloatTensor:$grad,
                       DefaultValuedAttr<I64Attr, "-1">:$ignore_index,
                       DefaultValuedAttr<F32Attr, "0.0f">:$label_smoothing);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad attr-dict `:` type($logits) `,` type($labels) `,` type($grad)
  }];
  let builders = [
    OpBuilder<(ins "CrossEntropyOp":$forward, "::mlir::Value":$grad)>
  ];
}

#endif // ATTN_OPS_LOSS_TD
