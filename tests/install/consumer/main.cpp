// Runs the rnn-sine model compiled ahead of time with only the installed runtime: its forward
// from fresh parameters, a checkpoint of them saved and loaded back, the forward again (it must
// give the same outputs bit for bit), and a vocabulary round trip. Prints one line and exits 0
// when all of it holds.
#include "rnn_sine.h"

#include "attn/Init.h"
#include "attn/Program.h"
#include "attn/checkpoint/Checkpoint.h"
#include "attn/data/Sine.h"
#include "attn/data/Vocab.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCRATCH_DIR\n");
    return 2;
  }
  const attn_program_info &info = attn_rnn_sine_program;
  attn::Program program(&info);
  std::vector<attn::Tensor> params = attn::initParams(info, /*seed=*/1);
  const attn_entry_info &forward = program.entry("forward");
  const attn_tensor_info &in = forward.inputs[0]; // x [B, T, 1]
  attn::data::Examples data = attn::data::makeSine(in.shape[1], in.shape[0], /*seed=*/8);
  attn::Tensor x(ATTN_F32, {in.shape[0], in.shape[1], in.shape[2]});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = data.x.data<float>()[i];
  std::vector<attn::Tensor> y = program.call("forward", params, {x});

  attn::checkpoint::Checkpoint ckpt;
  for (int i = 0; i < info.num_params; ++i)
    ckpt.tensors.push_back({info.params[i].name, params[i]});
  ckpt.metadata["model"] = info.name;
  std::string path = std::string(argv[1]) + "/params.safetensors";
  attn::checkpoint::save(path, ckpt);
  attn::checkpoint::Checkpoint loaded = attn::checkpoint::load(path);
  std::vector<attn::Tensor> reloaded;
  for (int i = 0; i < info.num_params; ++i)
    reloaded.push_back(*loaded.find(info.params[i].name));
  std::vector<attn::Tensor> y2 = program.call("forward", reloaded, {x});

  int64_t n = y[0].numel();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(y[0].data<float>()[i]) || y[0].data<float>()[i] != y2[0].data<float>()[i]) {
      std::fprintf(stderr, "consumer: output %lld differs after the checkpoint round trip\n",
                   (long long)i);
      return 1;
    }
  attn::data::Vocab vocab = attn::data::Vocab::build({{"a", "b", "a"}}, 1, 0);
  if (attn::data::Vocab::deserialize(vocab.serialize()) != vocab ||
      loaded.metadata.at("model") != "rnn-sine") {
    std::fprintf(stderr, "consumer: vocabulary or metadata round trip failed\n");
    return 1;
  }
  std::printf("installed runtime: %s forward %lld outputs, y[0] = %.6f, checkpoint round trip ok\n",
              info.name, (long long)n, y[0].data<float>()[0]);
  return 0;
}
