/* Runtime kernels that compiled code calls (the attn-to-onednn lowering emits these calls).
 *
 * A call from MLIR to `func.func private @attn_rt_X(memref..., i64...) attributes
 * {llvm.emit_c_interface}` arrives here as `_mlir_ciface_attn_rt_X(attn_memrefN *...)`: each
 * memref is passed as a pointer to its descriptor (the layout MLIR's LLVM lowering uses).
 * Descriptors may be strided (views): kernels honour `strides` and `offset`. */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_MEMREF(N)                                                                             \
  typedef struct {                                                                                 \
    float *allocated;                                                                              \
    float *aligned;                                                                                \
    int64_t offset;                                                                                \
    int64_t sizes[N];                                                                              \
    int64_t strides[N];                                                                            \
  } attn_memref##N;
ATTN_MEMREF(1)
ATTN_MEMREF(2)
ATTN_MEMREF(3)
ATTN_MEMREF(4)
#undef ATTN_MEMREF

/* bfloat16 memrefs (the factors of a bf16 product): each element as its bits, the top half of
 * an f32. */
#define ATTN_MEMREF_BF16(N)                                                                        \
  typedef struct {                                                                                 \
    uint16_t *allocated;                                                                           \
    uint16_t *aligned;                                                                             \
    int64_t offset;                                                                                \
    int64_t sizes[N];                                                                              \
    int64_t strides[N];                                                                            \
  } attn_memref_bf16_##N;
ATTN_MEMREF_BF16(2)
ATTN_MEMREF_BF16(3)
#undef ATTN_MEMREF_BF16

/* c[i] = op(a[i]) x op(b[i]) for every batch i, through a cached oneDNN matmul primitive.
 * a: [Ba, M, K] (or [Ba, K, M] when trans_a), b: [Bb, K, N] (or [Bb, N, K] when trans_b),
 * c: [B, M, N] with Ba, Bb in {1, B}: a batch of size 1 broadcasts. */
void _mlir_ciface_attn_rt_matmul(attn_memref3 *a, attn_memref3 *b, attn_memref3 *c,
                                 int64_t trans_a, int64_t trans_b);

/* y = x w + bias.  x: [M, K], w: [K, N], bias: [N], y: [M, N]. */
void _mlir_ciface_attn_rt_dense(attn_memref2 *x, attn_memref2 *w, attn_memref1 *bias,
                                attn_memref2 *y);

/* The same products of bfloat16 factors, summed in f32 (attn-precision's bf16 policy; oneDNN's
 * avx512_core_bf16 matmul): the factors come rounded (attn-round-bf16-factors rounds each value
 * once, for every product that reads it; host code can use attn::cpu::roundToBf16); the bias
 * and the result are f32. Same shapes and strides as the f32 forms. */
void _mlir_ciface_attn_rt_matmul_bf16(attn_memref_bf16_3 *a, attn_memref_bf16_3 *b, attn_memref3 *c,
                                      int64_t trans_a, int64_t trans_b);
void _mlir_ciface_attn_rt_dense_bf16(attn_memref_bf16_2 *x, attn_memref_bf16_2 *w,
                                     attn_memref1 *bias, attn_memref2 *y);

/* The same products in int8 (attn-precision's int8 policy, inference; oneDNN's
 * avx512_core_vnni matmul): the weight (w; matmul: b, one [K, N] for every batch, a not
 * transposed) quantised per output column once and kept while its buffer lives, the rows of x
 * (a) per row at each call, int32 sums scaled back to f32. Same arguments as the f32 forms.
 * The kept copy is dropped when attn::bufferFree frees the weight's buffer (attn/Alloc.h):
 * a weight must live in such a buffer (every Tensor's does) and not be written while it is
 * kept. */
void _mlir_ciface_attn_rt_dense_int8(attn_memref2 *x, attn_memref2 *w, attn_memref1 *bias,
                                     attn_memref2 *y);
void _mlir_ciface_attn_rt_matmul_int8(attn_memref3 *a, attn_memref3 *b, attn_memref3 *c,
                                      int64_t trans_a, int64_t trans_b);

