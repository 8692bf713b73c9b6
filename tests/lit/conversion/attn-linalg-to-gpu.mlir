// RUN: attn-opt %s -attn-linalg-to-gpu -canonicalize | FileCheck %s
// RUN: attn-opt %s -attn-linalg-to-gpu=block-size=64 -canonicalize | FileCheck %s --check-prefix=BLOCK

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// An elementwise op: one thread per element, the last loop fastest; 1200 elements in 5
// blocks of 256 threads, the 80 past the last idle.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C30:.*]] = arith.constant 30 : index
// CHECK-DAG:     %[[C1200:.*]] = arith.constant 1200 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C5]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BD:.*]] = %[[C256]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK:           %[[B:.*]] = arith.muli %[[BX]], %[[BD]]
// CHECK:           %[[P:.*]] = arith.addi %[[B]], %[[TX]]
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[P]], %[[C1200]]
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[J:.*]] = arith.remui %[[P]], %[[C30]]
// CHECK:             %[[I:.*]] = arith.divui %[[P]], %[[C30]]
// CHECK:             memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK:             math.exp
// CHECK:             memref.store %{{.*}}[%[[I]], %[[J]]]
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.
// BLOCK-LABEL: func.func @elementwise
// BLOCK:         %[[C64:.*]] = arith.constant 64 : index
// BLOCK:         threads({{.*}}) in (%{{.*}} = %[[C64]],
func.func @elementwise(%x: memref<40x30xf32>, %y: memref<40x30xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<40x30xf32>) outs(%y : memref<40x30xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// Column sums, the reduction loop first: interchanged, so that a thread owns a column and
// sums its rows in order, as the CPU's loops do.
// CHECK-LABEL: func.func @column_sums
// CHECK:         gpu.launch
// CHECK-SAME:      threads(%[[P:[^,]*]],
// CHECK:           scf.if
// CHECK:             scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK:               memref.load %{{.*}}[%[[R]], %[[P]]] : memref<4x6xf32>
// CHECK:               arith.addf
// CHECK:               memref.store %{{.*}}[%[[P]]] : memref<6xf32>
func.func @column_sums(%x: memref<4x6xf32>, %cols: memref<6xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%cols : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = arith.addf %a, %b : f32
    linalg.yield %e : f32
  }
  return
}

// A dynamic size: the grid is ceil(n / 256) blocks, at least one.
// CHECK-LABEL: func.func @dynamic
// CHECK:         %[[N:.*]] = memref.dim
// CHECK:         %[[LAST:.*]] = arith.subi %[[N]], %{{.*}}
// CHECK:         %[[M:.*]] = arith.maxsi %[[LAST]], %{{.*}}
// CHECK:         %[[FULL:.*]] = arith.divui %[[M]], %{{.*}}
// CHECK:         %[[BLOCKS:.*]] = arith.addi %[[FULL]], %{{.*}}
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[BLOCKS]],
func.func @dynamic(%x: memref<?xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%x : memref<?xf32>)
  return
}

// A scalar, and a sum to one value: one thread.
// CHECK-LABEL: func.func @one_thread
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE:[^,]*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads({{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK:           memref.store {{.*}}[] : memref<f32>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads({{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK:           scf.for
// CHECK:             arith.addf
func.func @one_thread(%x: memref<8xf32>, %s: memref<f32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%s : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<8xf32>) outs(%s : memref<f32>) {
  ^bb0(%a: f32, %b: f32):
    %e = arith.addf %a, %b : f32
    linalg.yield %e : f32
  }
  return
}

// Ops on tensors are not the bufferized program's loops: left alone.
// CHECK-LABEL: func.func @tensors
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.fill
func.func @tensors(%t: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.fill ins(%z : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// A large sum to one value (a squared norm of 200 x 100 = 20000 points): a launch of strided
// shares (20000 / (16 x 256) = 4 blocks of 256 threads, each thread from -0, the add's
// identity, over the points p, p + 1024, ...), then one thread adding the shares, in order,
// to the output's value.
// CHECK-LABEL: func.func @large_sum
// CHECK:         %[[SHARES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256,
// CHECK:           %[[P:.*]] = arith.addi
// CHECK:           %[[SHARE:.*]] = scf.for %[[K:.*]] = %[[P]] to %c20000 step %c1024 iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK:             %[[J:.*]] = arith.remui %[[K]], %c100
// CHECK:             %[[I:.*]] = arith.divui %[[K]], %c100
// CHECK:             %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK:             %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK:             arith.addf %[[SQ]], %[[ACC]]
// CHECK:           memref.store %[[SHARE]], %[[SHARES]][%[[P]]]
// CHECK:           gpu.terminator
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c1,
// CHECK:           %[[INIT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %c1024 step %c1 iter_args(%[[T:.*]] = %[[INIT]]) -> (f32)
// CHECK:             %[[S:.*]] = memref.load %[[SHARES]]
// CHECK:             arith.addf %[[S]], %[[T]]
// CHECK:           memref.store %[[SUM]], %{{.*}}[] : memref<f32>
// CHECK:         memref.dealloc %[[SHARES]]
// CHECK-NOT:     linalg.
func.func @large_sum(%x: memref<200x100xf32>, %norm: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<200x100xf32>) outs(%norm : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  return
}
