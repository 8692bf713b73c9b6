//===- Attention.td - the attention family: scores, windows, attention -----------------===//
//
// The seed's three stages of attention as ops a decoder's scan body can hold: similarity
// scores between a query and every key, a mask (padding, and for Luong's local attention a
// window with Gaussian weighting), and softmax + weighted sum. Each is composite: it
// decomposes into core ops for lowering, and a fusion pass may keep it whole.
//
//===----------------------------------------------------------------------------------===//
#ifndef ATTN_OPS_ATTENTION_TD
#define ATTN_OPS_ATTENTION_TD

include "dialect/AttnBase.td"
include "dialect/AttnInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_AttentionScoresOp : Attn_Op<"attention_scores", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "similarity of one query per row with every key of that row";
  let description = [{
    `result[b, j] = score(query[b], keys[b, j])` with `query [B, Q]`, `keys [B, S, K]` and
    the result `[B, S]`, by `kind`:

    - `dot`: `q . k` (`Q = K`), Luong's dot score;
    - `scaled_dot`: `q . k / sqrt(K)`;
    - `general`: `q^T W k` with `weight` `W [Q, K]`, Luong's general score (computed as
      `(q W) . k`, so the keys are not projected at every step);
    - `additive`: `v^T tanh(q + k)` with `weight` `v [K]` (`Q = K`), where query and keys
      are already projected: Bahdanau's `v^T tanh(W s + U h)` takes `q = W s`, `k = U h`
      (the keys' projection is made once, outside the decoder's scan), and Luong's concat
      score `v^T tanh(W [s; h])` is the same with `W = [W_s W_h]`;
    - `cosine`: `tau q . k / (|q| |k|)` (`Q = K`), the cosine similarity of seed 001, with an
      optional `weight` `tau [1]`, its temperature (a learned parameter or a constant; none:
      1). A cosine is in [-1, 1], so without a temperature the softmax over it stays flat.
      Norms are `sqrt(sum x^2 + 1e-12)`, so a zero vector scores 0 rather than NaN.

    Decomposes into batched `matmul` (and `add`, `tanh` for `additive`; `sqrt`, `div` and
    `reduce_sum` for `cosine`); the gradient rule differentiates the decomposition, so
    `cosine` passes gradients to the query, the keys and the temperature.

    ```mlir
    %e = attn.attention_scores additive %q, %k, %v
        : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>
    // %e : tensor<4x10xf32>
    %c = attn.attention_scores cosine %s, %h, %tau
        : tensor<4x32xf32>, tensor<4x10x32xf32>, tensor<1xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Optional<Attn_FloatTensor>:$weight, Attn_ScoreKindAttr:$kind);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $query `,` $keys (`,` $weight^)? attr-dict `:` type($query) `,` type($keys)
    (`,` type($weight)^)?
  }];
}

def Attn_LocalWindowOp : Attn_Op<"local_window", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "Luong's local window around an aligned position, with Gaussian weighting";
  let description = [{
    For aligned positions `center [B, 1]` (real numbers: `p_i = i` for monotonic alignment,
    `p_i = S sigmoid(v_p^T tanh(W_p s_i))` for predictive alignment) and source positions
    `j = 0 .. S-1` of `mask [B, S]` (1 at tokens, 0 at padding):

    - `window_mask[b, j] = mask[b, j]` where `|j - p_b| <= window`, else 0;
    - `gaussian[b, j] = exp(-(j - p_b)^2 / (2 sigma^2))` with `sigma = window / 2`.

    `window_mask` goes to `attn.attention` as its mask and `gaussian` as its weighting, so
    `a_ij = softmax over the window (e_ij) * exp(-(j - p_i)^2 / (2 sigma^2))`. The window's
    edges carry no gradient; the Gaussian carries the gradient of `p` (predictive
    alignment learns through it). The gradient rule differentiates the decomposition.

    ```mlir
    %m, %g = attn.local_window %p, %mask {window = 3 : i64}
        : tensor<4x1xf32>, tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$center, Attn_FloatTensor:$mask, I64Attr:$window);
  let results = (outs Attn_FloatTensor:$window_mask, Attn_FloatTensor:$gaussian);
  let assemblyFormat = "$center `,` $mask attr-dict `:` type($center) `,` type($mask)";
}

