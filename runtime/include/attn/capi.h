/* The C API of a model compiled as a library (`attnc compile MODEL.yaml --lib -o libMODEL.a`):
 * open it (with its built-in weights or a checkpoint's), translate or label a batch of lines,
 * generate text, run training steps. Plain C; no exception crosses it: every call returns a
 * status, and attnc_last_error() says what went wrong.
 *
 * Thread safety: any function may be called from any thread. Calls are serialised by one
 * process-wide lock (each one uses every core already, through OpenMP), so a handle may be
 * shared; attnc_last_error() is per thread.
 *
 * Memory: every string attnc returns is the caller's, freed with attnc_free().
 *
 * One model per program: the library defines the model's symbols (attn/app/Bundle.h). */
#ifndef ATTN_CAPI_H
#define ATTN_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of this header; attnc_abi_version() returns the version
 * the library was built with. */
#define ATTNC_ABI_VERSION 1

typedef enum {
  ATTNC_OK = 0,
  ATTNC_ERROR_ARGUMENT = 1, /* a null pointer, a count out of range, a verb of another task */
  ATTNC_ERROR_INPUT = 2,    /* an input line the model cannot read (too long, no tokens) */
  ATTNC_ERROR_FILE = 3,     /* a checkpoint that cannot be read or is another model's */
  ATTNC_ERROR_RUNTIME = 4   /* anything else: out of memory, a non-finite loss, ... */
} attnc_status;

typedef struct attnc_model attnc_model;

int attnc_abi_version(void);
/* The message of this thread's last failed call ("" when none); valid until its next call. */
const char *attnc_last_error(void);

/* Opens the model: with the parameters of `checkpoint` (a FILE, or a DIR meaning its best,
 * else its last checkpoint), or with the built-in ones when it is NULL. Weights that carry
 * their optimizer state and step (an attnc train checkpoint, or one attnc_save wrote) are
 * opened where their run stopped: attnc_train_steps continues it, as attnc train --resume
 * would; other weights start a new run (fresh optimizer state, step 0). */
attnc_status attnc_open(const char *checkpoint, attnc_model **model);
void attnc_close(attnc_model *model);
/* The model's name and task ("seq2seq", "tag", "classify", "lm", "regress"). */
const char *attnc_model_name(const attnc_model *model);
const char *attnc_model_task(const attnc_model *model);

/* One output per line: a seq2seq model's translation (its spec's decode: settings), a
 * tagger's tags (space-separated, one per token) or a classifier's label. outputs[i] receive
 * strings to attnc_free. On failure none is set: a line the model cannot read fails the call
 * with ATTNC_ERROR_INPUT, naming the line (1-based). */
attnc_status attnc_translate(attnc_model *model, const char *const *lines, size_t count,
                             char **outputs);
/* A language model: `length` characters after `prime`, sampled at `temperature` (0: the
 * likeliest) from `seed`. */
attnc_status attnc_generate(attnc_model *model, const char *prime, int64_t length,
                            double temperature, uint64_t seed, char **output);
/* `steps` training steps on the spec's training data (the compiled train step, the spec's
 * optimizer and schedule), continuing from the model's parameters, optimizer state and the
 * step count kept by the handle (see attnc_open); `loss` (may be NULL) receives the last
 * loss. */
attnc_status attnc_train_steps(attnc_model *model, int64_t steps, double *loss);
/* Writes the model's parameters (weights and optimizer state) to the checkpoint `path` as
 * attnc train writes its checkpoints: atomically (a temporary file renamed over `path`, so a
 * crash leaves the old file or the new one, never a torn one), with the spec, vocabularies
 * and the handle's step count in its metadata. attnc_open(path), attnc translate --ckpt and
 * attnc eval --ckpt read it. */
attnc_status attnc_save(attnc_model *model, const char *path);
/* The handle's step count: the steps of the run it continues, plus those it trained. */
int64_t attnc_model_step(const attnc_model *model);

void attnc_free(char *text);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_CAPI_H */
