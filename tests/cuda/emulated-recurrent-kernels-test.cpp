// The GPU kernels of one recurrent step's gates (runtime/cuda/RecurrentKernels.cuh) compiled as
// C++ over WarpEmulator.h, launched with the grids recurrent_kernels.cu uses, against the
// cells' definitions in double and their central differences (RecurrentReference.h); then the
// sequence loop (RecurrentSequence.h) over the same emulated kernels and host GEMMs, against
// the layers' forward over time and its central differences. Runs in CI, where there is no
// GPU; recurrent-kernels-test.cpp runs the same cases on one.
#include "WarpEmulator.h"
// After the emulator: the kernels use its blockIdx, threadIdx and gridDim (and the train
// kernels' sumChunks, behind attn::cuda::sumRows, its primitives).
#include "../../runtime/cuda/RecurrentKernels.cuh"
#include "../../runtime/cuda/TrainKernels.cuh"
// The sequence loop, over HostBackend below instead of the GPU's.
#include "../../runtime/cuda/RecurrentSequence.h"

#include "RecurrentReference.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using namespace attn::cuda::testing;
using attn::cuda::emulator::Dim3;
using attn::cuda::emulator::launch;
namespace k = attn::cuda::recurrent;

std::vector<float> poisoned(size_t n) {
  std::vector<float> v(n);
  std::memset(v.data(), 0xff, n * sizeof(float)); // NaN
  return v;
}

// kernel over a step's B x H elements, with recurrent_kernels.cu's grid.
template <typename Kernel, typename... Args>
void step(int64_t B, int64_t H, Kernel kernel, Args... args) {
  launch(Dim3{k::elementBlocks(B * H), 1, 1}, 0, kernel, B, H, args...);
}

CellOutputs run(const CellProblem &p) {
  const int64_t B = p.c.batch, H = p.c.hidden;
  const Tensors &in = p.in;
  auto x = [&](const char *name) { return in.at(name).data(); };
  CellOutputs out;
  std::vector<float> &h = out["h"] = poisoned(B * H);
  switch (p.c.cell) {
  case Cell::Rnn: {
    std::vector<float> gates = poisoned(B * H);
    step(B, H, k::rnnForward, x("z"), gates.data(), h.data());
    std::vector<float> &dz = out["dz"] = poisoned(B * H);
    step(B, H, k::rnnBackward, static_cast<const float *>(gates.data()), x("dh"), dz.data());
    break;
  }
  case Cell::Lstm:
  case Cell::LstmPeephole: {
    const float *peep = p.c.cell == Cell::LstmPeephole ? x("peephole") : nullptr;
    std::vector<float> gates = poisoned(B * 4 * H), rows = poisoned(B * 3 * H);
    std::vector<float> &c = out["c"] = poisoned(B * H);
    step(B, H, k::lstmForward, x("z"), x("cPrev"), peep, gates.data(), c.data(), h.data());
    std::vector<float> &dz = out["dz"] = poisoned(B * 4 * H);
    std::vector<float> &dcPrev = out["dcPrev"] = poisoned(B * H);
    step(B, H, k::lstmBackward, static_cast<const float *>(gates.data()), x("cPrev"),
         static_cast<const float *>(c.data()), peep, x("dh"), x("dcNext"), dz.data(),
         dcPrev.data(), peep ? rows.data() : nullptr);
    if (peep) {
      std::vector<float> &dpeep = out["dpeephole"] = poisoned(3 * H);
      launch(Dim3{attn::cuda::train::columnBlocks(3 * H), 1, 1}, 0, attn::cuda::train::sumChunks,
             B, 3 * H, static_cast<const float *>(rows.data()), dpeep.data());
    }
    break;
  }
  case Cell::Gru: {
    std::vector<float> gates = poisoned(B * 4 * H);
    step(B, H, k::gruForward, x("a"), x("bh"), x("hPrev"), gates.data(), h.data());
    std::vector<float> &da = out["da"] = poisoned(B * 3 * H);
    std::vector<float> &dbh = out["dbh"] = poisoned(B * 3 * H);
    std::vector<float> &dhPrev = out["dhPrev"] = poisoned(B * H);
    step(B, H, k::gruBackward, static_cast<const float *>(gates.data()), x("hPrev"), x("dh"),
         da.data(), dbh.data(), dhPrev.data());
    break;
  }
  case Cell::GruMinimal: {
    std::vector<float> gates = poisoned(B * 2 * H);
    step(B, H, k::gruMinimalForward, x("a"), x("bh"), x("hPrev"), gates.data(), h.data());
    std::vector<float> &dz = out["dz"] = poisoned(B * 2 * H);
    std::vector<float> &dhPrev = out["dhPrev"] = poisoned(B * H);
    step(B, H, k::gruMinimalBackward, static_cast<const float *>(gates.data()), x("hPrev"),
         x("dh"), dz.data(), dhPrev.data());
    break;
  }
  case Cell::GruSeed: {
    // The GEMMs between the kernels: hostGemm in place of cuBLASLt.
    std::vector<float> gates = poisoned(B * 3 * H), rh = poisoned(B * H);
    step(B, H, k::gruSeedGates, x("a"), x("bur"), x("hPrev"), gates.data(), rh.data());
    const std::vector<float> bc = hostGemm(rh, false, in.at("whc"), false, B, H, H, &in.at("bhc"));
    step(B, H, k::gruSeedOutput, x("a"), bc.data(), x("hPrev"), gates.data(), h.data());
    std::vector<float> &da = out["da"] = poisoned(B * 3 * H);
    std::vector<float> &dhPrev = out["dhPrev"] = poisoned(B * H);
    step(B, H, k::gruSeedOutputBackward, static_cast<const float *>(gates.data()), x("hPrev"),
         x("dh"), da.data(), dhPrev.data());
    std::vector<float> dac(B * H);
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(da.data() + b * 3 * H + 2 * H, H, dac.data() + b * H);
    const std::vector<float> drh = hostGemm(dac, false, in.at("whc"), true, B, H, H);
    step(B, H, k::gruSeedGatesBackward, static_cast<const float *>(gates.data()), x("hPrev"),
         drh.data(), da.data(), dhPrev.data());
    out["dwhc"] = hostGemm(rh, true, dac, false, H, B, H);
    break;
  }
  }
  return out;
}

