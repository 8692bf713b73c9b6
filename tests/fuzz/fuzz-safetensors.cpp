// libFuzzer harness for the safetensors reader: any bytes as a checkpoint file either load
// (and then every tensor's data lies inside the file and matches its shape) or throw a
// std::exception with a message; never a crash, a hang or an allocation beyond the file.
#include "attn/checkpoint/Checkpoint.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = "/tmp/attn-fuzz-safetensors-" + std::to_string(getpid());
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    std::abort();
  try {
    attn::checkpoint::Checkpoint c = attn::checkpoint::load(path);
    size_t bytes = 0;
    for (const auto &[name, t] : c.tensors)
      bytes += t.nbytes();
    if (bytes > size)
      std::abort(); // tensors cannot hold more than the file does
  } catch (const std::exception &e) {
    if (!*e.what())
      std::abort(); // every refusal says why
  }
  return 0;
}