def Attn_AttentionOp : Attn_Op<"attention", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "masked softmax of scores, then the weighted sum of the values";
  let description = [{
    With `scores [B, S]`, `mask [B, S]` (1 where a key may be attended, 0 at padding or
    outside a local window), `values [B, S, D]` and an optional `weighting [B, S]`:

    - `alpha[b, j] = mask[b, j] exp(e[b, j]) / sum_k mask[b, k] exp(e[b, k])` (a row with no
      unmasked key gets all zeros, not NaN);
    - `weights = alpha * weighting` (or `alpha` without a weighting);
    - `context[b] = sum_j weights[b, j] values[b, j]`, `[B, D]`.

    Both `context` and `weights` are results: the weights are what alignment plots show.
    The gradient rule is written out (the softmax Jacobian-vector product
    `de = alpha * (dalpha - sum(alpha * dalpha))` and two batched matmuls); the mask gets
    no gradient.

    ```mlir
    %c, %a = attn.attention %e, %mask, %h
        : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
    // %c : tensor<4x32xf32>, %a : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$scores, Attn_FloatTensor:$mask,
                       Attn_FloatTensor:$values, Optional<Attn_FloatTensor>:$weighting);
  let results = (outs Attn_FloatTensor:$context, Attn_FloatTensor:$weights);
  let assemblyFormat = [{
    $scores `,` $mask `,` $values (`weighting` `(` $weighting^ `:` type($weighting) `)`)?
    attr-dict `:` type($scores) `,` type($mask) `,` type($values)
  }];
}

//===- fused attention: one op for every score, what attn-fuse-attention makes ----------===//

def Attn_FusedAttentionOp : Attn_Op<"fused_attention", [Pure, IsolatedFromAbove, Attn_RuntimeKernel,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
    DeclareOpInterfaceMethods<Attn_PrecisionOpInterface, ["gainsFrom"]>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "attention with its score as a region: masks, softmax and weighted sum in one kernel";
  let description = [{
    Every attention family as one op. With `query [B, H, T, D]`, `keys [B, H, S, D]`,
    `values [B, H, S, Dv]` and `key_mask [B, S]` (1 where a key may be attended):

        s[b, h, i, j] = score(query[b, h, i], keys[b, h, j], i, j, captures...)
        allowed(i, j) = key_mask[b, j] != 0  and  j <= i + S - T (with `causal`)
                        and  |j - center[b, h, i]| <= window   (with `window`)
                        and  mask(i, j, captures...) != 0      (with a `mask` region)
        alpha[b, h, i, :] = softmax over the allowed j of s[b, h, i, :]   (0 elsewhere)
        a = alpha * exp(-(j - center)^2 / (2 (window / 2)^2))   (with `gaussian`; else alpha)
        output[b, h, i] = sum_j a[b, h, i, j] values[b, h, j]
        lse[b, h, i] = log sum_{allowed j} exp(s[b, h, i, j])   (0 for a row with none)

    `score` is a region over one query row and one key row: its block arguments are
    `q : tensor<Dxf32>`, `k : tensor<Dxf32>`, the query and key positions `i`, `j`
    (`tensor<f32>`) and the `captures` (loop-invariant tensors the score reads: Bahdanau's
    `v_a [D]`, a temperature `[1]`, a learned slope `[]`); it yields the score,
    `tensor<f32>`. A capture `[H]` whose block argument is `tensor<f32>` is per head: head
    `h` reads its element `h` (ALiBi's slopes), and its gradient is summed per head. Its ops are attn's elementwise ops, reductions over the row, broadcasts,
    reshapes and constants on rows `[D]` and scalars (`[]`, `[1]`); the verifier names any
    other op or shape. Dot, scaled dot, general (the query projected before the op), cosine
    (both normalised before the op, a temperature captured), additive / concat
    `v^T tanh(q + k)` and a researcher's own score are all this op.

    The optional `mask` region is for any other mask: its block arguments are the positions
    `i`, `j` (`tensor<f32>`) and the captures; it yields `tensor<f32>`, nonzero where the key
    may be seen (a band `|i - j| <= w`, a dilation, a per-head window from a captured width),
    under the score region's contract; it passes no gradient.

    A row with no allowed key gets a zero output (as `attn.attention`). `center [B, H, T]`
    (Luong's aligned position `p_t`) is needed by `window`, and `gaussian` needs `window`;
    the Gaussian passes a gradient to `center` (local-p alignment learns through it), the
    window's edges do not. `lse` is what the backward recomputes the weights from; the
    weights `a [B, H, T, S]` are a third result only with `with_weights` (plots, callers that
    read them), otherwise they never exist. Memory beyond the operands and results: one
    row of `S` scores.

    The gradient rule is `attn.fused_attention_grad`, whose `score_grad` region attn-autodiff
    derives from this op's `score` region, so a new score gets a fused backward with no new
    C++. attn-to-onednn calls a kernel it generates for the op (loops with the region
    inlined), except for a plain dot-product score `c * sum(q * k)` (dot, scaled dot: what
    attn-fuse-attention makes of `attn.scaled_dot_product_attention` and of Luong's dot) with
    no captures, window or weights: that one runs FlashAttention-2's tiled kernel, whose
    score and `P V` tiles are GEMMs (`attn_rt_flash_attention`). A score that is that
    product followed by scalar code (`f(sum(q * k), i, j, captures)`, scalar captures: ALiBi,
    softcapping, a temperature), with or without a mask region of scalar code, runs the same
    kernel's `_regions` form, the regions compiled into functions over a tile of scores
    (docs/fusion.md). Only these have a bf16 form (`precision`, `attn-precision`): their tile
    products in bf16 with f32 sums, the regions, the online softmax and the accumulators f32
    (`attn_rt_flash_attention[_regions]_bf16`); the gradient op takes the forward's
    precision. bf16 pays only from 128 queries and 128 keys: a policy leaves shorter attention (and every decoding step) in f32, and
    attn-fuse-attention under a bf16 policy leaves a shorter dot-product attention of at
    least 16 queries and keys unfused, its batched products bf16.

    ```mlir
    // the Transformer's causal self-attention: 8 heads of 64, scaled dot
    %o, %lse = attn.fused_attention %q, %k, %v, %mask {causal = true}
        : tensor<2x8x10x64xf32>, tensor<2x8x10x64xf32>, tensor<2x8x10x64xf32>, tensor<2x10xf32>
        -> tensor<2x8x10x64xf32>, tensor<2x8x10xf32> {
    ^bb0(%qi: tensor<64xf32>, %kj: tensor<64xf32>, %i: tensor<f32>, %j: tensor<f32>):
      %p = attn.mul %qi, %kj : tensor<64xf32>, tensor<64xf32>
      %d = attn.reduce_sum %p {axes = array<i64: 0>} : tensor<64xf32>
      %c = attn.constant dense<0.125> : tensor<f32>
      %s = attn.mul %d, %c : tensor<f32>, tensor<f32>
      attn.yield %s : tensor<f32>
    }
    ```

    ```mlir
    // Bahdanau's additive score v^T tanh(q + k) of one decoder query per row, padded keys
    %o, %lse = attn.fused_attention %q, %k, %h, %mask captures(%v : tensor<16xf32>)
        : tensor<4x1x1x16xf32>, tensor<4x1x10x16xf32>, tensor<4x1x10x32xf32>, tensor<4x10xf32>
        -> tensor<4x1x1x32xf32>, tensor<4x1x1xf32> {
    ^bb0(%qi: tensor<16xf32>, %kj: tensor<16xf32>, %i: tensor<f32>, %j: tensor<f32>,
         %va: tensor<16xf32>):
      %t = attn.tanh %sum : tensor<16xf32>
      ...
      attn.yield %s : tensor<f32>
    }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$values, Attn_FloatTensor:$key_mask,
                       Optional<Attn_FloatTensor>:$center, Variadic<Attn_FloatTensor>:$captures,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       OptionalAttr<I64Attr>:$window, UnitAttr:$gaussian, UnitAttr:$with_weights,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$output, Attn_FloatTensor:$lse,
                      Variadic<Attn_FloatTensor>:$weights);
  let regions = (region SizedRegion<1>:$score, MaxSizedRegion<1>:$mask);
  let assemblyFormat = [{
    $query `,` $keys `,` $values `,` $key_mask (`center` `(` $center^ `:` type($center) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict `:` type($query) `,`
    type($keys) `,` type($values) `,` type($key_mask) `->` type(results) $score
    (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The score region's block arguments: the query row, the key row, i, j, the captures.
    ::mlir::Block &getScoreBlock() { return getScore().front(); }
    /// Builds the result types for operands of these types (with weights when `withWeights`).
    static ::llvm::SmallVector<::mlir::Type> resultTypes(::mlir::Value query,
        ::mlir::Value keys, ::mlir::Value values, bool withWeights);
    /// Whether queries [B, H, T, D] and keys [B, H, S, D] fill the flash kernels' bf16 tiles
    /// (T and S at least 128), below which bf16 does not pay in the fused kernels.
    static bool fillsBf16Tiles(::mlir::Value query, ::mlir::Value keys);
  }];
}

def Attn_FusedAttentionGradOp : Attn_Op<"fused_attention_grad", [Pure, IsolatedFromAbove,
    Attn_RuntimeKernel,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
    DeclareOpInterfaceMethods<Attn_PrecisionOpInterface, ["gainsFrom"]>]> {
  let summary = "the backward of attn.fused_attention, its score's gradient as a region";
  let description = [{
    The forward's operands and attributes, its `output` and `lse` (and `weights` with
    `with_weights`), and the gradients of its results (`d_output`, `d_lse`, `d_weights`)
    in; the gradients of `query`, `keys`, `values`, then of `center` (when the forward has
    one) and of each capture out. The weights are recomputed from `lse` one key at a time,
    `p = exp(s - lse)`; with `a = p g` (`g` the Gaussian, or 1), `da = d_output . v_j +
    d_weights`, `delta_i = d_output_i . output_i + sum_j a d_weights - d_lse_i`:
    `d_values_j += a d_output_i`, `ds = p (g da - delta_i)`, and `d_center_i += da a
    (j - center_i) / sigma^2`.

    `score` is the forward's region; `score_grad`, derived from it by attn-autodiff, takes
    the same arguments and `ds : tensor<f32>` and yields the gradients of the query row,
    the key row and each capture, which the kernel accumulates. `mask` is the forward's
    mask region (none when the forward has none).

    ```mlir
    %dq, %dk, %dv, %dva = attn.fused_attention_grad %q, %k, %h, %mask, %o, %lse, %do, %dlse
        captures(%v : tensor<16xf32>) : ... -> ... { score } { score_grad }
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$values, Attn_FloatTensor:$key_mask,
                       Attn_FloatTensor:$output, Attn_FloatTensor:$lse,
                       Attn_FloatTensor:$d_output, Attn_FloatTensor:$d_lse,
                       Optional<Attn_FloatTensor>:$center,
                       Optional<Attn_FloatTensor>:$weights,
                       Optional<Attn_FloatTensor>:$d_weights,
                       Variadic<Attn_FloatTensor>:$captures,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       OptionalAttr<I64Attr>:$window, UnitAttr:$gaussian,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$d_query, Attn_FloatTensor:$d_keys,
                      Attn_FloatTensor:$d_values, Variadic<Attn_FloatTensor>:$d_rest);
  let regions = (region SizedRegion<1>:$score, SizedRegion<1>:$score_grad,
                 MaxSizedRegion<1>:$mask);
  let assemblyFormat = [{
    $query `,` $keys `,` $values `,` $key_mask `,` $output `,` $lse `,` $d_output `,` $d_lse
    (`center` `(` $center^ `:` type($center) `)`)?
    (`weights` `(` $weights^ `,` $d_weights `:` type($weights) `,` type($d_weights) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict `:` type($query) `,`
    type($keys) `,` type($values) `,` type($key_mask) `,` type($output) `,` type($lse) `,`
    type($d_output) `,` type($d_lse) `->` type(results) $score $score_grad (`mask` $mask^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===- the Transformer's attention: scaled dot-product and multi-head -------------------===//

def Attn_ScaledDotProductAttentionOp : Attn_Op<"scaled_dot_product_attention", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "softmax(Q K^T / sqrt(d_k)) V per head, with causal and key padding masks";
  let description = [{
    With `query [B, H, T, D]`, `keys [B, H, S, D]`, `values [B, H, S, Dv]` and an optional
    `key_mask [B, S]` (1 where a key may be attended, 0 at padding):

        scores[b, h, i, j] = query[b, h, i] . keys[b, h, j] / sqrt(D)
        weights = softmax_j(scores), over the keys j that are not masked
        output[b, h, i] = sum_j weights[b, h, i, j] values[b, h, j]

    With `causal`, query `i` sees key `j` only when `j <= i + S - T` (the queries are the
    last `T` positions of the `S` keys; `T = S` is the usual square mask). Masked scores are
    pushed down by 1e9, so a masked key gets weight exactly 0; a row with every key masked
    gets zero weights and a zero output (as `attn.attention` and `attn.fused_attention`). Results: `output [B, H, T, Dv]` and `weights [B, H, T, S]` (what
    attention plots show; unused, it costs nothing after decomposition). Decomposes into
    batched `matmul`, `softmax` and the masks as additive constants; the gradient rule
    differentiates the decomposition.

    ```mlir
    %o, %w = attn.scaled_dot_product_attention %q, %k, %v, %mask {causal = true}
        : tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<2x10xf32>
    // %o : tensor<2x4x10x16xf32>, %w : tensor<2x4x10x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$values, Optional<Attn_FloatTensor>:$key_mask,
                       DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Attn_FloatTensor:$output, Attn_FloatTensor:$weights);
  let assemblyFormat = [{
    $query `,` $keys `,` $values (`,` $key_mask^)? attr-dict `:` type($query) `,` type($keys)
    `,` type($values) (`,` type($key_mask)^)?
  }];
}

def Attn_MultiHeadAttentionOp : Attn_Op<"multi_head_attention", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "multi-head attention: per-head projections, attention, concat, output projection";
  let description = [{
    "Attention Is All You Need", 3.2.2, with `query [B, T, E]` (what attends) and
    `memory [B, S, M]` (what is attended: the same tensor for self-attention, the encoder's
    output for encoder-decoder cross attention), `heads` = H dividing E:

        Q = query W_q + b_q, K = memory W_k + b_k, V = memory W_v + b_v   [.., E]
        head_h = scaled_dot_product_attention(Q_h, K_h, V_h)  (Q_h: columns h E/H ..)
        output = concat_h(head_h) W_o + b_o                                [B, T, E]

    Weights `w_q [E, E]`, `w_k [M, E]`, `w_v [M, E]`, `w_o [E, E]` multiply from the right
    (PyTorch's `in_proj_weight` rows, transposed); biases are `[E]`. `key_mask [B, S]` and
    `causal` are those of `attn.scaled_dot_product_attention`. Results: `output [B, T, E]`
    and the per-head `weights [B, H, T, S]`. Decomposes into `dense`, `reshape`,
    `transpose` and `attn.scaled_dot_product_attention`; the gradient rule differentiates
    the decomposition.

    ```mlir
    %y, %w = attn.multi_head_attention %x, %x, %wq, %bq, %wk, %bk, %wv, %bv, %wo, %bo, %mask
        {heads = 4 : i64, causal = true} : tensor<2x10x64xf32>, tensor<2x10x64xf32>, ...
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$memory,
                       Attn_FloatTensor:$w_q, Attn_FloatTensor:$b_q,
                       Attn_FloatTensor:$w_k, Attn_FloatTensor:$b_k,
                       Attn_FloatTensor:$w_v, Attn_FloatTensor:$b_v,
                       Attn_FloatTensor:$w_o, Attn_FloatTensor:$b_o,
                       Optional<Attn_FloatTensor>:$key_mask, I64Attr:$heads,
                       DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Attn_FloatTensor:$output, Attn_FloatTensor:$weights);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
}

#endif // ATTN_OPS_ATTENTION_TD