// RecurrentSequence.h's Backend on the CPU: the step kernels on the emulator, GEMMs as loops.
struct HostBackend {
  std::vector<std::vector<float>> buffers;
  using Status = attn::cuda::Status;

  float *scratch(size_t n) {
    buffers.push_back(poisoned(n));
    return buffers.back().data();
  }
  Status gemm(int64_t m, int64_t n, int64_t k, bool transA, bool transB, const float *a,
              const float *b, float *c, const float *bias) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = bias ? bias[j] : 0.0f;
        for (int64_t l = 0; l < k; ++l)
          sum += (transA ? a[l * m + i] : a[i * k + l]) * (transB ? b[j * k + l] : b[l * n + j]);
        c[i * n + j] = sum;
      }
    return {};
  }
  Status add(int64_t n, const float *a, const float *b, float *out) {
    launch(Dim3{k::elementBlocks(n), 1, 1}, 0, k::addElements, n, a, b, out);
    return {};
  }
  Status copy(int64_t n, const float *from, float *to) {
    std::memcpy(to, from, size_t(n) * sizeof(float));
    return {};
  }
  Status reorder(int64_t B, int64_t T, int64_t C, bool reverse, bool toSteps, const float *in,
                 float *out) {
    launch(Dim3{k::elementBlocks(B * T * C), 1, 1}, 0, k::reorderSteps, B, T, C, int(reverse),
           int(toSteps), in, out);
    return {};
  }
  Status blend(int64_t B, int64_t H, const float *m, const float *prev, const float *next,
               float *out) {
    step(B, H, k::blendMasked, m, prev, next, out);
    return {};
  }
  Status split(int64_t B, int64_t H, const float *m, const float *d, float *dCell,
               float *dPrev) {
    step(B, H, k::splitMasked, m, d, dCell, dPrev);
    return {};
  }
  Status sumRows(int64_t rows, int64_t cols, const float *in, float *out) {
    launch(Dim3{attn::cuda::train::columnBlocks(cols), 1, 1}, 0, attn::cuda::train::sumChunks,
           rows, cols, in, out);
    return {};
  }
  template <typename... Args> Status rnnForward(int64_t B, int64_t H, Args... args) {
    step(B, H, k::rnnForward, args...);
    return {};
  }
  template <typename... Args> Status rnnBackward(int64_t B, int64_t H, Args... args) {
    step(B, H, k::rnnBackward, args...);
    return {};
  }
  template <typename... Args> Status lstmForward(int64_t B, int64_t H, Args... args) {
    step(B, H, k::lstmForward, args...);
    return {};
  }
  template <typename... Args> Status lstmBackward(int64_t B, int64_t H, Args... args) {
    step(B, H, k::lstmBackward, args...);
    return {};
  }
  template <typename... Args> Status gruForward(int64_t B, int64_t H, Args... args) {
    step(B, H, k::gruForward, args...);
    return {};
  }
  template <typename... Args> Status gruBackward(int64_t B, int64_t H, Args... args) {
    step(B, H, k::gruBackward, args...);
    return {};
  }
};

