// The GPU kernels of one recurrent step's gates (runtime/cuda/RecurrentKernels.cuh) compiled as
// C++ over WarpEmulator.h, launched with the grids recurrent_kernels.cu uses, against the
// cells' definitions in double and their central differences (RecurrentReference.h). Runs in
// CI, where there is no GPU; recurrent-kernels-test.cpp runs the same cases on one.
#include "WarpEmulator.h"
// After the emulator: the kernels use its blockIdx, threadIdx and gridDim (and the train
// kernels' sumChunks, behind attn::cuda::sumRows, its primitives).
#include "../../runtime/cuda/RecurrentKernels.cuh"
#include "../../runtime/cuda/TrainKernels.cuh"

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
