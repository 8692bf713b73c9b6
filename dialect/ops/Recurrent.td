//===- Recurrent.td - scan over time and the recurrent cells ----------------------------===//
#ifndef ATTN_OPS_RECURRENT_TD
#define ATTN_OPS_RECURRENT_TD

include "dialect/AttnBase.td"

def Attn_ScanOp : Attn_Op<"scan", [RecursiveMemoryEffects, AttrSizedOperandSegments,
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
    /// A copy of this scan whose body takes every value it used from above as a `consts`
    /// operand. Uses of this scan's results are redirected to the copy; this op is erased.
    ScanOp makeCapturesExplicit(::mlir::OpBuilder &builder);
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike, HasParent<"ScanOp">]> {
  let summary = "ends a scan body: next carried values, then per-step outputs";
  let description = [{
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

#endif // ATTN_OPS_RECURRENT_TD
