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

//===- fused attention: what attn-fuse-attention makes of scores + attention -------------===//

def Attn_FusedAttentionOp : Attn_Op<"fused_attention", [Pure, Attn_RuntimeKernel,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "scores, masked softmax and weighted sum in one kernel";
  let description = [{
    `attn.attention_scores` of `kind` followed by `attn.attention` (no weighting), computed
    by one runtime kernel that never materialises the `[B, S, A]` intermediate: for
    kind `additive`, with `query [B, A]`, `keys [B, S, A]`, `weight` `v [A]`,
    `mask [B, S]` and `values [B, S, D]`,

        e[b, j] = sum_a v[a] tanh(query[b, a] + keys[b, j, a])
        weights = masked softmax_j(e),  context[b] = sum_j weights[b, j] values[b, j]

    Results: `context [B, D]`, `weights [B, S]`. Its gradient is `attn.fused_attention_grad`,
    a kernel that recomputes `tanh` on the fly. Made by `attn-fuse-attention`; not
    decomposable (the unfused ops are its reference).

    ```mlir
    %c, %a = attn.fused_attention additive %q, %k, %v, %mask, %h
        : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>, tensor<4x10xf32>, tensor<4x10x32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$weight, Attn_FloatTensor:$mask,
                       Attn_FloatTensor:$values, Attn_ScoreKindAttr:$kind);
  let results = (outs Attn_FloatTensor:$context, Attn_FloatTensor:$weights);
  let assemblyFormat = [{
    $kind $query `,` $keys `,` $weight `,` $mask `,` $values attr-dict `:` type($query) `,`
    type($keys) `,` type($weight) `,` type($mask) `,` type($values)
  }];
}

def Attn_FusedAttentionGradOp : Attn_Op<"fused_attention_grad", [Pure, Attn_RuntimeKernel,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the backward of attn.fused_attention";
  let description = [{
    The forward's operands (`query`, `keys`, `weight`, `mask`, `values`), its `weights`
    result, and the gradients of its results (`d_context [B, D]`, `d_weights [B, S]`) in; the
    gradients of `query`, `keys`, `weight` and `values` out (same types). With
    `da = d_weights + values . d_context` and `de = weights * (da - sum_j weights * da)`:
    `d_values = weights (x) d_context`, and for `additive`, with `t = tanh(q + k)` recomputed,
    `g = de * v * (1 - t^2)`: `d_query = sum_j g`, `d_keys = g`, `d_weight = sum_{b,j} de * t`.

    ```mlir
    %dq, %dk, %dv, %dh = attn.fused_attention_grad additive %q, %k, %v, %mask, %h, %a, %dc, %da
        : tensor<4x16xf32>, tensor<4x10x16xf32>, tensor<16xf32>,
        tensor<4x10xf32>, tensor<4x10x32xf32>, tensor<4x10xf32>, tensor<4x32xf32>, tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$weight, Attn_FloatTensor:$mask,
                       Attn_FloatTensor:$values, Attn_FloatTensor:$weights,
                       Attn_FloatTensor:$d_context, Attn_FloatTensor:$d_weights,
                       Attn_ScoreKindAttr:$kind);
  let results = (outs Attn_FloatTensor:$d_query, Attn_FloatTensor:$d_keys,
                      Attn_FloatTensor:$d_weight, Attn_FloatTensor:$d_values);
  let assemblyFormat = "$kind operands attr-dict `:` type(operands)";
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
    gets uniform weights. Results: `output [B, H, T, Dv]` and `weights [B, H, T, S]` (what
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

//===- flash attention: what attn-fuse-attention makes of scaled dot-product attention ----===//

def Attn_FlashAttentionOp : Attn_Op<"flash_attention", [Pure, Attn_RuntimeKernel,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "scaled dot-product attention in one tiled kernel, without a [T, S] tensor";
  let description = [{
    `attn.scaled_dot_product_attention`'s output, computed FlashAttention-2 style: query
    tiles outer, key tiles inner, a running max and sum per query and a rescaled
    accumulator, so neither the scores nor the weights `[B, H, T, S]` ever exist. With
    `query [B, H, T, D]`, `keys [B, H, S, D]`, `values [B, H, S, Dv]`, `key_mask [B, S]`
    (1 where a key may be attended; all ones for none) and `causal` (query `i` sees key `j`
    only when `j <= i + S - T`):

        s[b, h, i, j] = query[b, h, i] . keys[b, h, j] / sqrt(D) - 1e9 [j not allowed]
        output[b, h, i] = sum_j softmax_j(s)[b, h, i, j] values[b, h, j]
        lse[b, h, i] = log sum_j exp(s[b, h, i, j])

    The same pushed-down scores as the decomposition of the unfused op, so the two agree
    also on a row without any allowed key (uniform weights). `lse [B, H, T]` is what the
    backward, `attn.flash_attention_grad`, recomputes the weights from. Made by
    `attn-fuse-attention` from `attn.scaled_dot_product_attention` (and the attention inside
    `attn.multi_head_attention`) whose weights are not used; lowered to the runtime kernel
    `attn_rt_flash_attention`, whose tile products are GEMMs. Not decomposable: the unfused
    op is its reference.

    ```mlir
    %o, %lse = attn.flash_attention %q, %k, %v, %mask {causal = true}
        : tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<2x10xf32>
    // %o : tensor<2x4x10x16xf32>, %lse : tensor<2x4x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$values, Attn_FloatTensor:$key_mask,
                       DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Attn_FloatTensor:$output, Attn_FloatTensor:$lse);
  let assemblyFormat = [{
    $query `,` $keys `,` $values `,` $key_mask attr-dict `:` type($query) `,` type($keys) `,`
    type($values) `,` type($key_mask)
  }];
}

def Attn_FlashAttentionGradOp : Attn_Op<"flash_attention_grad", [Pure, Attn_RuntimeKernel,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>]> {
  let summary = "the backward of attn.flash_attention";
  let description = [{
    The forward's operands (`query`, `keys`, `values`, `key_mask`) and results (`output`,
    `lse`) and the gradients of its results (`d_output`, `d_lse`) in; the gradients of
    `query`, `keys` and `values` out (their types). FlashAttention-2's backward: key tiles
    outer, query tiles inner; per tile the weights `p = exp(s - lse)` are recomputed,
    `d_values += p^T d_output`, `ds = p (d_output values^T - delta)` with
    `delta_i = d_output_i . output_i - d_lse_i`, `d_query += ds keys / sqrt(D)` and
    `d_keys += ds^T query / sqrt(D)`. Memory beyond the operands and results: a few tiles.

    ```mlir
    %dq, %dk, %dv = attn.flash_attention_grad %q, %k, %v, %mask, %o, %lse, %do, %dlse
        {causal = true} : tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x16xf32>,
        tensor<2x10xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10xf32>, tensor<2x4x10x16xf32>,
        tensor<2x4x10xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$keys,
                       Attn_FloatTensor:$values, Attn_FloatTensor:$key_mask,
                       Attn_FloatTensor:$output, Attn_FloatTensor:$lse,
                       Attn_FloatTensor:$d_output, Attn_FloatTensor:$d_lse,
                       DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Attn_FloatTensor:$d_query, Attn_FloatTensor:$d_keys,
                      Attn_FloatTensor:$d_values);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
}

#endif // ATTN_OPS_ATTENTION_TD
