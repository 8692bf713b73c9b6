//===- Recurrent.td - scan over time and the recurrent cells ----------------------------===//
#ifndef ATTN_OPS_RECURRENT_TD
#define ATTN_OPS_RECURRENT_TD

include "dialect/AttnBase.td"

def Attn_ScanOp : Attn_Op<"scan", [RecursiveMemoryEffects, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
    SingleBlock, DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface, ["prepareForGradient"]>]> {
  let summary = "a loop over the time axis with loop-carried state";
  let description = [{
    Runs `body` once per step `t` of the time axis `axis` (forward, or from the last step to
    the first with `reverse`). The body's block arguments are the carried values (initially
    `inits`), the step-`t` slice of each tensor in `xs` (the `axis` dimension dropped), then
    the loop-invariant `consts` (written `consts(...)`, omitted when empty). It yields the
    next carried values followed by per-step outputs `y_t`. The body may also use values
    from above; autodiff turns those into `consts` first.

    The gradient is back-propagation through time: the forward scan also saves the carried
    value entering each step, and a reversed scan recomputes each step's body and applies
    its ops' gradient rules, accumulating the gradients of `consts` as carried values.

    The results are the final carried values followed by the per-step outputs stacked along
    `axis` (in time order, also when reversed). Without `xs` the number of steps is `length`.
    Any cell can be a body, including a decoder step with attention inside; the fusion pass
    turns bodies it recognises into sequence ops.

    ```mlir
    %h, %hs = attn.scan inits(%h0) over(%x) {axis = 1 : i64}
        : (tensor<4x32xf32>, tensor<4x16x1xf32>) -> (tensor<4x32xf32>, tensor<4x16x32xf32>) {
    ^bb0(%h_prev: tensor<4x32xf32>, %x_t: tensor<4x1xf32>):
      %h_t = attn.rnn_cell %x_t, %h_prev, %w_ax, %w_aa, %b_a
          : tensor<4x1xf32>, tensor<4x32xf32>, tensor<1x32xf32>, tensor<32x32xf32>, tensor<32xf32>
      attn.yield %h_t, %h_t : tensor<4x32xf32>, tensor<4x32xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Attn_FloatTensor>:$inits, Variadic<Attn_FloatTensor>:$xs,
                       Variadic<AnyRankedTensor>:$consts,
                       DefaultValuedAttr<I64Attr, "1">:$axis, UnitAttr:$reverse,
                       OptionalAttr<I64Attr>:$length);
  let results = (outs Variadic<Attn_FloatTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of time steps.
    int64_t getNumSteps();
    /// The type of a per-step value of type `stepType` stacked over the steps (the steps
    /// inserted at `axis`): a per-step output's result type. `axis` <= its rank.
    ::mlir::RankedTensorType getStackedType(::mlir::Type stepType);
    /// Number of per-step outputs (yield operands after the carried values).
    unsigned getNumOutputs() { return getResults().size() - getInits().size(); }
    ::mlir::ValueRange getFinalCarries() { return getResults().take_front(getInits().size()); }
    ::mlir::ValueRange getStackedOutputs() { return getResults().drop_front(getInits().size()); }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The body's block arguments of each operand group.
    ::mlir::Block::BlockArgListType getCarryArgs() {
      return getBodyBlock().getArguments().take_front(getInits().size());
    }
    ::mlir::Block::BlockArgListType getStepArgs() {
      return getBodyBlock().getArguments().slice(getInits().size(), getXs().size());
    }
    ::mlir::Block::BlockArgListType getConstArgs() {
      return getBodyBlock().getArguments().take_back(getConsts().size());
    }
    /// What `v`, a value the body uses, is outside the scan: `v` itself when it is defined
    /// above, the `consts` operand of a const argument; null when it changes from step to
    /// step (a carried value, a step slice, or a value the body computes).
    ::mlir::Value getInvariant(::mlir::Value v);
    /// The sequence (`xs` operand) whose step-`t` slice `v` is; null when `v` is not a step
    /// argument of this scan.
    ::mlir::Value getSequenceOf(::mlir::Value v);
    /// A copy of this scan whose body takes every value it used from above as a `consts`
    /// operand. Uses of this scan's results are redirected to the copy; this op is erased.
    ScanOp makeCapturesExplicit(::mlir::OpBuilder &builder);
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ScanOp", "FusedAttentionOp", "FusedAttentionGradOp"]>]> {
  let summary = "ends a region: a scan body's next carried values, then per-step outputs; a score";
  let description = [{
    Ends an `attn.scan` body (next carried values, then per-step outputs) or a fused
    attention's `score` region (the score) and `score_grad` region (the row gradients).

    ```mlir
    attn.yield %h_t, %y_t : tensor<4x32xf32>, tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Variadic<Attn_FloatTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Attn_RnnCellOp : Attn_Op<"rnn_cell", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                                          DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
                                          DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "one step of the vanilla (Elman) RNN";
  let description = [{
    The seed's cell `a<t> = tanh(W_ax x<t> + W_aa a<t-1> + b_a)`, written for row-major
    batches: `result = tanh(input x w_ax + hidden x w_aa + bias)` with `input` `[B, I]`,
    `hidden` `[B, H]`, `w_ax` `[I, H]`, `w_aa` `[H, H]`, `bias` `[H]`; the result is `[B, H]`.
    Decomposes into `tanh(dense(input, w_ax, bias) + matmul(hidden, w_aa))`.

    ```mlir
    %h_t = attn.rnn_cell %x_t, %h, %w_ax, %w_aa, %b
        : tensor<4x1xf32>, tensor<4x32xf32>, tensor<1x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$hidden,
                       Attn_FloatTensor:$w_ax, Attn_FloatTensor:$w_aa, Attn_FloatTensor:$bias);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $hidden `,` $w_ax `,` $w_aa `,` $bias attr-dict `:` type($input) `,` type($hidden)
    `,` type($w_ax) `,` type($w_aa) `,` type($bias)
  }];
}

def Attn_LstmCellOp : Attn_Op<"lstm_cell", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "one step of an LSTM, with optional peepholes and projection";
  let description = [{
    With `z = input x w_ih + hidden x w_hh + bias` split into the gates `i, f, g, o` (each
    `[B, H]`, PyTorch's order):
    `i = sigmoid(z_i + P_i(cell))`, `f = sigmoid(z_f + P_f(cell))`, `g = tanh(z_g + P_g(cell))`,
    `new_cell = f * cell + i * g`, `o = sigmoid(z_o + P_o(new_cell))`,
    `m = o * tanh(new_cell)`, and `new_hidden = m x w_proj + b_proj` with a projection (the
    seed's `a<t> = W_proj a0<t> + b_proj`), else `m`. The peephole terms `P` are absent
    without `w_peephole`; with it, `peephole_form` says which:

    - `diagonal` (the default; oneDNN's form): `w_peephole [3, H]` holds per-unit weights of
      the gates i, f, o: `P_i(c) = w_peephole[0] * c`, `P_f(c) = w_peephole[1] * c`,
      `P_o(c) = w_peephole[2] * c`, `P_g = 0`.
    - `full` (the seed's (3-3): the cell state joins the concatenation each gate's weight
      matrix multiplies): `w_peephole [H, 4H]`, gate blocks `i, f, g, o` as in `w_hh`:
      `P_k(c) = c x w_peephole[:, kH:(k+1)H]`. The input, forget and candidate gates read the
      old cell state, the output gate the new one.

    Shapes: `input [B, I]`, `hidden [B, P]`, `cell [B, H]`, `w_ih [I, 4H]`, `w_hh [P, 4H]`,
    `bias [4H]`, `w_peephole [3, H]` or `[H, 4H]`, `w_proj [H, P]`, `b_proj [P]`; `P = H`
    without a projection. Results: `new_hidden [B, P]`, `new_cell [B, H]`. The gradient rule
    differentiates the decomposition; only the diagonal form has a oneDNN sequence op
    (`attn.lstm`), so full peepholes run as a generic `attn.scan`.

    ```mlir
    %h2, %c2 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b peephole(%wp : tensor<3x8xf32>)
        : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    %h3, %c3 = attn.lstm_cell %x, %h, %c, %wi, %wh, %b peephole(%wf : tensor<8x32xf32>)
        {peephole_form = #attn.peephole_form<full>}
        : tensor<4x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$hidden, Attn_FloatTensor:$cell,
                       Attn_FloatTensor:$w_ih, Attn_FloatTensor:$w_hh, Attn_FloatTensor:$bias,
                       Optional<Attn_FloatTensor>:$w_peephole, Optional<Attn_FloatTensor>:$w_proj,
                       Optional<Attn_FloatTensor>:$b_proj,
                       DefaultValuedAttr<Attn_PeepholeFormAttr,
                                         "::mlir::attn::PeepholeForm::diagonal">:$peephole_form);
  let results = (outs Attn_FloatTensor:$new_hidden, Attn_FloatTensor:$new_cell);
  let assemblyFormat = [{
    $input `,` $hidden `,` $cell `,` $w_ih `,` $w_hh `,` $bias
    (`peephole` `(` $w_peephole^ `:` type($w_peephole) `)`)?
    (`projection` `(` $w_proj^ `,` $b_proj `:` type($w_proj) `,` type($b_proj) `)`)?
    attr-dict `:` type($input) `,` type($hidden) `,` type($cell) `,` type($w_ih) `,`
    type($w_hh) `,` type($bias)
  }];
}

def Attn_GruCellOp : Attn_Op<"gru_cell", [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Attn_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface>]> {
  let summary = "one step of a GRU, in PyTorch's form or one of the seed's";
  let description = [{
    With `a = input x w_ih + b_ih` and `b = hidden x w_hh + b_hh`, each split into gate
    blocks of width `H`:

    - form `pytorch` (gates r, z, n): `r = sigmoid(a_r + b_r)`, `z = sigmoid(a_z + b_z)`,
      `n = tanh(a_n + r * b_n)`, `result = (1 - z) * n + z * hidden`.
    - form `seed` (the seed's full GRU; gates u, r, c): `u = sigmoid(a_u + b_u)`,
      `r = sigmoid(a_r + b_r)`, `c~ = tanh(a_c + (r * hidden) x w_hh[:, c] + b_hh[c])`,
      `result = u * c~ + (1 - u) * hidden`.
    - form `minimal` (the seed's memory cell with the update gate only; gates u, c):
      `u = sigmoid(a_u + b_u)`, `c~ = tanh(a_c + b_c)`, `result = u * c~ + (1 - u) * hidden`.

    Shapes: `input [B, I]`, `hidden [B, H]`, `w_ih [I, kH]`, `w_hh [H, kH]`, `b_ih`, `b_hh`
    `[kH]` with `k = 3` (2 for `minimal`). The gradient rule differentiates the
    decomposition.

    ```mlir
    %h2 = attn.gru_cell %x, %h, %wi, %wh, %bi, %bh {form = #attn.gru_form<pytorch>}
        : tensor<4x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$hidden, Attn_FloatTensor:$w_ih,
                       Attn_FloatTensor:$w_hh, Attn_FloatTensor:$b_ih, Attn_FloatTensor:$b_hh,
                       DefaultValuedAttr<Attn_GruFormAttr, "::mlir::attn::GruForm::pytorch">:$form);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $hidden `,` $w_ih `,` $w_hh `,` $b_ih `,` $b_hh attr-dict `:` type($input) `,`
    type($hidden) `,` type($w_ih) `,` type($w_hh) `,` type($b_ih) `,` type($b_hh)
  }];
  let extraClassDeclaration = [{
    /// Gate blocks in the weights: 3, or 2 for the minimal form.
    int64_t getNumGates() { return getForm() == GruForm::minimal ? 2 : 3; }
  }];
}

//===- sequence ops: what attn-fuse-recurrence makes of a scan over one cell ------------===//

// A whole recurrent layer over x [B, T, I]: outputs [B, T, H] (every step's hidden state, in
// time order also when `reverse`) and the final states. Lowered to oneDNN's RNN primitives.
// `precision` bf16 (attn-precision): the layer's sequences, hidden states and weights are
// rounded to bfloat16 as the kernel reads them (oneDNN's bf16 RNN), the gates sum in f32; the
// LSTM's cell state stays f32. The backward op takes its forward's precision and writes f32
// gradients.
class Attn_SequenceOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, traits # [Pure, Attn_RuntimeKernel, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                         DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
                         DeclareOpInterfaceMethods<Attn_PrecisionOpInterface>,
                         DeclareOpInterfaceMethods<Attn_DifferentiableOpInterface,
                                                   ["prepareForGradient"]>]>;

// The backward of a sequence op: the forward's operands, its results and their gradients in;
// the gradients of the forward's operands (same types, same order) out.
class Attn_SequenceGradOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, traits # [Pure, Attn_RuntimeKernel, DeclareOpInterfaceMethods<InferTypeOpInterface>,
                         DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
                         DeclareOpInterfaceMethods<Attn_PrecisionOpInterface>]>;

def Attn_RnnOp : Attn_SequenceOp<"rnn"> {
  let summary = "a vanilla (tanh) RNN layer over a whole sequence";
  let description = [{
    Runs `attn.rnn_cell` over the time axis 1 of `input` `[B, T, I]` starting from `h0`
    `[B, H]` (from the last step to the first with `reverse`): `h_t = tanh(x_t w_ax +
    h_{t-1} w_aa + bias)` with `w_ax [I, H]`, `w_aa [H, H]`, `bias [H]`. Results: `outputs`
    `[B, T, H]` (`h_t` at position `t`, also when reversed) and `h_n`, the final state.
    `attn-fuse-recurrence` makes it of an `attn.scan` over one `rnn_cell`; it lowers to
    oneDNN's vanilla RNN primitive. Its gradient is `attn.rnn_grad` (oneDNN's backward);
    `training` (set by the gradient rule) makes the forward keep oneDNN's workspace for it.

    With a `mask` `[B, T, 1]` (the padded batches of taggers, classifiers and encoders: 1 for
    a token, 0 for padding), each step blends the state,
    `h_t = h_{t-1} + m_t (cell(x_t, h_{t-1}) - h_{t-1})`: a step whose mask is 0 leaves it as
    it is, and `outputs` at such a step repeat it. This is the masked scan the frontends
    write; attn-fuse-recurrence makes this op of it. For a mask of 0s and 1s the runtime
    packs each row's real steps together and runs the rows in groups that shrink as rows
    end, like PyTorch's packed sequences, so padding costs no work; any other mask runs step
    by step with the blend, slower but with the same results. The same holds for `attn.gru`
    and `attn.lstm` (for both of its states).

    ```mlir
    %hs, %h = attn.rnn %x, %h0, %w_ax, %w_aa, %b
        : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$h0, Attn_FloatTensor:$w_ax,
                       Attn_FloatTensor:$w_aa, Attn_FloatTensor:$bias,
                       Optional<Attn_FloatTensor>:$mask, UnitAttr:$reverse,
                       UnitAttr:$training, OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$outputs, Attn_FloatTensor:$h_n);
  let assemblyFormat = [{
    $input `,` $h0 `,` $w_ax `,` $w_aa `,` $bias (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($input) `,` type($h0) `,` type($w_ax) `,` type($w_aa) `,` type($bias)
  }];
}

def Attn_GruOp : Attn_SequenceOp<"gru"> {
  let summary = "a GRU layer (PyTorch's form) over a whole sequence";
  let description = [{
    Runs `attn.gru_cell` in its `pytorch` form (gates r, z, n) over the time axis 1 of
    `input` `[B, T, I]` from `h0` `[B, H]` (backwards in time with `reverse`), with `w_ih`
    `[I, 3H]`, `w_hh [H, 3H]`, `b_ih`, `b_hh` `[3H]`. Results: `outputs` `[B, T, H]` (in time
    order) and the final state `h_n`. Lowered to oneDNN's linear-before-reset GRU (gates u,
    r, o = z, r, n; the runtime reorders the gate blocks). Gradient: `attn.gru_grad`. An
    optional `mask` `[B, T, 1]` skips steps as in `attn.rnn`.

    ```mlir
    %hs, %h = attn.gru %x, %h0, %wi, %wh, %bi, %bh
        : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<24xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$h0, Attn_FloatTensor:$w_ih,
                       Attn_FloatTensor:$w_hh, Attn_FloatTensor:$b_ih, Attn_FloatTensor:$b_hh,
                       Optional<Attn_FloatTensor>:$mask, UnitAttr:$reverse, UnitAttr:$training,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$outputs, Attn_FloatTensor:$h_n);
  let assemblyFormat = [{
    $input `,` $h0 `,` $w_ih `,` $w_hh `,` $b_ih `,` $b_hh
    (`mask` `(` $mask^ `:` type($mask) `)`)? attr-dict `:` type($input) `,`
    type($h0) `,` type($w_ih) `,` type($w_hh) `,` type($b_ih) `,` type($b_hh)
  }];
}

def Attn_LstmOp : Attn_SequenceOp<"lstm", [AttrSizedOperandSegments]> {
  let summary = "an LSTM layer over a whole sequence";
  let description = [{
    Runs `attn.lstm_cell` (gates i, f, g, o; optional diagonal peepholes and projection) over
    the time axis 1 of `input` `[B, T, I]` from `h0` `[B, P]`, `c0` `[B, H]` (backwards in
    time with `reverse`), with `w_ih [I, 4H]`, `w_hh [P, 4H]`, `bias [4H]`, optionally
    `w_peephole [3, H]` (gates i, f, o, as the cell's) and optionally a projection
    `w_proj [H, P]` *without a bias*: `h_t = (o * tanh(c_t)) x w_proj` (oneDNN's LSTMP);
    `P = H` without one. Results: `outputs` `[B, T, P]` (the hidden state of every step, in
    time order), and the final `h_n` `[B, P]`, `c_n` `[B, H]`. Lowered to oneDNN's LSTM
    primitive (same gate order, weight layout, peephole and projection formulas). Gradient:
    `attn.lstm_grad`. An optional `mask` `[B, T, 1]` skips steps as in `attn.rnn` (h and c
    both stay).

    attn-fuse-recurrence makes a cell's projection bias `b_proj` (which oneDNN lacks) a
    shift of the state around this op: the layer runs on `h' = h - b_proj`, whose recurrent
    product `h x w_hh = h' x w_hh + b_proj x w_hh` moves into `bias`.

    ```mlir
    %hs, %h, %c = attn.lstm %x, %h0, %c0, %wi, %wh, %b
        : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>, tensor<32xf32>
    %ps, %p, %pc = attn.lstm %x, %p0, %c0, %wi, %wp4, %b projection(%wproj : tensor<8x3xf32>)
        : tensor<4x16x2xf32>, tensor<4x3xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<3x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$h0, Attn_FloatTensor:$c0,
                       Attn_FloatTensor:$w_ih, Attn_FloatTensor:$w_hh, Attn_FloatTensor:$bias,
                       Optional<Attn_FloatTensor>:$w_peephole, Optional<Attn_FloatTensor>:$w_proj,
                       Optional<Attn_FloatTensor>:$mask, UnitAttr:$reverse, UnitAttr:$training,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$outputs, Attn_FloatTensor:$h_n, Attn_FloatTensor:$c_n);
  let assemblyFormat = [{
    $input `,` $h0 `,` $c0 `,` $w_ih `,` $w_hh `,` $bias
    (`peephole` `(` $w_peephole^ `:` type($w_peephole) `)`)?
    (`projection` `(` $w_proj^ `:` type($w_proj) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)? attr-dict `:` type($input) `,`
    type($h0) `,` type($c0) `,` type($w_ih) `,` type($w_hh) `,` type($bias)
  }];
}

def Attn_RnnGradOp : Attn_SequenceGradOp<"rnn_grad"> {
  let summary = "the backward of attn.rnn (oneDNN's vanilla RNN backward)";
  let description = [{
    Operands: the forward's operands (`input, h0, w_ax, w_aa, bias`), its results
    (`outputs, h_n`) and their gradients (`d_outputs, d_h_n`), and the forward's `mask` if it
    has one; `reverse` as in the forward. Results: the gradients of the forward's operands but
    the mask, of the same types. The runtime reuses
    the workspace a `training` forward kept, or recomputes it.

    ```mlir
    %dx, %dh0, %dwax, %dwaa, %db = attn.rnn_grad %x, %h0, %w_ax, %w_aa, %b, %hs, %h, %dhs, %dh
        : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>,
          tensor<4x16x8xf32>, tensor<4x8xf32>, tensor<4x16x8xf32>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$h0, Attn_FloatTensor:$w_ax,
                       Attn_FloatTensor:$w_aa, Attn_FloatTensor:$bias,
                       Attn_FloatTensor:$outputs, Attn_FloatTensor:$h_n,
                       Attn_FloatTensor:$d_outputs, Attn_FloatTensor:$d_h_n,
                       Optional<Attn_FloatTensor>:$mask, UnitAttr:$reverse,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$d_input, Attn_FloatTensor:$d_h0,
                      Attn_FloatTensor:$d_w_ax, Attn_FloatTensor:$d_w_aa,
                      Attn_FloatTensor:$d_bias);
  let assemblyFormat = [{
    $input `,` $h0 `,` $w_ax `,` $w_aa `,` $bias `,` $outputs `,` $h_n `,` $d_outputs `,` $d_h_n
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($input) `,` type($h0) `,` type($w_ax) `,` type($w_aa) `,` type($bias) `,`
    type($outputs) `,` type($h_n) `,` type($d_outputs) `,` type($d_h_n)
  }];
}

def Attn_GruGradOp : Attn_SequenceGradOp<"gru_grad"> {
  let summary = "the backward of attn.gru (oneDNN's linear-before-reset GRU backward)";
  let description = [{
    Operands: the forward's operands (`input, h0, w_ih, w_hh, b_ih, b_hh`), its results
    (`outputs, h_n`) and their gradients, and the forward's `mask` if it has one; results:
    the gradients of the forward's operands but the mask.

    ```mlir
    %dx, %dh0, %dwi, %dwh, %dbi, %dbh = attn.gru_grad %x, %h0, %wi, %wh, %bi, %bh, %hs, %h, %dhs, %dh
        : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<2x24xf32>, tensor<8x24xf32>, tensor<24xf32>,
          tensor<24xf32>, tensor<4x16x8xf32>, tensor<4x8xf32>, tensor<4x16x8xf32>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$h0, Attn_FloatTensor:$w_ih,
                       Attn_FloatTensor:$w_hh, Attn_FloatTensor:$b_ih, Attn_FloatTensor:$b_hh,
                       Attn_FloatTensor:$outputs, Attn_FloatTensor:$h_n,
                       Attn_FloatTensor:$d_outputs, Attn_FloatTensor:$d_h_n,
                       Optional<Attn_FloatTensor>:$mask, UnitAttr:$reverse,
                       OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$d_input, Attn_FloatTensor:$d_h0,
                      Attn_FloatTensor:$d_w_ih, Attn_FloatTensor:$d_w_hh,
                      Attn_FloatTensor:$d_b_ih, Attn_FloatTensor:$d_b_hh);
  let assemblyFormat = [{
    $input `,` $h0 `,` $w_ih `,` $w_hh `,` $b_ih `,` $b_hh `,` $outputs `,` $h_n `,` $d_outputs `,`
    $d_h_n
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($input) `,` type($h0) `,` type($w_ih) `,` type($w_hh) `,` type($b_ih) `,`
    type($b_hh) `,` type($outputs) `,` type($h_n) `,` type($d_outputs) `,` type($d_h_n)
  }];
}

def Attn_LstmGradOp : Attn_SequenceGradOp<"lstm_grad", [AttrSizedOperandSegments]> {
  let summary = "the backward of attn.lstm (oneDNN's LSTM backward)";
  let description = [{
    Operands: the forward's operands (`input, h0, c0, w_ih, w_hh, bias`), its results
    (`outputs, h_n, c_n`) and their gradients, then the forward's `w_peephole`, `w_proj` and
    `mask` if it has them; results: the gradients of the forward's operands but the mask
    (`d_w_peephole` then `d_w_proj` last, those the forward has, as `d_extra`).

    ```mlir
    %dx, %dh0, %dc0, %dwi, %dwh, %db = attn.lstm_grad %x, %h0, %c0, %wi, %wh, %b, %hs, %h, %c, %dhs, %dh, %dc
        : tensor<4x16x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x32xf32>, tensor<8x32xf32>,
          tensor<32xf32>, tensor<4x16x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x16x8xf32>,
          tensor<4x8xf32>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$h0, Attn_FloatTensor:$c0,
                       Attn_FloatTensor:$w_ih, Attn_FloatTensor:$w_hh, Attn_FloatTensor:$bias,
                       Attn_FloatTensor:$outputs, Attn_FloatTensor:$h_n, Attn_FloatTensor:$c_n,
                       Attn_FloatTensor:$d_outputs, Attn_FloatTensor:$d_h_n,
                       Attn_FloatTensor:$d_c_n, Optional<Attn_FloatTensor>:$w_peephole,
                       Optional<Attn_FloatTensor>:$w_proj, Optional<Attn_FloatTensor>:$mask,
                       UnitAttr:$reverse, OptionalAttr<Attn_PrecisionAttr>:$precision);
  let results = (outs Attn_FloatTensor:$d_input, Attn_FloatTensor:$d_h0, Attn_FloatTensor:$d_c0,
                      Attn_FloatTensor:$d_w_ih, Attn_FloatTensor:$d_w_hh,
                      Attn_FloatTensor:$d_bias, Variadic<Attn_FloatTensor>:$d_extra);
  let assemblyFormat = [{
    $input `,` $h0 `,` $c0 `,` $w_ih `,` $w_hh `,` $bias `,` $outputs `,` $h_n `,` $c_n `,`
    $d_outputs `,` $d_h_n `,` $d_c_n
    (`peephole` `(` $w_peephole^ `:` type($w_peephole) `)`)?
    (`projection` `(` $w_proj^ `:` type($w_proj) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($input) `,` type($h0) `,` type($c0) `,` type($w_ih) `,` type($w_hh) `,`
    type($bias) `,` type($outputs) `,` type($h_n) `,` type($c_n) `,` type($d_outputs) `,`
    type($d_h_n) `,` type($d_c_n)
  }];
}

#endif // ATTN_OPS_RECURRENT_TD