class EmulatedRecurrentSequence : public ::testing::TestWithParam<SequenceCase> {};

TEST_P(EmulatedRecurrentSequence, MatchesTheLayer) {
  using namespace attn::cuda;
  std::mt19937 rng(11);
  const SequenceProblem p = makeSequenceProblem(GetParam(), rng);
  const SequenceCase &c = p.c;
  const bool lstm = c.cell == RecurrentCell::Lstm;
  const int64_t B = c.batch, T = c.steps, I = c.input, H = c.hidden, R = c.state(),
                G = gatesOf(c.cell, H);
  const RecurrentShape shape{B, T, I, H, c.reverse, c.projection};
  auto in = [&](const char *name) { return p.in.count(name) ? p.in.at(name).data() : nullptr; };
  const RecurrentWeights w{in("wIh"), in("wHh"), in("bIh"), in("bHh"), in("peephole"), in("wProj")};
  Tensors got;
  got["outputs"] = poisoned(B * T * R);
  got["hn"] = poisoned(B * R);
  std::vector<float> cn = poisoned(B * H);
  HostBackend be;
  sequence::Trace trace;
  ASSERT_TRUE(sequence::forward(be, shape, c.cell, w, in("x"), in("h0"), in("c0"), in("mask"),
                                got["outputs"].data(), got["hn"].data(), cn.data(), trace)
                  .ok());
  if (lstm)
    got["cn"] = cn;
  for (auto [name, n] : std::initializer_list<std::pair<const char *, int64_t>>{
           {"dx", B * T * I}, {"dh0", B * R}, {"dwIh", I * G}, {"dwHh", R * G}, {"dbIh", G}})
    got[name] = poisoned(n);
  if (lstm)
    got["dc0"] = poisoned(B * H);
  if (c.cell == RecurrentCell::Gru)
    got["dbHh"] = poisoned(G);
  if (c.peephole)
    got["dpeephole"] = poisoned(3 * H);
  if (c.projection)
    got["dwProj"] = poisoned(H * R);
  auto out = [&](const char *name) { return got.count(name) ? got[name].data() : nullptr; };
  const RecurrentGradients d{out("dx"),   out("dh0"),  out("dc0"),       out("dwIh"),  out("dwHh"),
                             out("dbIh"), out("dbHh"), out("dpeephole"), out("dwProj")};
  ASSERT_TRUE(sequence::backward(be, shape, c.cell, w, in("x"), in("h0"), in("c0"), in("mask"),
                                 in("dOutputs"), in("dhn"), in("dcn"), d)
                  .ok());
  for (const std::string &f : compare(p, got))
    ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Conformance, EmulatedRecurrentSequence,
                         ::testing::ValuesIn(sequenceCases()),
                         [](const ::testing::TestParamInfo<SequenceCase> &info) {
                           std::string name;
                           for (const char *ch = info.param.name; *ch; ++ch)
                             name += std::isalnum(static_cast<unsigned char>(*ch)) ? *ch : '_';
                           return name;
                         });

class EmulatedRecurrentCell : public ::testing::TestWithParam<CellCase> {};

TEST_P(EmulatedRecurrentCell, MatchesTheDefinition) {
  std::mt19937 rng(10);
  const CellProblem p = makeCellProblem(GetParam(), rng);
  for (const std::string &f : compare(p, run(p)))
    ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Conformance, EmulatedRecurrentCell, ::testing::ValuesIn(cellCases()),
                         [](const ::testing::TestParamInfo<CellCase> &info) {
                           std::string name;
                           for (const char *ch = info.param.name; *ch; ++ch)
                             name += std::isalnum(static_cast<unsigned char>(*ch)) ? *ch : '_';
                           return name;
                         });

} // namespace