/* The cells of the recurrent kernels (`kind`). */
enum { ATTN_RNN_VANILLA = 0, ATTN_RNN_GRU = 1, ATTN_RNN_LSTM = 2 };

/* A whole recurrent layer through oneDNN's RNN primitives (vanilla tanh RNN, linear-before-
 * reset GRU, LSTM). x: [B, T, I]; h0, c0: [B, H]; w_ih: [I, G*H]; w_hh: [H, G*H]; b_ih, b_hh:
 * [G*H] in attn's layouts (GRU gates r, z, n as PyTorch); w_peephole: [3, H] (LSTM gates i, f,
 * o; read only when `peephole`); outputs: [B, T, H] (time order also when `reverse`), h_n,
 * c_n: [B, H]. c0 and c_n are used by the LSTM only and b_hh by the GRU only (the vanilla RNN
 * and LSTM have one bias); unused operands may alias others. With `projection` (LSTM only),
 * w_proj: [H, P] projects each step's hidden state without a bias, h_t = (o * tanh(c_t)) w_proj
 * (oneDNN's LSTMP): h0, h_n are then [B, P], w_hh [P, 4H] and outputs [B, T, P]; without it,
 * w_proj is not read. With
 * `training` the kernel runs oneDNN's training forward and keeps the workspace for the
 * backward kernel, keyed by the `outputs` buffer.
 *
 * With `masked`, mask [B, T, 1] blends each step's states, s + m (cell - s) (attn.rnn's masked
 * form): a step of mask 0 leaves the row's state (h, and c of an LSTM) as it was, and its
 * output repeats it. When every mask value is 0 or 1 the kernel packs each row's steps of
 * mask 1 in processing order and runs the rows, sorted by their number of such steps, in
 * segments of time over which the set of running rows does not change (PyTorch's packed
 * sequences): no work for padding. Another mask runs one step at a time over every row,
 * blending. Without `masked`, mask is not read. */
void _mlir_ciface_attn_rt_rnn_forward(attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0,
                                      attn_memref2 *w_ih, attn_memref2 *w_hh, attn_memref1 *b_ih,
                                      attn_memref1 *b_hh, attn_memref2 *w_peephole,
                                      attn_memref2 *w_proj, attn_memref3 *mask,
                                      attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
                                      int64_t kind, int64_t reverse, int64_t training,
                                      int64_t peephole, int64_t projection, int64_t masked);

/* The backward of attn_rt_rnn_forward: the forward's operands and results, the gradients of
 * its results (d_outputs, d_h_n, d_c_n) in, the gradients of its operands out (overwritten;
 * d_w_peephole only when `peephole`, d_w_proj only with a `projection`; d_x is 0 at masked
 * steps).
 * Uses the workspace of the training forward that wrote `outputs` when it is still cached
 * and `outputs` is unchanged, and recomputes it otherwise. */
void _mlir_ciface_attn_rt_rnn_backward(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
    attn_memref3 *d_outputs, attn_memref2 *d_h_n, attn_memref2 *d_c_n, attn_memref3 *d_x,
    attn_memref2 *d_h0, attn_memref2 *d_c0, attn_memref2 *d_w_ih, attn_memref2 *d_w_hh,
    attn_memref1 *d_b_ih, attn_memref1 *d_b_hh, attn_memref2 *d_w_peephole, attn_memref2 *d_w_proj,
    int64_t kind, int64_t reverse, int64_t peephole, int64_t projection, int64_t masked);

/* The same layers in bf16 (attn-precision's bf16 policy; oneDNN's avx512_core_bf16 RNN
 * primitives): same arguments, same f32 memrefs. The kernel rounds x, h0 and the weights to
 * bfloat16 as it reads them; the gates sum in f32, the outputs and h_n are the primitive's
 * bf16 states widened back to f32; the LSTM's cell state, the peepholes and the biases stay
 * f32, and so does every gradient the backward writes (oneDNN's bf16 backward). */
void _mlir_ciface_attn_rt_rnn_forward_bf16(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n, int64_t kind,
    int64_t reverse, int64_t training, int64_t peephole, int64_t projection, int64_t masked);
