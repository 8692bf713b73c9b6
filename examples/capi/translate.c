/* A C program over a model compiled with `attnc compile MODEL.yaml --ckpt RUN --lib -o
 * libmodel.a`: reads lines on stdin and prints the model's answer to each (a translation, a
 * tagger's tags, a classifier's label). Usage: translate [CHECKPOINT] < lines.txt
 *   cc translate.c libmodel.a -I. -ldnnl -fopenmp -lstdc++ -lm -o translate */
#define _POSIX_C_SOURCE 200809L /* getline, strdup */
#include "libmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (attnc_abi_version() != ATTNC_ABI_VERSION) {
    fprintf(stderr, "translate: built for C API %d, the library has %d\n", ATTNC_ABI_VERSION,
            attnc_abi_version());
    return 1;
  }
  attnc_model *model = NULL;
  if (attnc_open(argc > 1 ? argv[1] : NULL, &model) != ATTNC_OK) {
    fprintf(stderr, "translate: %s\n", attnc_last_error());
    return 1;
  }
  /* Every line of stdin (any length: getline), then one call for all of them. */
  size_t count = 0, capacity = 16;
  char **lines = malloc(capacity * sizeof *lines);
  char *line = NULL;
  size_t size = 0;
  ssize_t n;
  while (lines && (n = getline(&line, &size, stdin)) >= 0) {
    line[strcspn(line, "\r\n")] = '\0';
    if (count == capacity) {
      char **grown = realloc(lines, (capacity *= 2) * sizeof *lines);
      if (!grown)
        break;
      lines = grown;
    }
    if (!(lines[count] = strdup(line)))
      break;
    ++count;
  }
  free(line);
  if (!feof(stdin)) {
    fprintf(stderr, "translate: cannot read stdin (or out of memory)\n");
    return 1;
  }
  char **outputs = calloc(count ? count : 1, sizeof *outputs);
  if (!lines || !outputs) {
    fprintf(stderr, "translate: out of memory\n");
    return 1;
  }
  attnc_status status = attnc_translate(model, (const char *const *)lines, count, outputs);
  if (status != ATTNC_OK) {
    fprintf(stderr, "translate: %s model %s: %s (status %d)\n", attnc_model_task(model),
            attnc_model_name(model), attnc_last_error(), (int)status);
    attnc_close(model);
    return 1;
  }
  for (size_t i = 0; i < count; ++i) {
    printf("%s\n", outputs[i]);
    attnc_free(outputs[i]);
    free(lines[i]);
  }
  free(outputs);
  free(lines);
  attnc_close(model);
  return 0;
}
