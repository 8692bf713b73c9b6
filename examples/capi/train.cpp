// A C++ program over a model compiled with `attnc compile MODEL.yaml --lib -o libmodel.a`:
// trains it for a few steps through the C API, then translates a line. The handle lives in a
// std::unique_ptr; a failed call becomes an exception here, on this side of the C boundary.
//   c++ -std=c++17 train.cpp libmodel.a -I. -ldnnl -fopenmp -o train
// Usage: train STEPS [LINE]
#include "libmodel.h"

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

struct Close {
  void operator()(attnc_model *m) const { attnc_close(m); }
};
using Model = std::unique_ptr<attnc_model, Close>;

void check(attnc_status status) {
  if (status != ATTNC_OK)
    throw std::runtime_error(attnc_last_error());
}

} // namespace

int main(int argc, char **argv) try {
  if (argc < 2)
    throw std::runtime_error("usage: train STEPS [LINE]");
  attnc_model *raw = nullptr;
  check(attnc_open(nullptr, &raw));
  Model model(raw);
  long steps = std::stol(argv[1]);
  for (long done = 0; done < steps; ++done) {
    double loss = 0;
    check(attnc_train_steps(model.get(), 1, &loss));
    std::printf("step %ld loss %.9g\n", done + 1, loss);
  }
  if (argc > 2) {
    const char *line = argv[2];
    char *out = nullptr;
    check(attnc_translate(model.get(), &line, 1, &out));
    std::printf("%s -> %s\n", line, out);
    attnc_free(out);
  }
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "train: %s\n", e.what());
  return 1;
}
