// `--device cuda` as a user meets it (docs/cuda.md): what it lowers to the GPU and what it
// leaves on the CPU, what it says on a machine with no usable GPU (before any work), and, on a
// machine with one, training to the CPU's losses.
#include "AttncProcess.h"
#include "tests/support/Models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace {

const std::string kModel = std::string(ATTN_SOURCE_DIR) + "/models/char-transformer.yaml";
// One head of 64: the GPU kernels' head dim (the spec's four heads have 16).
const std::string kOneHead = " --set model.transformer.heads=1";

// Why this machine cannot run --device cuda programs ("" when it can), as attnc says it.
const std::string &cudaUnavailable() {
  static const std::string why = [] {
    std::string dir = e2e::scratch("device", "probe"), out;
    int rc = e2e::attnc("train " + kModel + kOneHead +
                            " --device cuda --steps 1 --no-compile-cache"
                            " --out " +
                            dir + "/run",
                        &out);
    auto at = out.find("attnc: error: --device cuda: ");
    return rc != 0 && at != std::string::npos ? out.substr(at) : std::string();
  }();
  return why;
}

// The values of `key` ("loss", "grad_norm") in a run's metrics.jsonl, step by step.
std::vector<double> metric(const std::string &metrics, const std::string &key) {
  std::ifstream in(metrics);
  std::vector<double> l;
  const std::string field = "\"" + key + "\": ";
  for (std::string line; std::getline(in, line);) {
    auto at = line.find(field);
    if (at != std::string::npos)
      l.push_back(std::stod(line.substr(at + field.size())));
  }
  return l;
}

