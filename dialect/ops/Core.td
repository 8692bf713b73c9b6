//===- Core.td - parameters, constants, matmul, elementwise, shapes ----------------------===//
#ifndef ATTN_OPS_CORE_TD
#define ATTN_OPS_CORE_TD

include "dialect/AttnBase.td"

//===----------------------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------------------===//

def Attn_ParamOp : Attn_Op<"param", [Pure]> {
  let summary = "a named, trainable model parameter";
  let description = [{
    Reads the parameter `name`. Parameters are owned by the runtime, not by the IR: the
    `attn-params-to-args` pass turns every `attn.param` into an argument of each entry point,
    and the runtime initialises them with `init` (`zeros`, `ones`, `uniform` in
    `[-scale, scale]`, `normal` with standard deviation `scale`, `constant`: every element
    `scale`, a learned scalar's starting value; `alibi`: element `k` of `n` is
    `2^(-8 (k + 1) / n)`, ALiBi's slope of head `k`) from a seed.
    `trainable = false` marks state that is not learned (optimizer moments): autodiff
    computes no gradient for it, checkpoints save it all the same.

    ```mlir
    %w = attn.param "rnn.w_ax" {init = #attn.init<uniform>, scale = 0.25 : f32} : tensor<1x32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       DefaultValuedAttr<Attn_InitAttr, "::mlir::attn::Init::uniform">:$init,
                       DefaultValuedAttr<F32Attr, "0.1f">:$scale,
                       DefaultValuedAttr<BoolAttr, "true">:$trainable);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Attn_ConstantOp : Attn_Op<"constant",
    [Pure, ConstantLike, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = attn.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------------------===//

def Attn_MatmulOp : Attn_Op<"matmul", [Pure, Attn_RuntimeKernel, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                                       DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
                                       DeclareOpInterfaceMethods<Attn_PrecisionOpInterface,
                                           ["gainsFrom", "whyNotGains", "getBf16Factors"]>,
                                       DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "(batched) matrix product with optional transposes";
  let description = [{
    `result[b] = op(lhs[b]) x op(rhs[b])` where `op` transposes the last two dimensions when
    `transpose_lhs` / `transpose_rhs` is set. `lhs` is `[batch..., M, K]`, `rhs` is
    `[batch..., K, N]`, the result `[batch..., M, N]`. The batch dimensions of both sides must
    be equal, or one side has none (rank 2): it is then shared by every batch.

    `precision` (`attn-precision`): `bf16` rounds both factors to bfloat16 and accumulates in
    f32. The factors stay f32 tensors through autodiff and the decompositions; late in the
    pipeline `attn-round-bf16-factors` rounds each value once into a bf16 tensor that every
    bf16 product reading it shares, and the product then takes bf16 factors. The result is
    f32. `int8` (inference) as for `attn.dense`, where `rhs` is
    one `[K, N]` weight for every batch and `lhs` is not transposed (the tied output layer's
    product with the embedding table).

    ```mlir
    %y = attn.matmul %q, %k {transpose_rhs = true} : tensor<4x10x16xf32>, tensor<4x12x16xf32>
    // %y : tensor<4x10x12xf32>
    %z = attn.matmul %x, %w {precision = #attn.precision<bf16>} : tensor<64x256xf32>, tensor<256x1024xf32>
    ```
  }];
  let arguments = (ins Attn_FactorTensor:$lhs, Attn_FactorTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  // Products made by rewrites and gradient rules start unset (f32): attn-precision decides.
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transpose_lhs, CArg<"bool", "false">:$transpose_rhs), [{
      build($_builder, $_state, lhs, rhs, transpose_lhs, transpose_rhs, PrecisionAttr());
    }]>,
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs, "::mlir::BoolAttr":$transpose_lhs,
                   "::mlir::BoolAttr":$transpose_rhs), [{
      build($_builder, $_state, lhs, rhs, transpose_lhs, transpose_rhs, PrecisionAttr());
    }]>
  ];
}

def Attn_DenseOp : Attn_Op<"dense", [Pure, Attn_RuntimeKernel, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                                       DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
                                       DeclareOpInterfaceMethods<Attn_PrecisionOpInterface,
                                           ["gainsFrom", "whyNotGains", "getBf16Factors"]>,
                                     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "affine layer: input x weight + bias";
  let description = [{
    `result = input x weight + bias` over the last dimension: `input` is `[..., K]`, `weight`
    `[K, N]`, the optional `bias` `[N]`, the result `[..., N]`. `precision` as for
    `attn.matmul` (bf16 factors after `attn-round-bf16-factors`; the bias is f32, added in
    f32), or `int8` (inference): the weight quantised to
    int8 per output column (scale max|w[:, n]| / 127), each input row per call (max|x[m, :]| /
    127), the product summed in int32 and scaled back to f32. `attn-precision` gives int8 only
    to a dense layer whose weight is a parameter, whose int8 copy the kernel keeps; int8 has
    no gradient rule.

    ```mlir
    %y = attn.dense %x, %w, %b : tensor<32x16xf32>, tensor<16x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_FactorTensor:$input, Attn_FactorTensor:$weight,
                       Optional<Attn_FloatTensor>:$bias,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight, "::mlir::Value":$bias), [{
      build($_builder, $_state, input, weight, bias, PrecisionAttr());
    }]>
  ];
}

//===----------------------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------------------===//

class Attn_BinaryOp<string mnemonic, string formula, list<Trait> traits = [DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]>
    : Attn_InferredOp<mnemonic, "inferBroadcastType", traits> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = [{
    `result = }] # formula # [{`, elementwise, with NumPy broadcasting (see the dialect
    description).

    ```mlir
    %z = attn.}] # mnemonic # [{ %x, %b : tensor<32x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$lhs, Attn_FloatTensor:$rhs);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Attn_AddOp : Attn_BinaryOp<"add", "lhs + rhs">;
def Attn_SubOp : Attn_BinaryOp<"sub", "lhs - rhs">;
def Attn_MulOp : Attn_BinaryOp<"mul", "lhs * rhs">;
def Attn_DivOp : Attn_BinaryOp<"div", "lhs / rhs">;
def Attn_MaximumOp : Attn_BinaryOp<"maximum", "max(lhs, rhs)">;
// Comparisons are piecewise constant: their gradient rule passes no gradient on.
def Attn_EqOp : Attn_BinaryOp<"eq", "lhs == rhs ? 1 : 0">;

class Attn_UnaryOp<string mnemonic, string formula, list<Trait> traits = [DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]>
    : Attn_InferredOp<mnemonic, "inferSameType", traits> {
  let summary = "elementwise " # formula;
  let description = [{
    `result = }] # formula # [{`, elementwise.

    ```mlir
    %y = attn.}] # mnemonic # [{ %x : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_NegOp : Attn_UnaryOp<"neg", "-x">;
def Attn_TanhOp : Attn_UnaryOp<"tanh", "tanh(x)">;
def Attn_SigmoidOp : Attn_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Attn_ReluOp : Attn_UnaryOp<"relu", "max(x, 0)">;
def Attn_ExpOp : Attn_UnaryOp<"exp", "exp(x)">;
def Attn_LogOp : Attn_UnaryOp<"log", "log(x)">;
def Attn_SqrtOp : Attn_UnaryOp<"sqrt", "sqrt(x)">;
def Attn_StepOp : Attn_UnaryOp<"step", "x > 0 ? 1 : 0">;
def Attn_ErfOp : Attn_UnaryOp<"erf", "erf(x)">;

def Attn_StopGradientOp : Attn_InferredOp<"stop_gradient", "inferSameType",
    [DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "the identity, through which no gradient flows";
  let description = [{
    `result = input`; its gradient rule passes nothing back (`torch.Tensor.detach`). A
    surrogate loss uses it to hold a factor constant: the score-function (REINFORCE)
    estimator of hard attention multiplies the gradient of a sample's log-probability by the
    reward `stop_gradient(log p(y | s) - b)`. So its gradient is by design not the derivative
    of its value: the gradient checks test that it passes none
    (tests/conformance/gradcheck-cases.mlir, `@stop_gradient`). Decomposes into its input.

    ```mlir
    %r = attn.stop_gradient %reward : tensor<32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// The Transformer's exact GELU (PyTorch's `gelu`, approximate = 'none').
def Attn_GeluOp : Attn_UnaryOp<"gelu", "x Phi(x) = x (1 + erf(x / sqrt(2))) / 2">;

//===----------------------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------------------===//

def Attn_SoftmaxOp : Attn_InferredOp<"softmax", "inferSameType", [DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "softmax along one axis";
  let description = [{
    `result = exp(x - max(x)) / sum(exp(x - max(x)))` along `axis` (negative counts from the
    end; default: the last).

    ```mlir
    %p = attn.softmax %logits {axis = -1 : i64} : tensor<32x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `axis` as a non-negative dimension index.
    int64_t getPositiveAxis();
  }];
}

def Attn_LayerNormOp : Attn_Op<"layer_norm",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon) * gamma + beta`, with mean and (biased)
    variance over the last dimension `D`; `gamma` and `beta` are `[D]`.

    ```mlir
    %y = attn.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f32}
        : tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$gamma,
                       Attn_FloatTensor:$beta, DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma) `,` type($beta)
  }];
}

//===----------------------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------------------===//

class Attn_ReduceOp<string mnemonic, string what>
    : Attn_Op<mnemonic, [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = what # " over the given axes";
  let description = [{
    Reduces `input` with }] # what # [{ over `axes` (each in `[0, rank)`, no repeats).
    The reduced dimensions are dropped, or kept with size 1 when `keepdims` is set.

    ```mlir
    %s = attn.}] # mnemonic # [{ %x {axes = array<i64: 1>} : tensor<32x64xf32>
    // %s : tensor<32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_ReduceSumOp : Attn_ReduceOp<"reduce_sum", "the sum">;
def Attn_ReduceMeanOp : Attn_ReduceOp<"reduce_mean", "the mean">;
def Attn_ReduceMaxOp : Attn_ReduceOp<"reduce_max", "the maximum">;

//===----------------------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------------------===//

def Attn_ReshapeOp : Attn_Op<"reshape", [Pure, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "the same elements, in row-major order, with another shape";
  let description = [{
    The result type is written out; it must hold as many elements as the input.

    ```mlir
    %y = attn.reshape %x : tensor<4x16x8xf32> -> tensor<64x8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Attn_TransposeOp : Attn_Op<"transpose",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "permutes dimensions";
  let description = [{
    `result.shape[i] = input.shape[perm[i]]`; `perm` is a permutation of `[0, rank)`.

    ```mlir
    %y = attn.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<4x16x8xf32>
    // %y : tensor<16x4x8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_ConcatOp : Attn_Op<"concat", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                                       DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "joins tensors along one axis";
  let description = [{
    All inputs have the same rank and agree on every dimension but `axis`.

    ```mlir
    %y = attn.concat %a, %b {axis = 1 : i64} : tensor<4x8xf32>, tensor<4x3xf32>
    // %y : tensor<4x11xf32>
    ```
  }];
  let arguments = (ins Variadic<Attn_FloatTensor>:$inputs, I64Attr:$axis);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def Attn_SliceOp : Attn_Op<"slice", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                                     DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "a contiguous box of a tensor";
  let description = [{
    `result[i...] = input[offsets + i...]` with `result.shape = sizes`; the box must lie inside
    the input.

    ```mlir
    %y = attn.slice %x {offsets = array<i64: 0, 15, 0>, sizes = array<i64: 4, 1, 8>}
        : tensor<4x16x8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_EmbeddingOp : Attn_Op<"embedding",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "looks up rows of a table by token id";
  let description = [{
    `result[i..., :] = table[ids[i...], :]`: `table` is `[V, D]`, `ids` any shape of `i32`,
    the result `ids.shape + [D]`. An id outside `[0, V)` reads a zero vector, and its
    position passes no gradient to the table.

    ```mlir
    %e = attn.embedding %table, %ids : tensor<1000x64xf32>, tensor<32x20xi32>
    // %e : tensor<32x20x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$table, Attn_IdTensor:$ids);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$table `,` $ids attr-dict `:` type($table) `,` type($ids)";
}

def Attn_BroadcastOp : Attn_Op<"broadcast", [Pure, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "NumPy-broadcasts a tensor to the result shape";
  let description = [{
    Trailing dimensions align; each input dimension is 1 or equal to the result's. The
    gradient of broadcasting sums over the broadcast dimensions.

    ```mlir
    %y = attn.broadcast %b : tensor<64xf32> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Attn_PadOp : Attn_Op<"pad", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "surrounds a tensor with zeros";
  let description = [{
    Adds `low[d]` zeros before and `high[d]` zeros after dimension `d`: the adjoint of
    `attn.slice`.

    ```mlir
    %y = attn.pad %x {low = array<i64: 0, 2>, high = array<i64: 0, 1>} : tensor<4x8xf32>
    // %y : tensor<4x11xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_EmbeddingGradOp : Attn_Op<"embedding_grad", [Pure]> {
  let summary = "the gradient of attn.embedding with respect to its table";
  let description = [{
    `result[v, :] = sum of grad[i..., :] over all positions i... with ids[i...] == v`: the
    scatter-add adjoint of the lookup. Ids outside `[0, V)` contribute nothing.

    ```mlir
    %dt = attn.embedding_grad %ids, %dy : tensor<32x20xi32>, tensor<32x20x64xf32> -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Attn_IdTensor:$ids, Attn_FloatTensor:$grad);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$ids `,` $grad attr-dict `:` type($ids) `,` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

#endif // ATTN_OPS_CORE_TD
