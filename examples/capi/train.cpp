// A C++ program over a model compiled with `attnc compile MODEL.yaml --lib -o libmodel.a`:
// trains it for a few steps through the C API, saves it, then translates a line. The handle
// lives in a std::unique_ptr; a failed call becomes an exception here, on this side of the C
// boundary.
//   c++ -std=c++17 train.cpp libmodel.a -I. -ldnnl -fopenmp -o train
// Usage: train [--from CKPT] [--save CKPT] STEPS [LINE]
//   --from CKPT: open CKPT (a run's checkpoint continues where it stopped); else the
//                built-in weights
//   --save CKPT: write the trained model to CKPT (atomically), which --from, attnc translate
//                --ckpt and attnc eval --ckpt read
#include "libmodel.h"

#include <cstdio>
#include <cstring>
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
  const char *from = nullptr, *save = nullptr;
  int arg = 1;
  for (; arg + 1 < argc && argv[arg][0] == '-'; arg += 2)
    if (!std::strcmp(argv[arg], "--from"))
      from = argv[arg + 1];
    else if (!std::strcmp(argv[arg], "--save"))
      save = argv[arg + 1];
    else
      break;
  if (arg >= argc || argv[arg][0] == '-')
    throw std::runtime_error("usage: train [--from CKPT] [--save CKPT] STEPS [LINE]");
  attnc_model *raw = nullptr;
  check(attnc_open(from, &raw));
  Model model(raw);
  long steps = std::stol(argv[arg]);
  for (long done = 0; done < steps; ++done) {
    double loss = 0;
    check(attnc_train_steps(model.get(), 1, &loss));
    std::printf("step %lld loss %.9g\n", (long long)attnc_model_step(model.get()), loss);
  }
  if (save) {
    check(attnc_save(model.get(), save));
    std::printf("saved %s at step %lld\n", save, (long long)attnc_model_step(model.get()));
  }
  if (arg + 1 < argc) {
    const char *line = argv[arg + 1];
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