void _mlir_ciface_attn_rt_rnn_backward_bf16(
    attn_memref3 *x, attn_memref2 *h0, attn_memref2 *c0, attn_memref2 *w_ih, attn_memref2 *w_hh,
    attn_memref1 *b_ih, attn_memref1 *b_hh, attn_memref2 *w_peephole, attn_memref2 *w_proj,
    attn_memref3 *mask, attn_memref3 *outputs, attn_memref2 *h_n, attn_memref2 *c_n,
    attn_memref3 *d_outputs, attn_memref2 *d_h_n, attn_memref2 *d_c_n, attn_memref3 *d_x,
    attn_memref2 *d_h0, attn_memref2 *d_c0, attn_memref2 *d_w_ih, attn_memref2 *d_w_hh,
    attn_memref1 *d_b_ih, attn_memref1 *d_b_hh, attn_memref2 *d_w_peephole, attn_memref2 *d_w_proj,
    int64_t kind, int64_t reverse, int64_t peephole, int64_t projection, int64_t masked);

/* Flash attention: attn.fused_attention whose score is a plain dot product, per batch b and
 * head h,
 *   s[i, j] = scale * q[i] . k[j], over the keys j allowed for query i
 *             (mask[b, j] != 0, and j <= i + S - T when causal),
 *   out[i] = sum_j softmax_j(s)[i, j] v[j],  lse[i] = log sum_j exp(s[i, j]);
 *   a row with no allowed key: out[i] = 0, lse[i] = 0.
 * Tiled with an online softmax: the [T, S] scores never exist whole.
 * q [B, H, T, D], k [B, H, S, D], v [B, H, S, Dv], mask [B, S]; out [B, H, T, Dv], lse [B, H, T].
 */
void _mlir_ciface_attn_rt_flash_attention(attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                                          attn_memref2 *mask, attn_memref4 *out, attn_memref3 *lse,
                                          int64_t causal, float scale);

/* Its backward: the forward's operands and results and the results' gradients d_out
 * [B, H, T, Dv], d_lse [B, H, T] in; dq, dk, dv (the shapes of q, k, v) out. The probabilities
 * are recomputed tile by tile from lse. */
void _mlir_ciface_attn_rt_flash_attention_backward(attn_memref4 *q, attn_memref4 *k,
                                                   attn_memref4 *v, attn_memref2 *mask,
                                                   attn_memref4 *out, attn_memref3 *lse,
                                                   attn_memref4 *d_out, attn_memref3 *d_lse,
                                                   attn_memref4 *dq, attn_memref4 *dk,
                                                   attn_memref4 *dv, int64_t causal, float scale);

/* Both with every tile product in bf16 with f32 sums (attn-precision's bf16 policy): q (scaled),
 * k, v, d_out rounded once per call, the probabilities and dS once per tile; the softmax, lse
 * and the accumulators f32. Same arguments. */
void _mlir_ciface_attn_rt_flash_attention_bf16(attn_memref4 *q, attn_memref4 *k, attn_memref4 *v,
                                               attn_memref2 *mask, attn_memref4 *out,
                                               attn_memref3 *lse, int64_t causal, float scale);
void _mlir_ciface_attn_rt_flash_attention_backward_bf16(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref4 *out,
    attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse, attn_memref4 *dq,
    attn_memref4 *dk, attn_memref4 *dv, int64_t causal, float scale);

/* A score or mask region of one attn.fused_attention, compiled by attn-to-onednn into a
 * function over a tile t [rows, cols] (row stride ld) of queries i0.. and keys j0..:
 *   score:  t[r, c] = f(t[r, c], i0 + r, j0 + c, captures)   t holds the products q . k
 *   mask:   t[r, c] = m(i0 + r, j0 + c, captures) != 0 ? 1 : 0
 * Generated code takes each memref<?xf32> (here the tile, then the captures, one f32 per scalar
 * capture) in MLIR's calling convention: allocated and aligned pointers, offset, size, stride. */
typedef void (*attn_tile_fn)(float *, float *, int64_t, int64_t, int64_t, float *, float *, int64_t,
                             int64_t, int64_t, int64_t ld, int64_t rows, int64_t cols, int64_t i0,
                             int64_t j0);