TEST(DeviceCuda, TheFusedAttentionOfHeadDim64AndTheProductsRunOnTheGpu) {
  std::string out;
  // --train: the training program, whose backward calls the GPU too.
  ASSERT_EQ(e2e::attnc("emit --stage=lowered --train " + kModel + kOneHead + " --device cuda",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("call @attn_rt_cuda_flash_attention("), std::string::npos);
  EXPECT_NE(out.find("call @attn_rt_cuda_flash_attention_backward("), std::string::npos);
  EXPECT_NE(out.find("call @attn_rt_cuda_matmul("), std::string::npos);
  EXPECT_NE(out.find("call @attn_rt_cuda_dense("), std::string::npos);
  // Nothing is left to the CPU's kernels.
  EXPECT_EQ(out.find("call @attn_rt_flash_attention"), std::string::npos);
  EXPECT_EQ(out.find("call @attn_rt_matmul"), std::string::npos);
  EXPECT_EQ(out.find("call @attn_rt_dense"), std::string::npos);
  // bf16 products (train.precision) run on the GPU's tensor cores.
  out.clear();
  ASSERT_EQ(e2e::attnc("emit --stage=lowered --train " + kModel + kOneHead +
                           " --device cuda --set train.precision=bf16",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("call @attn_rt_cuda_matmul_bf16("), std::string::npos);
  EXPECT_NE(out.find("call @attn_rt_cuda_dense_bf16("), std::string::npos);
  EXPECT_EQ(out.find("call @attn_rt_matmul"), std::string::npos);
}

// The LLVM IR of a --device cuda program: its loop nests are launches of generated kernels
// (MLIR's mgpu* calls, which the CUDA runtime defines), their PTX a constant of the program,
// the host waits for them only where it touches memory, the globals it reads are copied
// into the runtime's buffers before any use, and the buffers only the GPU touches are device
// memory.
TEST(DeviceCuda, EveryLoopNestIsAKernelLaunchedOnTheGpu) {
  std::string out;
  ASSERT_EQ(e2e::attnc("emit --stage=llvm --train " + kModel + kOneHead + " --device cuda", &out),
            0)
      << out.substr(0, 2000);
  auto count = [&](const std::string &call) {
    size_t n = 0;
    for (size_t at = out.find(call); at != std::string::npos; at = out.find(call, at + 1))
      ++n;
    return n;
  };
  const size_t launches = count("call void @mgpuLaunchKernel(");
  EXPECT_GT(launches, 100u);
  // Launches are asynchronous; the host waits only where it touches memory
  // (attn-gpu-host-sync): 4 waits for 683 launches, one at each entry's return.
  const size_t waits = count("call void @attn_rt_cuda_synchronize(");
  EXPECT_GT(waits, 0u);
  EXPECT_LT(waits * 10, launches);
  // The buffers only the GPU touches are device memory (attn-device-buffers), each freed
  // there: all 394 of this program's (the constants' copies are queued on the GPU too).
  const size_t onDevice = count("call ptr @mgpuMemAlloc("),
               managed = count("call ptr @_mlir_memref_to_llvm_aligned_alloc(");
  EXPECT_GT(onDevice, 100u);
  EXPECT_EQ(managed, 0u) << onDevice << " device buffers, " << managed << " managed";
  EXPECT_EQ(count("call void @mgpuMemFree("), onDevice);
  EXPECT_NE(out.find(".visible .entry"), std::string::npos) << "no PTX in the program";
  EXPECT_NE(out.find("call ptr @mgpuModuleLoadJIT("), std::string::npos);
  EXPECT_NE(out.find("call void @mgpuMemcpy("), std::string::npos) << "no constant is copied";
  // The CPU program of the same model: no launch.
  out.clear();
  ASSERT_EQ(e2e::attnc("emit --stage=llvm --train " + kModel + kOneHead, &out), 0);
  EXPECT_EQ(out.find("@mgpuLaunchKernel"), std::string::npos);
}

// `attnc emit --stage=lowered` of models/NAME.yaml for the GPU (with remarks on stderr).
std::string loweredForGpu(const std::string &name, const std::string &flags = "") {
  std::string out;
  EXPECT_EQ(e2e::attnc("emit --stage=lowered " + std::string(ATTN_SOURCE_DIR) + "/models/" +
                           name + ".yaml --device cuda --remarks" + flags,
                       &out),
            0)
      << out;
  return out;
}

// The LSTM, GRU and vanilla RNN layers, masked (a tagger's padded rows) or not, projected
// (oneDNN's LSTMP on the CPU) or not, run the GPU's sequence loop.
TEST(DeviceCuda, RecurrentLayersRunOnTheGpu) {
  const std::pair<const char *, const char *> models[] = {
      {"sines-forecast", ""},
      {"pos-tagger", ""},
      {"rnn-sine", ""},
      {"sines-forecast", " --set model.rnn.projection=16"}};
  for (auto [model, set] : models) {
    std::string out = loweredForGpu(model, std::string(" --train") + set);
    EXPECT_NE(out.find("call @attn_rt_cuda_rnn_forward("), std::string::npos) << model << set;
    EXPECT_NE(out.find("call @attn_rt_cuda_rnn_backward("), std::string::npos) << model << set;
    EXPECT_EQ(out.find("call @attn_rt_rnn_"), std::string::npos) << model << set;
  }
}

// An attention the flash kernels do not take (head dim 16 here; an additive score, a local
// window, read weights in the models below) runs as a kernel generated for it on the GPU,
// never on the CPU, forward and backward, and --remarks says why it is not on the flash
// kernels.
TEST(DeviceCuda, AttentionTheFlashKernelsLackIsAGeneratedGpuKernel) {
  std::string out;
  ASSERT_EQ(e2e::attnc("emit --stage=lowered " + kModel + " --device cuda --remarks", &out), 0)
      << out;
  EXPECT_NE(out.find("remark: a generated GPU kernel (a thread per row), not the flash kernels: "
                     "its head dims are 16 (keys) and 16 (values)"),
            std::string::npos)
      << out.substr(0, 2000);
  for (const char *model : {"dates-bahdanau", "dates-local-predictive", "char-alibi-graph"}) {
    out = loweredForGpu(model, " --train");
    EXPECT_EQ(out.find("call @attn_rt_flash_attention"), std::string::npos) << model;
    EXPECT_NE(out.find("call @attn_fused_attention_grad_"), std::string::npos) << model;
    EXPECT_NE(out.find("func.func private @attn_fused_attention_grad_"), std::string::npos);
    std::string kernel = out.substr(out.find("func.func private @attn_fused_attention_grad_"));
    EXPECT_NE(kernel.find("gpu.launch"), std::string::npos) << model;
  }
}

TEST(DeviceCuda, WithoutAUsableGpuNothingStartsAndAttncSaysWhy) {
  if (cudaUnavailable().empty())
    GTEST_SKIP() << "this machine has a usable GPU";
  std::string dir = e2e::scratch("device", "no-gpu"), out;
  EXPECT_EQ(e2e::attnc("train " + kModel + " --device cuda --steps 2 --out " + dir + "/run", &out),
            1);
  EXPECT_NE(out.find("attnc: error: --device cuda: "), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run")) << "a run directory for a run that never ran";
}

// Ahead of time: the object's program info says it needs a GPU, and an executable links the
// CUDA runtime (never the driver, so it starts anywhere) and refuses, with the reason, to run
// where there is no usable GPU.
TEST(DeviceCuda, AheadOfTimeProgramsSayTheyNeedAGpu) {
  std::string dir = e2e::scratch("device", "aot"), out;
  ASSERT_EQ(e2e::attnc("compile " + kModel + kOneHead + " --device cuda -o " + dir +
                           "/m.o --header " + dir + "/m.h",
                       &out),
            0)
      << out;
  std::ifstream header(dir + "/m.h");
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(", \"cuda\"};"), std::string::npos) << "the program info names no device";

  out.clear();
  int rc = e2e::attnc(
      "compile " + kModel + kOneHead + " --device cuda --exe -o " + dir + "/generate", &out);
  if (!ATTN_HAVE_CUDA) {
    EXPECT_EQ(rc, 1);
    EXPECT_NE(out.find("has no CUDA runtime to link a --device cuda program with"),
              std::string::npos)
        << out;
    EXPECT_FALSE(std::filesystem::exists(dir + "/generate"));
    return;
  }
  ASSERT_EQ(rc, 0) << out;
  out.clear();
  ASSERT_EQ(e2e::shell("ldd " + dir + "/generate", &out), 0) << out;
  for (const char *library : {"libcuda.so", "libcublasLt", "libLLVM", "libMLIR"})
    EXPECT_EQ(out.find(library), std::string::npos) << library << " is linked:\n" << out;
  // The generated kernels travel as PTX, and the launches find the runtime's mgpu* functions.
  out.clear();
  EXPECT_EQ(e2e::shell("grep -a -q '.visible .entry' " + dir + "/generate", &out), 0)
      << "no PTX in the executable";
  ASSERT_EQ(e2e::shell("nm " + dir + "/generate", &out), 0);
  for (const char *symbol :
       {" T mgpuLaunchKernel", " T attn_cuda_device_unavailable", " T attn_cuda_use_device_memory"})
    EXPECT_NE(out.find(symbol), std::string::npos) << symbol;
  out.clear();
  ASSERT_EQ(e2e::shell(dir + "/generate info", &out), 0) << out;
  EXPECT_NE(out.find("running on cuda"), std::string::npos) << out;
  if (!cudaUnavailable().empty()) {
    out.clear();
    EXPECT_EQ(e2e::shell(dir + "/generate run --count 4", &out), 1) << out;
    EXPECT_NE(out.find("was compiled with --device cuda and cannot run here: "),
              std::string::npos)
        << out;
  }
}

// `attnc train SPEC --steps N` on the CPU and with `--device DEVICE`: each step's loss within
// `tolerance` relative of the CPU's.
void expectTheCpuLosses(const std::string &spec, const std::string &device, int steps,
                        double tolerance, bool gradNorms = true) {
  std::string dir = e2e::scratch("device", device), out;
  const std::string common =
      "train " + spec + " --steps " + std::to_string(steps) + " --no-compile-cache";
  ASSERT_EQ(e2e::attnc(common + " --out " + dir + "/cpu", &out), 0) << out;
  ASSERT_EQ(e2e::attnc(common + " --device " + device + " --out " + dir + "/device", &out), 0)
      << out;
  // The losses, and with `gradNorms` the gradients' norms (sums of many squares: split across
  // threads on the GPU, attn-linalg-to-gpu).
  for (const char *key : {"loss", "grad_norm"}) {
    if (!gradNorms && std::string(key) == "grad_norm")
      continue;
    std::vector<double> cpu = metric(dir + "/cpu/metrics.jsonl", key),
                        other = metric(dir + "/device/metrics.jsonl", key);
    ASSERT_EQ(cpu.size(), other.size()) << key;
    ASSERT_GE(cpu.size(), (size_t)steps) << key;
    for (size_t i = 0; i < cpu.size(); ++i)
      EXPECT_NEAR(other[i], cpu[i], tolerance * std::fabs(cpu[i])) << key << ", step " << i + 1;
  }
}

TEST(DeviceCuda, TrainsToTheCpuLossesOnAGpu) {
  if (!cudaUnavailable().empty())
    GTEST_SKIP() << cudaUnavailable();
  // The attention runs in bf16 on the GPU: close to the f32 CPU run, not equal (the losses;
  // the gradients' norms of bf16 products are not held to 2%).
  expectTheCpuLosses(kModel + kOneHead, "cuda", 40, 2e-2, /*gradNorms=*/false);
}

// `--device cuda-on-cpu`: the compiler's generated GPU kernels run as CPU loops. A whole
// `attnc train` run, as a user starts it, gives the CPU run's losses, on any machine.
TEST(DeviceCudaOnCpu, TrainsToTheCpuLosses) { expectTheCpuLosses(kModel, "cuda-on-cpu", 6, 1e-5); }

// Every model's training program: its generated kernels compile to PTX for sm_90 (through
// LLVM's NVPTX backend: no CUDA toolkit needed), one module per kernel, calling no libdevice
// function. Where the toolkit is, ptxas assembles every module of five models that
// between them hold every kind of loop the importer makes (recurrent layers with masks,
// attention with layer norm and the optimizer, convolutions with GLU) and the generated
// attention kernels (an additive score with a capture and read weights; a local window with
// its Gaussian): ptxas takes about 10 ms a module, and the 33 models have 17,000.
class GeneratedKernels : public ::testing::TestWithParam<std::string> {};

// A data file models/NAME.yaml reads that is not there ("" when all are): corpora/ is built
// by scripts (scripts/po-corpus.sh), not kept in the repository.
std::string missingDataFile(const std::string &name) {
  const std::string models = std::string(ATTN_SOURCE_DIR) + "/models/";
  std::ifstream spec(models + name + ".yaml");
  for (std::string line; std::getline(spec, line);) {
    auto at = line.find("path: ");
    if (at == std::string::npos || line.find('#') < at)
      continue;
    std::string file = line.substr(at + 6);
    file = file.substr(0, file.find_first_of(" #"));
    if (!std::filesystem::exists(models + file))
      return file;
  }
  return "";
}

TEST_P(GeneratedKernels, CompileToPtx) {
  if (std::string file = missingDataFile(GetParam()); !file.empty())
    GTEST_SKIP() << "its data " << file << " is not here (scripts/po-corpus.sh builds it)";
  std::string dir = e2e::scratch("device-ptx", GetParam()), out;
  std::string ptx = dir + "/kernels.ptx";
  ASSERT_EQ(e2e::attnc("emit --stage=ptx --train " + std::string(ATTN_SOURCE_DIR) + "/models/" +
                           GetParam() + ".yaml -o " + ptx,
                       &out),
            0)
      << out;
  // One file per module, as ptxas takes them.
  std::ifstream in(ptx);
  std::vector<std::string> modules;
  int entries = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("// kernel module @", 0) == 0)
      modules.push_back("");
    ASSERT_FALSE(modules.empty()) << "PTX before the first module header: " << line;
    modules.back() += line + "\n";
    entries += line.rfind(".visible .entry ", 0) == 0;
    EXPECT_EQ(line.find("__nv_"), std::string::npos) << "a libdevice call: " << line;
  }
  ASSERT_GT(modules.size(), 0u);
  EXPECT_EQ(entries, (int)modules.size());
  EXPECT_NE(modules.front().find(".target sm_90"), std::string::npos) << modules.front();

  static const std::set<std::string> kAssembled = {"pos-tagger", "majority-transformer",
                                                   "dates-convs2s", "dates-bahdanau",
                                                   "dates-local-predictive"};
  if (std::string(ATTN_PTXAS).empty() || !kAssembled.count(GetParam()))
    return;
  for (size_t m = 0; m < modules.size(); ++m) {
    std::string file = dir + "/k" + std::to_string(m) + ".ptx";
    std::ofstream(file) << modules[m];
    out.clear();
    ASSERT_EQ(e2e::shell(std::string(ATTN_PTXAS) + " -arch=sm_90 " + file + " -o /dev/null", &out),
              0)
        << out << modules[m];
    std::filesystem::remove(file);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GeneratedKernels, ::testing::ValuesIn(attn::testing::modelNames()),
                         [](const auto &info) { return attn::testing::testName(info.param); });

} // namespace
