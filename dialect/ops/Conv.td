//===- Conv.td - the convolution family: 1-D convolution and gated linear units ---------===//
//
// What the convolutional sequence-to-sequence model of Gehring et al. (2017) is built from
// besides core ops: a convolution over time and the gated linear unit behind it. Both are
// composite: they decompose into core ops (the convolution into one GEMM over an unfolded
// input), and their gradients differentiate the decompositions.
//
//===----------------------------------------------------------------------------------===//
#ifndef ATTN_OPS_CONV_TD
#define ATTN_OPS_CONV_TD

include "dialect/AttnBase.td"
include "dialect/AttnInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_Conv1dOp : Attn_Op<"conv1d", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "a convolution over time (stride 1, dilation 1) with zero padding";
  let description = [{
    With `input [B, T, C]` (T steps of C channels per row), `weight [K, C, N]` (K taps),
    `bias [N]`, and the input padded with `pad_low` zeros before its first step and
    `pad_high` after its last (`x_pad`):

        result[b, t, n] = bias[n] + sum_k sum_c x_pad[b, t + k, c] weight[k, c, n]

    `result [B, T + pad_low + pad_high - K + 1, N]`. `pad_low = pad_high = (K - 1) / 2`
    keeps the length (an encoder's convolution, odd K); `pad_low = K - 1, pad_high = 0` is
    causal: output `t` reads inputs `t - K + 1 .. t` only (a decoder's). PyTorch's
    `nn.Conv1d` weight `[N, C, K]` is this `weight` permuted (2, 1, 0).

    Decomposes into `pad`, K `slice`s joined by `concat` into the unfolded input
    `[B, T_out, K C]` (im2col), and one `dense` with the weight read as `[K C, N]`: a
    single GEMM of M = B T_out, K C, N, forward and in the gradient, which differentiates
    the decomposition.

    ```mlir
    %y = attn.conv1d %x, %w, %b {pad_low = 2 : i64, pad_high = 0 : i64}
        : tensor<4x10x16xf32>, tensor<3x16x32xf32>, tensor<32xf32>
    // %y : tensor<4x10x32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$weight,
                       Attn_FloatTensor:$bias,
                       DefaultValuedAttr<I64Attr, "0">:$pad_low,
                       DefaultValuedAttr<I64Attr, "0">:$pad_high);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight) `,` type($bias)
  }];
}

def Attn_GluOp : Attn_Op<"glu", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "the gated linear unit: one half of the last axis gates the other";
  let description = [{
    With `input [..., 2N]` split into its halves `a = input[..., :N]` and
    `g = input[..., N:]`: `result = a * sigmoid(g)`, `[..., N]` (Dauphin et al. 2017;
    `torch.nn.functional.glu(x, dim=-1)`). Decomposes into two `slice`s, `sigmoid` and
    `mul`; the gradient differentiates the decomposition.

    ```mlir
    %y = attn.glu %x : tensor<4x10x64xf32>
    // %y : tensor<4x10x32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

#endif // ATTN_OPS_CONV_TD