/* The score region's backward on a tile: dots [rows, cols] are the products q . k and ds the
 * gradients of the scores f, which become, in place, the gradients of the products
 * (ds * df/d dot); d_captures (one f32 per capture) gains ds * df/d capture summed over the
 * tile. Memrefs as above: dots, ds, captures, d_captures. */
typedef void (*attn_tile_grad_fn)(float *, float *, int64_t, int64_t, int64_t, float *, float *,
                                  int64_t, int64_t, int64_t, float *, float *, int64_t, int64_t,
                                  int64_t, float *, float *, int64_t, int64_t, int64_t, int64_t ld,
                                  int64_t rows, int64_t cols, int64_t i0, int64_t j0);

/* Flash attention for a score "dot product, then scalar code": attn.fused_attention whose score
 * region is f(q . k, i, j, captures) and whose optional mask region is m(i, j, captures), both
 * compiled as tile functions (above). The same tiles and GEMMs as attn_rt_flash_attention with
 * `score` applied to each tile of products between the GEMMs; `mask` (read when has_mask)
 * classifies every (query tile, key tile) pair once per call, so that tiles it hides from
 * every query are skipped and fully allowed ones are not masked. captures [1, N] holds the N >= 1
 * scalar captures that every head reads; captures [H, N] one row per head (the lowering writes
 * a capture shared by the heads into every row), each head's row passed to the tile functions.
 * has_mask: 0 none, 1 a mask region, 2 one that reads a per-head capture (its tile verdicts
 * are then taken per head). window_left, window_right: a sliding window (FlashAttention-2's
 * window_size; the lowering's form of a mask region it recognises as one): query i sees key j
 * only where i - window_left <= j <= i + window_right, -1 leaving a side open; nothing outside
 * it is computed, and no mask function runs (a narrow window bounded on both sides goes in
 * bands of 64 queries over all their keys, forward, and of 32 keys over all their queries,
 * backward; a wider one in tiles, the tiles outside it skipped).
 * The products are scale * q . k (the GEMMs' alpha); has_score 0: that is the score (a score
 * region c * sum(q * k) under a mask: scale c, and `score` and `score_grad` are not called);
 * has_score 1: `score` applies to them (the lowering passes scale 1).
 * A row with no allowed key: out 0, lse 0. */
void _mlir_ciface_attn_rt_flash_attention_regions(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, int64_t causal, int64_t has_mask, int64_t window_left,
    int64_t window_right, int64_t has_score, float scale, attn_tile_fn score, attn_tile_fn mask_fn);
/* Its backward: dq, dk, dv and d_captures shaped as captures (their gradients, each row the
 * sum over its heads' tiles; overwritten). */
void _mlir_ciface_attn_rt_flash_attention_regions_backward(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse,
    attn_memref4 *dq, attn_memref4 *dk, attn_memref4 *dv, attn_memref2 *d_captures, int64_t causal,
    int64_t has_mask, int64_t window_left, int64_t window_right, int64_t has_score, float scale,
    attn_tile_fn score, attn_tile_grad_fn score_grad, attn_tile_fn mask_fn);
/* Both with bf16 tile products, as the _bf16 kernels above. Same arguments. */
void _mlir_ciface_attn_rt_flash_attention_regions_bf16(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, int64_t causal, int64_t has_mask, int64_t window_left,
    int64_t window_right, int64_t has_score, float scale, attn_tile_fn score, attn_tile_fn mask_fn);
void _mlir_ciface_attn_rt_flash_attention_regions_backward_bf16(
    attn_memref4 *q, attn_memref4 *k, attn_memref4 *v, attn_memref2 *mask, attn_memref2 *captures,
    attn_memref4 *out, attn_memref3 *lse, attn_memref4 *d_out, attn_memref3 *d_lse,
    attn_memref4 *dq, attn_memref4 *dk, attn_memref4 *dv, attn_memref2 *d_captures, int64_t causal,
    int64_t has_mask, int64_t window_left, int64_t window_right, int64_t has_score, float scale,
    attn_tile_fn score, attn_tile_grad_fn score_grad, attn_tile_fn mask_fn);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_KERNELS_H */
