// RUN: attn-opt --attn-update-carried-in-place %s | FileCheck %s
// RUN: attn-opt --attn-update-carried-in-place --attn-lower-to-llvm %s -o /dev/null

// A loop-carried sum updated elementwise writes over the carried tensor: the body reads it as
// %out, so that one-shot bufferization updates one buffer for the whole loop.

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @gradient_sum
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%[[ACC]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[STEP:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[OUT]], %[[STEP]]
func.func @gradient_sum(%d: tensor<3x4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %sum = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (tensor<4x8xf32>) {
    %step = tensor.extract_slice %d[%t, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<3x4x8xf32> to tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %step : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %v = arith.addf %a, %s : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next : tensor<4x8xf32>
  }
  return %sum : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @filled_sum
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: outs(%[[ACC]] : tensor<4x8xf32>)
func.func @filled_sum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %acc : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%s: f32, %a: f32, %out: f32):
      %v = arith.mulf %a, %s : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next : tensor<4x8xf32>
  }
  return %sum : tensor<4x8xf32>
}

// Left alone: a carried tensor that starts as the function's argument (one-shot bufferization
// would write into the caller's buffer), one that another op reads too, one read through a
// transpose, one updated in an inner loop, and one whose update the loop yields in another
// slot.

// CHECK-LABEL: func.func @starts_as_argument
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @starts_as_argument(%h0: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %h = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %h0) -> (tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %v = arith.addf %a, %s : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @read_by_another_op
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @read_by_another_op(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %r:2 = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %zero, %seen = %zero) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %v = arith.addf %a, %s : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %e2 = tensor.empty() : tensor<4x8xf32>
    %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
    ^bb0(%a: f32, %out: f32):
      %v = arith.addf %a, %a : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next, %twice : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @transposed
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
func.func @transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<4x4xf32>
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (tensor<4x4xf32>) {
    %e = tensor.empty() : tensor<4x4xf32>
    %next = linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %v = arith.addf %a, %s : f32
      linalg.yield %v : f32
    } -> tensor<4x4xf32>
    scf.yield %next : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @inner_loop
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @inner_loop(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (tensor<4x8xf32>) {
    %inner = scf.for %u = %c0 to %c3 step %c1 iter_args(%other = %zero) -> (tensor<4x8xf32>) {
      %e = tensor.empty() : tensor<4x8xf32>
      %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%acc, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
      ^bb0(%a: f32, %s: f32, %out: f32):
        %v = arith.addf %a, %s : f32
        linalg.yield %v : f32
      } -> tensor<4x8xf32>
      scf.yield %next : tensor<4x8xf32>
    }
    scf.yield %inner : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @other_slot
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @other_slot(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %r:2 = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %zero, %b = %zero) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %v = arith.addf %a, %s : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %b, %next : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
