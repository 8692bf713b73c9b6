/* A C program over a model compiled with `attnc compile MODEL.yaml --ckpt RUN --lib -o
 * libmodel.a`: reads lines on stdin and prints the model's answer to each (a translation, a
 * tagger's tags, a classifier's label). Usage: translate [CHECKPOINT] < lines.txt
 *   cc translate.c libmodel.a -I. -ldnnl -fopenmp -lstdc++ -lm -o translate */
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
  /* Every line of stdin, then one call for all of them. */
  size_t count = 0, capacity = 16;
  char **lines = malloc(capacity * sizeof *lines);
  char buffer[4096];
  while (lines && fgets(buffer, sizeof buffer, stdin)) {
    buffer[strcspn(buffer, "\r\n")] = '\0';
    if (count == capacity)
      lines = realloc(lines, (capacity *= 2) * sizeof *lines);
    if (lines)
      lines[count++] = strdup(buffer);
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
