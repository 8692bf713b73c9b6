//===- Passes.td - attn-to-attn transformations -----------------------------------------===//
#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnParamsToArgs : Pass<"attn-params-to-args", "mlir::ModuleOp"> {
  let summary = "turns attn.param ops into leading arguments of every entry point";
  let description = [{
    Collects the module's parameters (by name, in order of first appearance), records them
    as the module attribute `attn.params` (the program's parameter table: name, type, init,
    scale), prepends one argument per parameter to every public function, and replaces each
    `attn.param` with its argument. Afterwards every entry point has the runtime's calling
    convention: parameters, then inputs. Two params of one name with different types or
    inits are an error.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def AttnFuseRecurrence : Pass<"attn-fuse-recurrence"> {
  let summary = "turns a scan over one oneDNN cell into a sequence op (rnn, gru, lstm)";
  let description = [{
    Matches an `attn.scan` along axis 1 of one sequence `[B, T, I]` whose body is exactly one
    `rnn_cell`, `gru_cell` (form `pytorch`) or `lstm_cell` (diagonal peepholes allowed, no projection)
    reading the step input, whose carried values are exactly the cell's state fed back from
    its new state, whose per-step outputs (if any) are the new hidden state, and whose
    weights are loop-invariant. Such a scan becomes `attn.rnn`, `attn.gru` or `attn.lstm`
    (with `reverse` for a reversed scan), which lower to oneDNN's RNN primitives and
    differentiate through oneDNN's backward (`attn.*_grad`). Anything else stays a scan:
    other cells and GRU forms, extra ops in the body (attention, masks), other carried
    values, scans without a sequence, and scans autodiff has already prepared
    (`attn.saved_carries`). Runs before attn-autodiff (so the gradient is the fused
    backward) and first in attn-lower; attnc's `--no-fuse` leaves it out.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "report why each scan that stays a scan was not fused (as a remark)">
  ];
}

def AttnFuseAttention : Pass<"attn-fuse-attention"> {
  let summary = "turns attention scores + attention into one fused attention op";
  let description = [{
    Matches `attn.attention_scores` of a kind with a fused kernel (`additive`: Bahdanau's and
    Luong's concat scores) whose only user is an `attn.attention` without a weighting, and
    replaces the pair by `attn.fused_attention`: one runtime kernel per step that computes
    scores, masked softmax and context without materialising `tanh(q + k)` `[B, S, A]`, and
    whose gradient is one backward kernel (`attn.fused_attention_grad`). Other kinds, local
    attention (a Gaussian weighting) and scores with other users stay unfused.

    `attn.scaled_dot_product_attention` whose weights are not used becomes
    `attn.flash_attention` (a key mask of ones where it has none): a tiled kernel with an
    online softmax that never materialises the `[B, H, T, S]` scores or weights, forward or
    backward (`attn.flash_attention_grad`). `attn.multi_head_attention` whose weights are not
    used is first decomposed one level (projections, head split, attention, merge, output
    projection) so that its attention is fused the same way; the Transformer's encoder,
    decoder and cross attention in training, and its cached decoding. Attention whose weights
    are read (plots) stays unfused. Runs with
    attn-fuse-recurrence: before attn-autodiff and first in attn-lower; attnc's `--no-fuse`
    leaves it out.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "report why an attention that stays unfused was not fused (as a remark)">
  ];
}

def AttnHoistScanProjections : Pass<"attn-hoist-scan-projections"> {
  let summary = "moves what does not depend on the carried state out of attn.scan bodies";
  let description = [{
    A scan's body runs once per step; what it computes without the carried state can run
    once for all steps, in fewer and larger kernels. For each `attn.scan` (inner scans
    first):

    - a cell (`rnn_cell`, `lstm_cell`, `gru_cell`) whose input is a step slice, or a
      concatenation along the last axis with a step slice among its parts (a decoder's
      `[y_{t-1}; feed]`), and whose input weight and bias are loop-invariant is decomposed in
      place, so that its input projection is a `dense` of the body;
    - a pure op whose operands are all loop-invariant (a slice of a weight, a reshape of a
      mask) moves before the scan; constants stay;
    - a `dense` or `matmul` of a step slice `x_t [.., K]` by a loop-invariant weight
      `[K, N]` (and bias) becomes one product of the whole sequence `[.., T, .., K]` before the
      scan, which the body reads as a new sequence. A concatenation's product is split by the
      weight's rows: the step slices' parts are hoisted (their products summed), the other
      parts keep theirs in the body (`concat(x_t, f) W = x_t W_x + f W_f`);
    - a sequence whose slice the body no longer reads is dropped.

    Before attn-autodiff, the hoisted products differentiate outside the loop too: the input
    and weight gradients of a layer's input projection are one GEMM each over every step,
    not one per step accumulated in the backward scan. Run again on the backward scans that
    attn-autodiff builds, it hoists the recomputation of `h_{t-1} W_hh` (the saved carries
    are sequences there). Scans attn-fuse-recurrence makes sequence ops are gone by then.
    Runs after the structural fusions; attnc's `--no-fuse=hoist` (and `--no-fuse`) leaves it
    out.
  }];
}

def AttnBatchScanGradients : Pass<"attn-batch-scan-gradients"> {
  let summary = "sums a backward scan's per-step weight gradients in one GEMM after the scan";
  let description = [{
    The backward scan that attn-autodiff builds accumulates the gradient of each weight a
    step reads, `acc_next = acc + a_t^T b_t` (for `h_{t-1} W_hh`: `a_t = h_{t-1}`, `b_t` the
    gates' gradient): T products of K = B rows each, which small-matrix GEMMs run far below
    the machine's peak. For a carried value whose only use is such an add of a
    `matmul {transpose_lhs}` of two `[M, H]`, `[M, G]` values, and whose next value nothing
    else reads, the carry leaves the scan; the scan yields `a_t` and `b_t` as per-step outputs
    instead (a step slice is not yielded: its sequence is read directly), and after the scan
    the final value is `init + A^T B` with the stacked factors reshaped to `[T M, H]` and
    `[T M, G]`: one GEMM with K = T B. The sum is the same, in another order. Runs in the
    lowering after attn-hoist-scan-projections (which makes the saved states sequences);
    attnc's `--no-fuse=hoist` leaves it out.
  }];
}

def AttnStoreScanResiduals : Pass<"attn-store-scan-residuals", "mlir::ModuleOp"> {
  let summary = "has a forward scan store what its backward would recompute, within a budget";
  let description = [{
    The backward scan that attn-autodiff builds gets only the carried values entering each
    step (`attn.saved_carries`) and recomputes the forward step from them before applying
    the gradient rules: every matmul, cell and attention of the step runs twice per training
    step. For each such pair (a reverse scan reading a forward scan's saved carries), this
    pass finds the recomputation in the backward body (the pure ops computed from the
    forward's carries, step inputs and consts only) and the values of it that the gradient
    ops read (the residuals: gate activations, `tanh` of attention scores, softmax weights).
    The forward scan yields each stored residual as a new per-step output (stacked
    `[.., T, ..]`, before the saved carries, which stay last) and the backward reads it as a
    sequence; the recomputation nothing reads any more is erased.

    Storing costs memory: `budget-mb` MiB per function (one call), filled with the residuals
    that save the most recomputation per byte (FLOPs of the matmuls they come from, one per
    element elsewhere); what does not fit is still recomputed, from the stored values where
    it can. Views of saved values (reshapes) and constants are never stored. `budget-mb=0`
    recomputes everything. attnc sets the budget from `train.scan_memory` and runs the pass
    right after attn-autodiff, so `attnc emit --stage=grad` shows the choice (and with
    `--remarks`, a remark at each layer: how many values it stores, how many it recomputes
    for want of budget); `--no-fuse` and `--no-fuse=hoist` leave it out.
  }];
  let options = [
    Option<"budgetMb", "budget-mb", "int64_t", /*default=*/"1024",
           "MiB of stored per-step values per function">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "report, for each forward scan, how many values it stores and recomputes (as a "
           "remark)">
  ];
}

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "rewrites composite ops (cells) into core attn ops";
  let description = [{
    Replaces every op implementing `DecomposableOpInterface` by its decomposition (for
    `attn.rnn_cell`: `tanh(dense(x, w_ax, b) + matmul(h, w_aa))`) until none is left. Run
    after fusion (which wants to see whole cells) and before the lowerings, which only know
    core ops.
  }];
}

def AttnPackedEntries : Pass<"attn-packed-entries", "mlir::ModuleOp"> {
  let summary = "gives every entry point the runtime's `void f(void **args)` C ABI";
  let description = [{
    Runs on bufferized code (outputs already turned into out-parameters). For each public
    function `@f` it creates `@<prefix>f(!llvm.ptr)` that loads one buffer pointer per
    argument from the array, rebuilds each static memref descriptor and calls `@f`, which
    becomes private (and is inlined by LLVM). See runtime/include/attn/abi.h.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"attn_\"",
           "symbol prefix of the packed entry points (the model's C name)">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect"];
}

def AttnFuseElementwise : Pass<"attn-fuse-elementwise"> {
  let summary = "fuses chains of elementwise linalg ops that compute each element once";
  let description = [{
    Runs on tensors after `attn-to-linalg`. A `linalg.generic` whose result has one user, a
    `linalg.generic` that reads each of its elements once (its indexing map for that operand
    is a permutation of the consumer's loops), is fused into that user: a decomposed
    softmax, layer norm or GELU, an optimizer update become one loop nest each, with fewer
    passes over memory and fewer loops for LLVM. MLIR's own elementwise fusion also fuses into
    consumers that broadcast the producer, recomputing it once per broadcast element (a
    `tanh` of `[B, H]` recomputed for every source position); this pass does not.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def AttnOutlineLoops : Pass<"attn-outline-loops", "mlir::ModuleOp"> {
  let summary = "moves every linalg op on buffers into its own function";
  let description = [{
    Runs on bufferized code, before linalg becomes loops. Each linalg op (a fused
    elementwise chain, a reduction, a transpose, a fill, a copy) becomes a call of a new
    private function `@<func>_loop<N>` that holds it alone, its buffers as arguments and
    marked `noinline`. LLVM's loop analyses (scalar evolution, dominator queries) cost more
    than linearly in the number of loops in one function; a Transformer's training step holds
    thousands of them, and compiling it whole took minutes. One loop nest per function keeps
    the compile time linear; the call costs nanoseconds against the loop's work. Functions
    with fewer than `min-loops` linalg ops stay whole (there, LLVM is fast anyway, and small
    loops in a scan's step are better inlined).
  }];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", /*default=*/"200",
           "outline only in functions with at least this many linalg ops">
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def AttnExpandMath : Pass<"attn-expand-math"> {
  let summary = "replaces math.tanh/exp/log/... by polynomial approximations";
  let description = [{
    libm calls block LLVM's loop vectorizer; MLIR's polynomial approximations are plain
    arithmetic (float32 error within a few ulp), so elementwise loops vectorize.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::vector::VectorDialect",
                           "mlir::math::MathDialect"];
}

def AttnInternalize : Pass<"attn-internalize", "mlir::ModuleOp"> {
  let summary = "hides every LLVM function but the packed entry points";
  let description = [{
    Runs last, on the LLVM dialect. Helpers that lowering creates under fixed names
    (`forward`, `dealloc_helper`, the C-interface wrappers of runtime kernels) get internal
    linkage, so several compiled models link into one program, and LLVM may inline them.
    Declarations (the runtime's kernels and allocator) keep external linkage.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"attn_\"",
           "symbol prefix of the entry points that stay visible">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttnAutodiff : Pass<"attn-autodiff", "mlir::ModuleOp"> {
  let summary = "reverse-mode differentiation of a loss function";
  let description = [{
    For `@<func>` (default `@loss`), whose first result is a rank-0 f32 loss, adds
    `@<func>_grad` with the same arguments returning the loss followed by the gradient of
    every trainable `attn.param` it reads (by name, in order of first appearance; result
    names `loss` and `grad:<param>`). Gradients come from each op's
    `DifferentiableOpInterface` rule; `attn.scan` is differentiated as back-propagation
    through time. Integer values (token ids, labels) get no gradient. An op between the
    parameters and the loss without a rule is an error naming the op.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"loss\"",
           "the function to differentiate">
  ];
}

def AttnTrainStep : Pass<"attn-train-step", "mlir::ModuleOp"> {
  let summary = "builds @train_step: loss, gradients, clipping and the optimizer update";
  let description = [{
    From `@loss_grad` (made by attn-autodiff) builds `@train_step` taking the loss's
    arguments plus the learning rate `lr` and the 1-based step count `step` (rank-0 f32), and
    returning `loss`, `grad_norm` (the global L2 norm before clipping) and the new value of
    every parameter and optimizer state (`update:<name>`). Optimizer state (momentum, Adam's
    moments) is non-trainable `attn.param`s initialised to zeros, named `<param>/<state>`.
    With `clip-norm > 0` gradients are scaled by `min(1, clip_norm / grad_norm)`.

    With `split-update`, the update alone is also an entry: `@apply_update(grad:<param>...,
    lr, step) -> (grad_norm, update:<name>...)`, for a caller that combines the gradients of
    `@loss_grad` first (data-parallel training sums every rank's before the update, so the
    clipping sees the global norm and every rank applies the same step). Its clipping and
    optimizer ops are the ones `@train_step` has.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "sgd | adam | adamw">,
    Option<"momentum", "momentum", "float", /*default=*/"0.0f", "sgd momentum">,
    Option<"beta1", "beta1", "float", /*default=*/"0.9f", "adam beta1">,
    Option<"beta2", "beta2", "float", /*default=*/"0.999f", "adam beta2">,
    Option<"epsilon", "epsilon", "float", /*default=*/"1.0e-8f", "adam epsilon">,
    Option<"weightDecay", "weight-decay", "float", /*default=*/"0.0f",
           "L2 penalty (sgd, adam) or decoupled decay (adamw)">,
    Option<"clipNorm", "clip-norm", "float", /*default=*/"0.0f",
           "global gradient-norm clipping threshold; 0 disables it">,
    Option<"splitUpdate", "split-update", "bool", /*default=*/"false",
           "also build @apply_update, the update from given gradients">
  ];
}

def AttnLossWeight : Pass<"attn-loss-weight", "mlir::ModuleOp"> {
  let summary = "builds @loss_weight: what one batch's mean loss weighs in a larger batch's";
  let description = [{
    Adds `@loss_weight`, with `@loss`'s arguments, returning `weight` (rank-0 f32): the
    number of terms the loss averages over. For `attn.cross_entropy` that is the count of
    positions whose label is not ignored (`attn.label_count`); for `attn.mse` every shard has
    as many elements, so the weight is 1. Data-parallel training needs it because a padded
    batch's shards hold different numbers of tokens: the mean over the whole batch is
    `sum_r w_r loss_r / sum_r w_r`, and the same weights combine the gradients, so a step
    over N shards equals the step over one batch. A loss that adds terms to such a mean
    (`attn.add` / `attn.sub` chains whose first operand leads to it: hard attention's
    score-function term and entropy bonus, normalised by the same count) weighs what the mean
    does. A loss of any other form is an error that names its op (its shard weight is not
    known).
  }];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
