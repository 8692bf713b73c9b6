/* The C ABI between compiled attnc modules and whoever calls them (the runtime, an AOT program).
 *
 * Every compiled entry point has the same shape:
 *
 *     void attn_<model>_<entry>(void **args);
 *
 * `args` holds one pointer per tensor, in this order: every parameter of the program (in the
 * order of attn_program_info.params), then the entry's inputs, then its outputs. Each pointer
 * is the first element of a dense row-major buffer of the declared static shape (f32 or i32).
 * Outputs are written by the callee; nothing is retained after the call returns.
 *
 * Plain C on purpose: an AOT object needs only this header, the runtime and oneDNN. */
#ifndef ATTN_ABI_H
#define ATTN_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_MAX_RANK 8

typedef enum { ATTN_F32 = 0, ATTN_I32 = 1 } attn_dtype;

/* One tensor of a program: a parameter, or an entry's input or output. */
typedef struct {
  const char *name;       /* "rnn.w_ax", "x", "y" */
  attn_dtype dtype;
  int32_t rank;
  int64_t shape[ATTN_MAX_RANK];
  const char *init;       /* parameters only: "zeros" | "ones" | "uniform" | "normal" |
                             "constant" | "alibi"; else NULL */
  float scale;            /* uniform: U(-scale, scale); normal: N(0, scale^2); constant: scale */
} attn_tensor_info;

typedef void (*attn_entry_fn)(void **args);

typedef struct {
  const char *name;       /* "forward" */
  attn_entry_fn fn;
  int32_t num_inputs;
  const attn_tensor_info *inputs;
  int32_t num_outputs;
  const attn_tensor_info *outputs;
  int64_t capacity; /* a step entry: the steps its carried state holds (a cached
                       Transformer's cache length), 0 when unbounded (recurrent state) */
} attn_entry_info;

typedef struct {
  const char *name;       /* the model's name from its spec */
  int32_t num_params;
  const attn_tensor_info *params;
  int32_t num_entries;
  const attn_entry_info *entries;
  /* The CPU the code was compiled for ("znver4", "x86-64-v3") and the instruction-set
     features it may use ("avx,avx2,fma,avx512f", comma-separated); NULL for code compiled
     in-process for this host. attn::Program refuses to run code on a CPU that lacks one
     (attn/Cpu.h): a message instead of SIGILL. */
  const char *cpu;
  const char *cpu_features;
  /* Where it runs: "cuda" for a program compiled with --device cuda (its kernels on an NVIDIA
     GPU, its temporaries that only the GPU touches device memory and its other buffers CUDA
     managed memory: attn/cuda/Offload.h), NULL for the CPU.
     attn::Program refuses to run it where no usable GPU is (or where the program was linked
     without attnc's CUDA runtime): a message instead of an abort at the first call. Opening
     it switches the runtime's allocator to managed memory (attn/Alloc.h). */
  const char *device;
} attn_program_info;

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ABI_H */
