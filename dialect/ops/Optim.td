//===- Optim.td - optimizer updates ------------------------------------------------------===//
//
// One op per optimizer, so a whole training step (loss, gradients, update) is one compiled
// call. The learning rate and the step count are rank-0 inputs: schedules live in the
// runtime and change nothing in the compiled code.
//
//===----------------------------------------------------------------------------------===//
#ifndef ATTN_OPS_OPTIM_TD
#define ATTN_OPS_OPTIM_TD

include "dialect/AttnBase.td"

def Attn_SgdUpdateOp : Attn_Op<"sgd_update", [Pure, AllTypesMatch<["param", "grad", "velocity",
                                                                   "new_param", "new_velocity"]>]> {
  let summary = "stochastic gradient descent with momentum and weight decay";
  let description = [{
    `g' = grad + weight_decay * param`, `velocity' = momentum * velocity + g'`,
    `param' = param - lr * velocity'` (PyTorch's SGD; with `momentum = 0` plain SGD).

    ```mlir
    %p2, %v2 = attn.sgd_update %p, %g, %v, %lr {momentum = 0.9 : f32}
        : tensor<32x32xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$param, Attn_FloatTensor:$grad,
                       Attn_FloatTensor:$velocity, Attn_FloatTensor:$lr,
                       DefaultValuedAttr<F32Attr, "0.0f">:$momentum,
                       DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay);
  let results = (outs Attn_FloatTensor:$new_param, Attn_FloatTensor:$new_velocity);
  let assemblyFormat = [{
    $param `,` $grad `,` $velocity `,` $lr attr-dict `:` type($param) `,` type($lr)
  }];
  let hasVerifier = 1;
}

def Attn_AdamUpdateOp : Attn_Op<"adam_update", [Pure,
    AllTypesMatch<["param", "grad", "m", "v", "new_param", "new_m", "new_v"]>,
    AllTypesMatch<["lr", "step"]>]> {
  let summary = "Adam, or AdamW with decoupled weight decay";
  let description = [{
    With `t = step` (counting from 1):
    `g' = grad + weight_decay * param` (Adam) or `g' = grad` (AdamW, `decoupled`),
    `m' = beta1 m + (1 - beta1) g'`, `v' = beta2 v + (1 - beta2) g'^2`,
    `param' = param - lr * (m' / (1 - beta1^t)) / (sqrt(v' / (1 - beta2^t)) + epsilon)`
    and, for AdamW, also `- lr * weight_decay * param` (PyTorch's Adam and AdamW).

    ```mlir
    %p2, %m2, %v2 = attn.adam_update %p, %g, %m, %v, %lr, %t {decoupled, weight_decay = 0.01 : f32}
        : tensor<32x32xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$param, Attn_FloatTensor:$grad, Attn_FloatTensor:$m,
                       Attn_FloatTensor:$v, Attn_FloatTensor:$lr, Attn_FloatTensor:$step,
                       DefaultValuedAttr<F32Attr, "0.9f">:$beta1,
                       DefaultValuedAttr<F32Attr, "0.999f">:$beta2,
                       DefaultValuedAttr<F32Attr, "1.0e-8f">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay,
                       UnitAttr:$decoupled);
  let results = (outs Attn_FloatTensor:$new_param, Attn_FloatTensor:$new_m,
                      Attn_FloatTensor:$new_v);
  let assemblyFormat = [{
    $param `,` $grad `,` $m `,` $v `,` $lr `,` $step attr-dict `:` type($param) `,` type($lr)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_OPS_OPTIM_TD
